-- How well the planner predicts: each measured accelerator count of a group with four counts or more, left out in
-- turn and predicted from the others, by the two-part model and by the Amdahl fit on time; derived, not official.
create table if not exists plan_backtest (
    round               varchar not null,
    benchmark           varchar not null,
    accelerator_group   varchar not null,
    accelerators        bigint not null,
    model               varchar not null,
    measured_min        double not null,
    predicted_min       double,
    predicted_low_min   double,
    predicted_high_min  double,
    error_pct           double,
    extrapolated        boolean not null,
    primary key (round, benchmark, accelerator_group, accelerators, model)
);

comment on table plan_backtest is 'How well the planner predicts: each measured accelerator count of a group with four counts or more, left out in turn and predicted from the others, by the two-part model and by the Amdahl fit on time; derived, not official MLPerf results.';
comment on column plan_backtest.round is 'MLPerf round, e.g. v4.1';
comment on column plan_backtest.benchmark is 'benchmark folder';
comment on column plan_backtest.accelerator_group is 'comparable accelerator group, e.g. H100-SXM';
comment on column plan_backtest.accelerators is 'the count left out and predicted';
comment on column plan_backtest.model is 'two-part (seconds per sample against N x samples to converge at the batch N implies, from the RCPs and the group''s runs) or amdahl on time';
comment on column plan_backtest.measured_min is 'the best official time measured at that count';
comment on column plan_backtest.predicted_min is 'predicted from the other counts; null where the model cannot be made from them (no samples or batch logged)';
comment on column plan_backtest.predicted_low_min is '5 % bootstrap bound of the prediction (throughput part only for the two-part model)';
comment on column plan_backtest.predicted_high_min is '95 % bootstrap bound';
comment on column plan_backtest.error_pct is '100 x (predicted - measured) / measured';
comment on column plan_backtest.extrapolated is 'the count left out is the smallest or largest: predicted beyond the others';
