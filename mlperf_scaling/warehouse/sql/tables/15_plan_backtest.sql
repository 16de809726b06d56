-- How well the planner predicts: each measured accelerator count of a group with four counts or more, left out in
-- turn (with every system that measured it) and its best time predicted from the other counts, by each model, with the
-- stated 90 % interval and whether it held; derived, not official.
create table if not exists plan_backtest (
    round               varchar not null,
    benchmark           varchar not null,
    accelerator_group   varchar not null,
    accelerators        bigint not null,
    model               varchar not null,
    measured_min        double not null,
    predicted_min       double not null,
    predicted_low_min   double,
    predicted_high_min  double,
    error_pct           double not null,
    beyond_ratio        double not null,
    extrapolated        boolean not null,
    covered             boolean,
    primary key (round, benchmark, accelerator_group, accelerators, model)
);

comment on table plan_backtest is 'How well the planner predicts: each measured accelerator count of a group with four counts or more, left out in turn (with every system that measured it) and its best time predicted from the other counts, by each model, with the stated 90 % interval and whether it held; derived, not official MLPerf results.';
comment on column plan_backtest.round is 'MLPerf round, e.g. v4.1';
comment on column plan_backtest.benchmark is 'benchmark folder';
comment on column plan_backtest.accelerator_group is 'comparable accelerator group, e.g. H100-SXM';
comment on column plan_backtest.accelerators is 'the count left out and predicted';
comment on column plan_backtest.model is 'amdahl (Amdahl''s law fitted to the group''s systems, anchored to the best measured times) or two-part (seconds per sample x samples to converge at the batch N implies, anchored alike)';
comment on column plan_backtest.measured_min is 'the best official time measured at that count: the quantity predicted';
comment on column plan_backtest.predicted_min is 'predicted from the other counts';
comment on column plan_backtest.predicted_low_min is 'low end of the stated 90 % interval (calibrated on the backtests of the other rounds); null: the model has no calibration';
comment on column plan_backtest.predicted_high_min is 'high end of the stated 90 % interval';
comment on column plan_backtest.error_pct is '100 x (predicted - measured) / measured';
comment on column plan_backtest.beyond_ratio is 'how far outside the remaining counts: count / largest, or smallest / count; 1 between them';
comment on column plan_backtest.extrapolated is 'the count left out is the smallest or largest: predicted beyond the others';
comment on column plan_backtest.covered is 'the stated interval held the measured time; null without an interval';
