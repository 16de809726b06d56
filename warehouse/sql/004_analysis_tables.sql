-- Derived scaling metrics, rebuilt per round by the analysis step. Not official MLPerf results.

create table if not exists efficiency (
    round                              varchar not null,
    benchmark                          varchar not null,
    benchmark_canonical                varchar not null,
    submitter                          varchar not null,
    system                             varchar not null,
    system_name                        varchar,
    availability                       varchar,
    accelerator_model_name             varchar,
    accelerator_model                  varchar not null, -- model name normalised for grouping
    accelerators                       bigint not null,  -- N
    number_of_nodes                    bigint,
    time_to_train_min                  double not null,  -- T: the official (scaled) score
    accelerator_hours                  double not null,  -- T x N / 60
    is_complete                        boolean not null, -- false: scored from fewer logs than required
    reference_system                   varchar not null, -- submitter/system with fewest accelerators, then longest T
    reference_accelerators             bigint not null,  -- N_ref
    reference_time_min                 double not null,  -- T_ref
    is_reference                       boolean not null,
    speedup                            double not null,  -- T_ref / T
    ideal_speedup                      double not null,  -- N / N_ref
    efficiency                         double not null,  -- speedup / (N / N_ref); 1.0 is perfect scaling
    reference_system_same_model        varchar not null, -- the same, within one accelerator model
    reference_accelerators_same_model  bigint not null,
    is_reference_same_model            boolean not null,
    speedup_same_model                 double not null,
    efficiency_same_model              double not null,
    is_pareto                          boolean not null, -- not beaten on both time and accelerator-hours
    primary key (round, benchmark, submitter, system)
);

create table if not exists clusters (
    round       varchar not null,
    benchmark   varchar not null,
    submitter   varchar not null,
    system      varchar not null,
    cluster     bigint not null,  -- 0 = the cluster of the smallest systems
    k           bigint not null,  -- clusters chosen for the benchmark by silhouette over 2..6
    silhouette  double,           -- null when there were too few systems to cluster
    note        varchar,
    primary key (round, benchmark, submitter, system)
);

create table if not exists analysis_exclusions (
    round      varchar not null,
    benchmark  varchar not null,
    submitter  varchar not null,
    system     varchar not null,
    reason     varchar not null   -- why a score row is not in `efficiency`
);
