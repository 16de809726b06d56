-- How many accelerators, per (round, benchmark, comparable accelerator group): the planner's answer with no deadline; derived, not official MLPerf results.
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
    max_measured_accelerators    bigint not null,
    accelerators                 bigint not null,
    time_min                     double not null,
    time_min_low                 double,
    time_min_high                double,
    efficiency                   double not null,
    efficiency_low               double,
    efficiency_high              double,
    measured_time_min            double not null,
    accelerator_hours            double not null,
    next_accelerators            bigint,
    next_time_min                double,
    time_saved_min               double,
    extra_accelerator_hours_pct  double,
    next_is_extrapolated         boolean,
    knee                         double,
    knee_low                     double,
    knee_high                    double,
    reason                       varchar not null,
    sentence                     varchar not null,
    primary key (round, benchmark, accelerator_group)
);

comment on table recommendations is 'How many accelerators, per (round, benchmark, comparable accelerator group): the planner''s answer with no deadline; derived, not official MLPerf results.';
comment on column recommendations.round is 'MLPerf round, e.g. v4.1';
comment on column recommendations.round_order is 'the round''s place in publication order (major x 100 + minor: v4.1 = 401), to sort and pick the latest';
comment on column recommendations.benchmark is 'benchmark folder name';
comment on column recommendations.benchmark_canonical is 'the benchmark''s name across rounds, e.g. ssd and retinanet stay apart, maskrcnn is one';
comment on column recommendations.workload is 'the workload in words, e.g. RetinaNet object detection';
comment on column recommendations.accelerator_group is 'comparable accelerator group: one model and form factor, e.g. H100-SXM';
comment on column recommendations.basis is 'amdahl fit (at least 3 distinct accelerator counts, bootstrap interval) or measured (the times alone)';
comment on column recommendations.threshold is 'efficiency threshold: the largest measured count still at least this efficient is recommended';
comment on column recommendations.n_systems is 'systems of the group in this round and benchmark';
comment on column recommendations.n_distinct_accelerators is 'distinct accelerator counts measured';
comment on column recommendations.reference_accelerators is 'accelerators of the group''s smallest configuration, the efficiency reference';
comment on column recommendations.max_measured_accelerators is 'the largest accelerator count measured';
comment on column recommendations.accelerators is 'the recommended accelerator count (a measured one)';
comment on column recommendations.time_min is 'predicted time to train at that count (the fit), or the best measured time';
comment on column recommendations.time_min_low is 'amdahl fit: 5th percentile of the time over the bootstrap over systems';
comment on column recommendations.time_min_high is 'amdahl fit: 95th percentile of the time';
comment on column recommendations.efficiency is 'efficiency at that count against the group''s smallest configuration';
comment on column recommendations.efficiency_low is 'amdahl fit: 5th percentile of the efficiency over the bootstrap';
comment on column recommendations.efficiency_high is 'amdahl fit: 95th percentile of the efficiency';
comment on column recommendations.measured_time_min is 'the best time measured at that count';
comment on column recommendations.accelerator_hours is 'accelerators x time_min, in hours';
comment on column recommendations.next_accelerators is 'the next step: twice the count under a fit, the next measured count otherwise; null: none';
comment on column recommendations.next_time_min is 'time to train at the next step';
comment on column recommendations.time_saved_min is 'minutes the next step saves (negative: it is slower)';
comment on column recommendations.extra_accelerator_hours_pct is 'accelerator-hours the next step adds, in percent';
comment on column recommendations.next_is_extrapolated is 'the next step lies beyond the largest count measured';
comment on column recommendations.knee is 'amdahl fit: accelerators where predicted efficiency falls below the threshold; null: never, or no fit';
comment on column recommendations.knee_low is '5th percentile of the knee over the bootstrap';
comment on column recommendations.knee_high is '95th percentile of the knee; null: unbounded';
comment on column recommendations.reason is 'why this count, in words';
comment on column recommendations.sentence is 'the recommendation in one sentence';
