-- One row per result log (one training run), valid or not.
create table if not exists runs (
    round                varchar not null,
    submitter            varchar not null,
    system               varchar not null,
    benchmark            varchar not null,
    benchmark_canonical  varchar not null,
    path                 varchar not null,
    file_name            varchar not null,
    bytes                bigint not null,
    sha256               varchar not null,
    log_format           varchar,
    log_benchmark        varchar,
    official_layout      boolean not null,
    n_marker_lines       bigint not null,
    n_parse_errors       bigint not null,
    n_run_start          bigint not null,
    n_run_stop           bigint not null,
    run_start_ms         double,
    run_stop_ms          double,
    run_stop_status      varchar,
    time_to_train_min    double,
    is_valid             boolean not null,
    is_valid_today       boolean not null,
    invalid_reason       varchar,
    failed_rule          varchar,
    later_rule_failed    varchar,
    later_rule_reason    varchar,
    global_batch_size    double,
    samples_to_converge  double,
    epochs_to_converge   double,
    primary key (round, path)
);

comment on table runs is 'One row per result log (one training run), valid or not.';
comment on column runs.round is 'MLPerf round, e.g. v4.1';
comment on column runs.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column runs.system is 'system folder name (v0.5: qualified by submission where several share a name)';
comment on column runs.benchmark is 'folder name';
comment on column runs.benchmark_canonical is 'ssd (v2.0+) -> retinanet, mask -> maskrcnn, gnn -> rgat';
comment on column runs.path is 'file path inside the round (training_results_vX.Y/ removed)';
comment on column runs.file_name is 'the log''s file name';
comment on column runs.bytes is 'size of the log';
comment on column runs.sha256 is 'of the log''s bytes: finds logs copied between folders or rounds';
comment on column runs.log_format is 'mllog (v0.7+), mll (v0.6), mlp (v0.5)';
comment on column runs.log_benchmark is 'submission_benchmark as logged';
comment on column runs.official_layout is 'false where the official tool would not find the file';
comment on column runs.n_marker_lines is 'lines carrying an MLPerf marker';
comment on column runs.n_parse_errors is 'marker lines that do not parse';
comment on column runs.n_run_start is 'run_start events';
comment on column runs.n_run_stop is 'run_stop events';
comment on column runs.run_start_ms is 'run_start time, ms since the epoch (the official scan: the latest before the first run_stop)';
comment on column runs.run_stop_ms is 'run_stop time, ms since the epoch (the first)';
comment on column runs.run_stop_status is 'run_stop''s status: success, aborted, ...';
comment on column runs.time_to_train_min is '(run_stop - run_start) / 60000';
comment on column runs.is_valid is 'the run counts: every rule of its round, as it stood when the round was published, passed';
comment on column runs.is_valid_today is 'whether the rules of the installed mlperf-logging, as they are today, would count the run; differs from is_valid only where a rule changed after the round was published (reference/rule_changes.tsv)';
comment on column runs.invalid_reason is 'why the run does not count, in words';
comment on column runs.failed_rule is 'first compliance rule broken: training_5.1.0/common.yaml:init_stop';
comment on column runs.later_rule_failed is 'a rule changed after the round was published that the run fails, with the upstream change: not counted (the round is judged by its rules as published), but today''s checker would reject the run';
comment on column runs.later_rule_reason is 'why today''s rules reject the run, in words';
comment on column runs.global_batch_size is 'global_batch_size as the log states it';
comment on column runs.samples_to_converge is 'samples_count of the evaluation where the run first met its quality target (in rounds without checked rules, its last evaluation), as logged';
comment on column runs.epochs_to_converge is 'epoch_num of the same evaluation, as logged (BERT''s counts samples)';
