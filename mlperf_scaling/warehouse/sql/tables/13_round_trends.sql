-- Best and median official time per (workload, comparable accelerator group, accelerator count, round) seen in at least two rounds.
create table if not exists round_trends (
    benchmark_canonical  varchar not null,
    accelerator_group    varchar not null,
    accelerators         bigint not null,
    round                varchar not null,
    round_order          bigint not null,
    n_systems            bigint not null,
    best_time_min        double not null,
    best_system          varchar not null,
    median_time_min      double not null,
    speedup_vs_first     double not null,
    first_round          varchar not null,
    n_carried_over       bigint not null,
    primary key (benchmark_canonical, accelerator_group, accelerators, round)
);

comment on table round_trends is 'Best and median official time per (workload, comparable accelerator group, accelerator count, round) seen in at least two rounds.';
comment on column round_trends.benchmark_canonical is 'the same workload across rounds: ssd is ssd_resnet34 to v1.1 and retinanet from v2.0, mask is maskrcnn, gnn is rgat';
comment on column round_trends.accelerator_group is 'comparable hardware: one accelerator model and form factor (H100-SXM, A100-PCIe)';
comment on column round_trends.accelerators is 'accelerator count N';
comment on column round_trends.round is 'MLPerf round, e.g. v4.1';
comment on column round_trends.round_order is 'sortable round number (v4.1 -> 401)';
comment on column round_trends.n_systems is 'fresh results only: carried-over ones are counted once, in their first round';
comment on column round_trends.best_time_min is 'best official time of the round for this series';
comment on column round_trends.best_system is 'submitter/system of the best time';
comment on column round_trends.median_time_min is 'median official time';
comment on column round_trends.speedup_vs_first is 'best time in the first round of this series / best time in this round';
comment on column round_trends.first_round is 'the series'' first round';
comment on column round_trends.n_carried_over is 'results re-published from an earlier round, not counted';
