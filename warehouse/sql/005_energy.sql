-- Energy to train, from the power logs of the rounds that have them (v4.0 on), per valid run.
create table if not exists energy (
    round              varchar not null,
    submitter          varchar not null,
    system             varchar not null,
    benchmark          varchar not null,
    file_name          varchar not null,  -- the result log the power logs belong to
    time_to_train_min  double not null,
    node_energy_j      double not null,   -- sum over node_*.txt: efficiency x integral of power, scaled to the run
    switch_energy_j    double not null,   -- sum over sw_*.txt: efficiency x interconnect power x time to train
    energy_j           double not null,
    n_node_logs        bigint not null,
    n_switch_logs      bigint not null,
    primary key (round, submitter, system, benchmark, file_name)
);

-- The energy score: olympic average of run energies in the order of run times, x scaling factor.
alter table scores add column if not exists energy_j double;
