-- Amdahl and USL fits per (round, benchmark, comparable accelerator group); derived, not official MLPerf results.
create table if not exists scaling_fits (
    round                    varchar not null,
    benchmark                varchar not null,
    accelerator_group        varchar not null,
    model                    varchar not null,
    status                   varchar not null,
    note                     varchar,
    n_points                 bigint not null,
    n_distinct_accelerators  bigint not null,
    min_accelerators         bigint not null,
    max_accelerators         bigint not null,
    n_bootstrap              bigint,
    t1_min                   double,
    t1_stderr                double,
    p                        double,
    p_stderr                 double,
    g                        double,
    g_stderr                 double,
    a                        double,
    a_stderr                 double,
    b                        double,
    b_stderr                 double,
    n_star                   double,
    r2_log                   double,
    rmse_log                 double,
    knee_50                  double,
    knee_50_low              double,
    knee_50_high             double,
    threshold                double not null,
    knee_threshold           double,
    knee_threshold_low       double,
    knee_threshold_high      double,
    primary key (round, benchmark, accelerator_group, model)
);

comment on table scaling_fits is 'Amdahl and USL fits per (round, benchmark, comparable accelerator group); derived, not official MLPerf results.';
comment on column scaling_fits.round is 'MLPerf round, e.g. v4.1';
comment on column scaling_fits.benchmark is 'benchmark folder name';
comment on column scaling_fits.accelerator_group is 'the comparable accelerator group (one model and form factor) the fit is within';
comment on column scaling_fits.model is 'amdahl: T(N) = T1 ((1 - p) + p / N); usl: X(N) = g N / (1 + a (N - 1) + b N (N - 1))';
comment on column scaling_fits.status is 'fitted, or refused (too few distinct accelerator counts, no convergence)';
comment on column scaling_fits.note is 'why a fitted value is not meaningful, where it is not';
comment on column scaling_fits.n_points is 'systems in the fit';
comment on column scaling_fits.n_distinct_accelerators is 'distinct accelerator counts';
comment on column scaling_fits.min_accelerators is 'smallest N';
comment on column scaling_fits.max_accelerators is 'largest N';
comment on column scaling_fits.n_bootstrap is 'Amdahl: bootstrap resamples (of 1,000, seeded) that could be fitted';
comment on column scaling_fits.t1_min is 'Amdahl: time on one accelerator';
comment on column scaling_fits.t1_stderr is 'Amdahl: bootstrap standard error of t1_min';
comment on column scaling_fits.p is 'Amdahl: parallel fraction';
comment on column scaling_fits.p_stderr is 'Amdahl: bootstrap standard error of p';
comment on column scaling_fits.g is 'USL: throughput of one accelerator (1/min)';
comment on column scaling_fits.g_stderr is 'USL: standard error of g (curve_fit covariance)';
comment on column scaling_fits.a is 'USL: contention';
comment on column scaling_fits.a_stderr is 'USL: standard error of a (curve_fit covariance)';
comment on column scaling_fits.b is 'USL: coherency';
comment on column scaling_fits.b_stderr is 'USL: standard error of b (curve_fit covariance)';
comment on column scaling_fits.n_star is 'USL: accelerator count of peak throughput; null when the peak lies far beyond the counts measured (the note says so)';
comment on column scaling_fits.r2_log is 'goodness of fit of log time';
comment on column scaling_fits.rmse_log is 'root mean square error of log time';
comment on column scaling_fits.knee_50 is 'accelerators where predicted efficiency against the group''s smallest configuration falls below 0.5; null: it never does in this fit';
comment on column scaling_fits.knee_50_low is 'Amdahl: 5th percentile over the bootstrap over systems';
comment on column scaling_fits.knee_50_high is 'Amdahl: 95th percentile over the bootstrap; null: unbounded (some resamples show no knee)';
comment on column scaling_fits.threshold is 'the user-chosen efficiency threshold';
comment on column scaling_fits.knee_threshold is 'accelerators where predicted efficiency falls below the threshold';
comment on column scaling_fits.knee_threshold_low is '5% bound';
comment on column scaling_fits.knee_threshold_high is '95% bound';
