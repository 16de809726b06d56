-- Derived scaling metrics per (round, benchmark, system); not official MLPerf results.
create table if not exists efficiency (
    round                              varchar not null,
    benchmark                          varchar not null,
    benchmark_canonical                varchar not null,
    submitter                          varchar not null,
    system                             varchar not null,
    system_name                        varchar,
    availability                       varchar,
    accelerator_model_name             varchar,
    accelerator_model                  varchar not null,
    accelerator_vendor                 varchar,
    accelerator_family                 varchar,
    accelerator_family_inferred        boolean,
    accelerators                       bigint not null,
    number_of_nodes                    bigint,
    time_to_train_min                  double not null,
    accelerator_hours                  double not null,
    is_complete                        boolean not null,
    reference_system                   varchar not null,
    reference_accelerators             bigint not null,
    reference_time_min                 double not null,
    is_reference                       boolean not null,
    speedup                            double not null,
    ideal_speedup                      double not null,
    efficiency                         double not null,
    reference_system_same_model        varchar not null,
    reference_accelerators_same_model  bigint not null,
    is_reference_same_model            boolean not null,
    speedup_same_model                 double not null,
    efficiency_same_model              double not null,
    is_pareto                          boolean not null,
    energy_kj                          double,
    average_kw                         double,
    energy_kj_per_accelerator          double,
    is_pareto_energy                   boolean,
    primary key (round, benchmark, submitter, system)
);

comment on table efficiency is 'Derived scaling metrics per (round, benchmark, system); not official MLPerf results.';
comment on column efficiency.round is 'MLPerf round, e.g. v4.1';
comment on column efficiency.benchmark is 'benchmark folder name';
comment on column efficiency.benchmark_canonical is 'the same workload across rounds: ssd is ssd_resnet34 to v1.1 and retinanet from v2.0, mask is maskrcnn, gnn is rgat';
comment on column efficiency.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column efficiency.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column efficiency.system_name is 'system_name from the systems JSON';
comment on column efficiency.availability is 'normalised status: available on-premise, available cloud, available, preview, research';
comment on column efficiency.accelerator_model_name is 'as published';
comment on column efficiency.accelerator_model is 'model name normalised for grouping';
comment on column efficiency.accelerator_vendor is 'from accelerators.tsv (or the name patterns)';
comment on column efficiency.accelerator_family is 'true: a name not in accelerators.tsv, family read from accelerator_patterns.tsv';
comment on column efficiency.accelerator_family_inferred is 'true: a name not in accelerators.tsv, its family read from accelerator_patterns.tsv';
comment on column efficiency.accelerators is 'N';
comment on column efficiency.number_of_nodes is 'number_of_nodes from the systems JSON';
comment on column efficiency.time_to_train_min is 'T: the official (scaled) score';
comment on column efficiency.accelerator_hours is 'T x N / 60';
comment on column efficiency.is_complete is 'false: scored from fewer logs than required';
comment on column efficiency.reference_system is 'submitter/system with fewest accelerators, then longest T';
comment on column efficiency.reference_accelerators is 'N_ref';
comment on column efficiency.reference_time_min is 'T_ref';
comment on column efficiency.is_reference is 'this row is the reference system';
comment on column efficiency.speedup is 'T_ref / T';
comment on column efficiency.ideal_speedup is 'N / N_ref';
comment on column efficiency.efficiency is 'speedup / (N / N_ref); 1.0 is perfect scaling';
comment on column efficiency.reference_system_same_model is 'the same, within one accelerator model';
comment on column efficiency.reference_accelerators_same_model is 'N_ref within the accelerator model';
comment on column efficiency.is_reference_same_model is 'this row is the reference of its accelerator model';
comment on column efficiency.speedup_same_model is 'T_ref / T within the model';
comment on column efficiency.efficiency_same_model is 'speedup / (N / N_ref) within the model';
comment on column efficiency.is_pareto is 'not beaten on both time and accelerator-hours';
comment on column efficiency.energy_kj is 'energy to train, kJ';
comment on column efficiency.average_kw is 'energy / time to train';
comment on column efficiency.energy_kj_per_accelerator is 'energy_kj / N';
comment on column efficiency.is_pareto_energy is 'not beaten on both time and energy';
