-- Scaling-law fits per (round, benchmark, accelerator family); derived, not official MLPerf results.
create table if not exists scaling_fits (
    round                    varchar not null,
    benchmark                varchar not null,
    accelerator_family       varchar not null,
    model                    varchar not null,  -- amdahl: T(N) = T1 ((1 - p) + p / N); usl: X(N) = g N / (1 + a (N - 1) + b N (N - 1))
    status                   varchar not null,  -- fitted, or refused (too few distinct accelerator counts, no convergence)
    note                     varchar,           -- why a fitted value is not meaningful, where it is not
    n_points                 bigint not null,
    n_distinct_accelerators  bigint not null,
    min_accelerators         bigint not null,
    max_accelerators         bigint not null,
    t1_min                   double, t1_stderr double,   -- Amdahl: time on one accelerator
    p                        double, p_stderr double,    -- Amdahl: parallel fraction
    g                        double, g_stderr double,    -- USL: throughput of one accelerator (1/min)
    a                        double, a_stderr double,    -- USL: contention
    b                        double, b_stderr double,    -- USL: coherency
    n_star                   double,                     -- USL: accelerator count of peak throughput
    r2_log                   double,                     -- goodness of fit of log time
    rmse_log                 double,
    knee_50                  double,                     -- accelerators where predicted efficiency falls below 0.5
    knee_50_low              double, knee_50_high double,       -- 5-95% interval from parameter draws
    threshold                double,                     -- the user-chosen efficiency threshold
    knee_threshold           double, knee_threshold_low double, knee_threshold_high double,
    primary key (round, benchmark, accelerator_family, model)
);
