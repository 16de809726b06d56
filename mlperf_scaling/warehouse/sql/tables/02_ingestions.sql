-- One row per attempt to load a round, with where it came from and how it was judged.
create table if not exists ingestions (
    ingestion_id    varchar not null,
    round           varchar not null,
    round_order     bigint,
    source          varchar not null,
    source_kind     varchar not null,
    source_commit   varchar,
    source_sha256   varchar,
    started_at      timestamp not null,
    finished_at     timestamp not null,
    status          varchar not null,
    message         varchar,
    ruleset         varchar,
    rules_package   varchar,
    rules_coverage  varchar,
    n_files         bigint not null,
    n_bytes         bigint not null,
    n_power_logs    bigint not null,
    n_systems       bigint not null,
    n_runs          bigint not null,
    n_valid_runs    bigint not null,
    n_scores        bigint not null,
    n_scored        bigint not null,
    n_rejections    bigint not null,
    seconds         double not null
);

comment on table ingestions is 'One row per attempt to load a round, with where it came from and how it was judged.';
comment on column ingestions.ingestion_id is 'uuid of one attempt to load a round';
comment on column ingestions.round is 'MLPerf round, e.g. v4.1';
comment on column ingestions.round_order is 'sortable round number: v4.1 -> 401 (null for an attempt that named no round)';
comment on column ingestions.source is 'the source as given: URL, path or archive';
comment on column ingestions.source_kind is 'git_url, git_repo, directory, archive';
comment on column ingestions.source_commit is 'git commit the data came from';
comment on column ingestions.source_sha256 is 'sha256 of the archive the data came from';
comment on column ingestions.started_at is 'UTC';
comment on column ingestions.finished_at is 'UTC';
comment on column ingestions.status is 'succeeded or failed';
comment on column ingestions.message is 'why it failed, or what to know';
comment on column ingestions.ruleset is 'the training ruleset the round is judged by, e.g. 5.1.0';
comment on column ingestions.rules_package is 'the rules it was judged by: the installed package and the digest of the recorded changes since each round''s publication (reference/rule_changes.tsv), e.g. mlperf-logging 4.1.68, rule changes 1a2b3c4d5e';
comment on column ingestions.rules_coverage is 'checked, set_aside, predates, newer (scores then scored_unchecked)';
comment on column ingestions.n_files is 'files read from the source';
comment on column ingestions.n_bytes is 'bytes read';
comment on column ingestions.n_power_logs is 'power logs seen';
comment on column ingestions.n_systems is 'rows loaded into systems';
comment on column ingestions.n_runs is 'rows loaded into runs';
comment on column ingestions.n_valid_runs is 'valid runs loaded';
comment on column ingestions.n_scores is 'rows loaded into scores';
comment on column ingestions.n_scored is 'score rows with a time to train (scored, scored_incomplete, scored_unchecked)';
comment on column ingestions.n_rejections is 'rows loaded into rejections';
comment on column ingestions.seconds is 'time spent reading and scoring the round';
