-- Across rounds (derived): results re-published from an earlier round, and time-to-train trends at equal scale.
create table if not exists carried_over (
    round            varchar not null,
    submitter        varchar not null,
    system           varchar not null,
    benchmark        varchar not null,
    is_carried_over  boolean not null,  -- every log already published in an earlier round
    n_copied_logs    bigint not null,   -- logs byte-identical to, or recording the same run as, an earlier round's
    primary key (round, submitter, system, benchmark)
);

create table if not exists round_trends (
    benchmark_canonical  varchar not null,
    accelerator_family   varchar not null,
    accelerators         bigint not null,
    round                varchar not null,
    round_order          bigint not null,
    n_systems            bigint not null,   -- fresh results only: carried-over ones are counted once, in their first round
    best_time_min        double not null,
    best_system          varchar not null,
    median_time_min      double not null,
    speedup_vs_first     double not null,   -- best time in the first round of this series / best time in this round
    first_round          varchar not null,
    n_carried_over       bigint not null,
    primary key (benchmark_canonical, accelerator_family, accelerators, round)
);
