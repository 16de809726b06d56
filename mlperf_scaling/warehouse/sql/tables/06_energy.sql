-- Energy to train per valid run, where power was measured (v4.0 on).
create table if not exists energy (
    round              varchar not null,
    submitter          varchar not null,
    system             varchar not null,
    benchmark          varchar not null,
    file_name          varchar not null,
    time_to_train_min  double not null,
    node_energy_j      double not null,
    switch_energy_j    double not null,
    energy_j           double not null,
    n_node_logs        bigint not null,
    n_switch_logs      bigint not null,
    primary key (round, submitter, system, benchmark, file_name)
);

comment on table energy is 'Energy to train per valid run, where power was measured (v4.0 on).';
comment on column energy.round is 'MLPerf round, e.g. v4.1';
comment on column energy.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column energy.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column energy.benchmark is 'benchmark folder name';
comment on column energy.file_name is 'the result log the power logs belong to';
comment on column energy.time_to_train_min is 'the run''s time to train';
comment on column energy.node_energy_j is 'sum over node_*.txt: efficiency x integral of power, scaled to the run';
comment on column energy.switch_energy_j is 'sum over sw_*.txt: efficiency x interconnect power x time to train';
comment on column energy.energy_j is 'node + switch energy of the run, joules';
comment on column energy.n_node_logs is 'node_*.txt power logs of the run';
comment on column energy.n_switch_logs is 'sw_*.txt power logs of the run';
