-- One row per (round, submitter, system, benchmark): the official score, as the MLCommons summarizer computes it.
create table if not exists scores (
    round                       varchar not null,
    submitter                   varchar not null,
    system                      varchar not null,
    benchmark                   varchar not null,
    benchmark_canonical         varchar not null,
    division                    varchar,
    availability                varchar,
    system_name                 varchar,
    accelerator_model_name      varchar,
    accelerators                bigint,
    number_of_nodes             bigint,
    time_to_train_min           double,
    time_to_train_unscaled_min  double,
    scaling_factor              double,
    n_runs                      bigint not null,
    n_valid                     bigint not null,
    n_required                  bigint,
    n_missing                   bigint not null,
    status                      varchar not null,
    status_reason               varchar,
    energy_j                    double,
    time_to_train_min_low       double,
    time_to_train_min_high      double,
    time_to_train_std_min       double,
    global_batch_size           double,
    samples_to_converge         double,
    epochs_to_converge          double,
    primary key (round, submitter, system, benchmark)
);

comment on table scores is 'One row per (round, submitter, system, benchmark): the official score, as the MLCommons summarizer computes it.';
comment on column scores.round is 'MLPerf round, e.g. v4.1';
comment on column scores.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column scores.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column scores.benchmark is 'benchmark folder name';
comment on column scores.benchmark_canonical is 'the same workload across rounds: ssd is ssd_resnet34 to v1.1 and retinanet from v2.0, mask is maskrcnn, gnn is rgat';
comment on column scores.division is 'closed or open, normalised from the systems JSON';
comment on column scores.availability is 'normalised status: available on-premise, available cloud, available, preview, research';
comment on column scores.system_name is 'from the systems JSON; null where the folder has none';
comment on column scores.accelerator_model_name is 'accelerator_model_name as the systems JSON gives it';
comment on column scores.accelerators is 'accelerators_per_node x number_of_nodes (old schema: sum of num_nodes x num_accelerators)';
comment on column scores.number_of_nodes is 'number_of_nodes from the systems JSON';
comment on column scores.time_to_train_min is 'official score: olympic average x scaling_factor';
comment on column scores.time_to_train_unscaled_min is 'the olympic average before the scaling factor';
comment on column scores.scaling_factor is 'from scaling.json (1.0 when absent)';
comment on column scores.n_runs is 'result logs present';
comment on column scores.n_valid is 'valid runs';
comment on column scores.n_required is 'logs the rules require for this benchmark (null: unknown to the rules)';
comment on column scores.n_missing is 'logs absent from this copy (MISSING.txt)';
comment on column scores.status is 'scored, scored_incomplete, scored_unchecked, not_scored';
comment on column scores.status_reason is 'why the status, in words';
comment on column scores.energy_j is 'energy score in joules: olympic average of run energies in the order of run times, x scaling factor; null where power was not measured';
comment on column scores.time_to_train_min_low is 'the fastest valid run, scaled as the score: the run-to-run spread, low end';
comment on column scores.time_to_train_min_high is 'the slowest valid run, scaled as the score';
comment on column scores.time_to_train_std_min is 'standard deviation of the valid runs'' times, scaled as the score';
comment on column scores.global_batch_size is 'the global batch size the system trained with (the most frequent one its valid runs logged)';
comment on column scores.samples_to_converge is 'training samples to reach the quality target: mean over the valid runs, the highest and lowest dropped when three or more, as the summarizer reports it';
comment on column scores.epochs_to_converge is 'the same in epochs';
