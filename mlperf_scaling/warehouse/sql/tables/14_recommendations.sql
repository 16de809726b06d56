-- How many accelerators, per (round, benchmark, comparable accelerator group): the planner's answer with no deadline,
-- measured evidence first; derived, not official MLPerf results.
create table if not exists recommendations (
    round                        varchar not null,
    round_order                  bigint not null,
    benchmark                    varchar not null,
    benchmark_canonical          varchar not null,
    workload                     varchar not null,
    accelerator_group            varchar not null,
    basis                        varchar not null,
    threshold                    double not null,
    n_systems                    bigint not null,
    n_distinct_accelerators      bigint not null,
    reference_accelerators       bigint not null,
    reference_time_min           double not null,
    reference_system             varchar not null,
    max_measured_accelerators    bigint not null,
    accelerators                 bigint not null,
    time_min                     double not null,
    time_min_low                 double,
    time_min_high                double,
    n_systems_at                 bigint,
    best_system                  varchar,
    slowest_system_min           double,
    fastest_run_min              double,
    slowest_run_min              double,
    efficiency                   double not null,
    efficiency_low               double,
    efficiency_high              double,
    accelerator_hours            double not null,
    next_accelerators            bigint,
    next_basis                   varchar,
    next_time_min                double,
    next_time_min_low            double,
    next_time_min_high           double,
    time_saved_min               double,
    extra_accelerator_hours_pct  double,
    next_is_extrapolated         boolean,
    knee                         double,
    knee_low                     double,
    knee_high                    double,
    model                        varchar,
    backtest_median_error_pct    double,
    backtest_counts              bigint,
    backtest_covered             bigint,
    warning                      varchar,
    reason                       varchar not null,
    sentence                     varchar not null,
    primary key (round, benchmark, accelerator_group)
);

comment on table recommendations is 'How many accelerators, per (round, benchmark, comparable accelerator group): the planner''s answer with no deadline, measured evidence first; derived, not official MLPerf results.';
comment on column recommendations.round is 'MLPerf round, e.g. v4.1';
comment on column recommendations.round_order is 'the round''s place in publication order (major x 100 + minor: v4.1 = 401), to sort and pick the latest';
comment on column recommendations.benchmark is 'benchmark folder name';
comment on column recommendations.benchmark_canonical is 'the benchmark''s name across rounds, e.g. ssd and retinanet stay apart, maskrcnn is one';
comment on column recommendations.workload is 'the workload in words, e.g. RetinaNet object detection';
comment on column recommendations.accelerator_group is 'comparable accelerator group: one model and form factor, e.g. H100-SXM';
comment on column recommendations.basis is 'measured (the count was measured: every time quoted is the measurement) or predicted (nobody measured it)';
comment on column recommendations.threshold is 'efficiency threshold: the largest measured count whose measured efficiency is still at least this is recommended';
comment on column recommendations.n_systems is 'systems of the group in this round and benchmark';
comment on column recommendations.n_distinct_accelerators is 'distinct accelerator counts measured';
comment on column recommendations.reference_accelerators is 'the group''s smallest count: the efficiency reference';
comment on column recommendations.reference_time_min is 'the best official time at the smallest count: the efficiency reference';
comment on column recommendations.reference_system is 'submitter/system of that best time';
comment on column recommendations.max_measured_accelerators is 'the largest accelerator count measured';
comment on column recommendations.accelerators is 'the recommended accelerator count';
comment on column recommendations.time_min is 'measured: the best official time at that count; predicted: the predicted best time';
comment on column recommendations.time_min_low is 'predicted only: low end of the 90 % interval (calibrated on the backtest); null when measured';
comment on column recommendations.time_min_high is 'predicted only: high end of the 90 % interval';
comment on column recommendations.n_systems_at is 'measured: systems measured at that count';
comment on column recommendations.best_system is 'measured: submitter/system of the best time there';
comment on column recommendations.slowest_system_min is 'measured: the slowest system''s official time there (the spread over systems)';
comment on column recommendations.fastest_run_min is 'measured: the best system''s fastest valid run, scaled (the spread over runs)';
comment on column recommendations.slowest_run_min is 'measured: the best system''s slowest valid run, scaled';
comment on column recommendations.efficiency is 'efficiency at that count: reference_time_min x reference_accelerators / (time_min x accelerators), as in every table';
comment on column recommendations.efficiency_low is 'predicted only: efficiency at the interval''s high end of time';
comment on column recommendations.efficiency_high is 'predicted only: efficiency at the interval''s low end of time';
comment on column recommendations.accelerator_hours is 'accelerators x time_min, in hours';
comment on column recommendations.next_accelerators is 'the next step: twice the count (the next measured count where nothing can be predicted); null: none';
comment on column recommendations.next_basis is 'measured or predicted: how the next step''s time is known';
comment on column recommendations.next_time_min is 'time to train at the next step';
comment on column recommendations.next_time_min_low is 'predicted next step: low end of its 90 % interval';
comment on column recommendations.next_time_min_high is 'predicted next step: high end of its 90 % interval';
comment on column recommendations.time_saved_min is 'minutes the next step saves (negative: it is slower)';
comment on column recommendations.extra_accelerator_hours_pct is 'accelerator-hours the next step adds, in percent';
comment on column recommendations.next_is_extrapolated is 'the next step lies beyond the largest count measured';
comment on column recommendations.knee is 'accelerators where the efficiency (measured where measured, predicted between and beyond) first falls below the threshold; null: not within 16x the largest count, or no model';
comment on column recommendations.knee_low is 'the knee at the interval''s slow end';
comment on column recommendations.knee_high is 'the knee at the interval''s fast end; null: not within reach';
comment on column recommendations.model is 'the model predictions come from (amdahl); null: fewer than 3 counts measured';
comment on column recommendations.backtest_median_error_pct is 'the group''s backtest: median |error| of its measured counts, each left out and predicted from the others; null: fewer than 4 counts';
comment on column recommendations.backtest_counts is 'counts in that backtest';
comment on column recommendations.backtest_covered is 'backtest cases whose stated 90 % interval held the measured time';
comment on column recommendations.warning is 'what to be wary of: a group predicted worse than 15 % in its backtest, or a prediction beyond twice the counts measured, and what measurement would settle it';
comment on column recommendations.reason is 'why this count, in words';
comment on column recommendations.sentence is 'the recommendation in one sentence';
