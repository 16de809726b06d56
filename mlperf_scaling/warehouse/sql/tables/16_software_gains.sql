-- Each round's systems against the previous round's model of the same workload and comparable accelerator group: the
-- software and system gain at equal scale; derived, not official MLPerf results.
create table if not exists software_gains (
    round                varchar not null,
    previous_round       varchar not null,
    benchmark_canonical  varchar not null,
    accelerator_group    varchar not null,
    benchmark            varchar not null,
    submitter            varchar not null,
    system               varchar not null,
    accelerators         bigint not null,
    measured_min         double not null,
    predicted_min        double not null,
    time_ratio           double not null,
    extrapolated         boolean not null,
    primary key (round, benchmark_canonical, accelerator_group, submitter, system)
);

comment on table software_gains is 'Each round''s systems against the previous round''s model of the same workload and comparable accelerator group: the software and system gain at equal scale; derived, not official MLPerf results.';
comment on column software_gains.round is 'the round of the system';
comment on column software_gains.previous_round is 'the previous round that measured the workload on this group, whose Amdahl fit on time predicts';
comment on column software_gains.benchmark_canonical is 'the workload across rounds (ssd of v3.1+ is retinanet)';
comment on column software_gains.accelerator_group is 'comparable accelerator group, e.g. H100-SXM';
comment on column software_gains.benchmark is 'benchmark folder in this round';
comment on column software_gains.submitter is 'submitter folder';
comment on column software_gains.system is 'system folder';
comment on column software_gains.accelerators is 'N';
comment on column software_gains.measured_min is 'the official time to train';
comment on column software_gains.predicted_min is 'what the previous round''s fit predicts at this N';
comment on column software_gains.time_ratio is 'measured / predicted: below 1, faster than the previous round''s systems at this size';
comment on column software_gains.extrapolated is 'N outside the counts the previous round measured';
