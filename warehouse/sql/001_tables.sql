-- The warehouse tables. Each round is replaced as a whole, in one transaction.

create table if not exists ingestions (
    ingestion_id   varchar primary key,  -- uuid of one attempt to load a round
    round          varchar not null,     -- e.g. v4.1
    source         varchar not null,     -- the source as given: URL, path or archive
    source_kind    varchar not null,     -- git_url, git_repo, directory, archive
    source_commit  varchar,              -- git commit the data came from
    source_sha256  varchar,              -- sha256 of the archive the data came from
    started_at     timestamp not null,
    finished_at    timestamp not null,
    status         varchar not null,     -- succeeded or failed
    message        varchar,              -- why it failed, or what to know
    ruleset        varchar,              -- the training ruleset the round is judged by, e.g. 5.1.0
    rules_package  varchar,              -- the rules installed when it was loaded, e.g. mlperf-logging 4.1.68
    rules_coverage varchar,              -- checked, set_aside, predates, newer (scores then scored_unchecked)
    n_files        bigint not null,
    n_bytes        bigint not null,
    n_power_logs   bigint not null,
    n_systems      bigint not null,
    n_runs         bigint not null,
    n_valid_runs   bigint not null,
    n_scores       bigint not null,
    n_scored       bigint not null,
    n_rejections   bigint not null,
    seconds        double not null
);

create table if not exists systems (
    round                      varchar not null,
    submitter                  varchar not null,  -- submitter folder name
    system                     varchar not null,  -- systems JSON stem (v0.5: system folder)
    path                       varchar not null,
    submitter_declared         varchar,           -- what the JSON says; folder names are trusted
    division                   varchar,           -- closed / open, normalised
    division_raw               varchar,
    availability               varchar,           -- normalised status: available on-premise, available cloud, preview, research
    status_raw                 varchar,
    system_name                varchar,
    number_of_nodes            bigint,
    accelerators_per_node      bigint,
    accelerators               bigint,            -- accelerators_per_node x number_of_nodes
    accelerator_model_name     varchar,
    host_processor_model_name  varchar,
    host_processors_per_node   bigint,
    framework                  varchar,
    notes                      varchar,           -- repairs made while reading the file
    is_cpu_only                boolean,
    primary key (round, submitter, system)
);

create table if not exists runs (
    round                varchar not null,
    submitter            varchar not null,
    system               varchar not null,
    benchmark            varchar not null,  -- folder name
    benchmark_canonical  varchar not null,  -- ssd (v2.0+) -> retinanet, mask -> maskrcnn, gnn -> rgat
    path                 varchar not null,
    file_name            varchar not null,
    bytes                bigint not null,
    sha256               varchar not null,  -- of the log's bytes: finds logs copied between folders or rounds
    log_format           varchar,           -- mllog (v0.7+), mll (v0.6), mlp (v0.5)
    log_benchmark        varchar,           -- submission_benchmark as logged
    official_layout      boolean not null,  -- false where the official tool would not find the file
    n_marker_lines       bigint not null,
    n_parse_errors       bigint not null,
    n_run_start          bigint not null,
    n_run_stop           bigint not null,
    run_start_ms         double,
    run_stop_ms          double,
    run_stop_status      varchar,
    time_to_train_min    double,
    is_valid             boolean not null,
    invalid_reason       varchar,           -- why the run does not count, in words
    failed_rule          varchar,           -- first compliance rule broken: training_5.1.0/common.yaml:init_stop
    primary key (round, path)
);

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
    time_to_train_min           double,   -- official score: olympic average x scaling_factor
    time_to_train_unscaled_min  double,
    scaling_factor              double,
    n_runs                      bigint not null,  -- result logs present
    n_valid                     bigint not null,
    n_required                  bigint,           -- logs the rules require for this benchmark (null: unknown to the rules)
    n_missing                   bigint not null,  -- logs absent from this copy (MISSING.txt)
    status                      varchar not null, -- scored, scored_incomplete, scored_unchecked, not_scored
    status_reason               varchar,
    primary key (round, submitter, system, benchmark)
);

create table if not exists rejections (
    round   varchar not null,
    path    varchar not null,  -- file path in the round, or table:key for a row
    stage   varchar not null,  -- source, layout, parse, score, validate
    reason  varchar not null
);
