-- One row per system description (systems JSON) of a round.
create table if not exists systems (
    round                      varchar not null,
    submitter                  varchar not null,
    system                     varchar not null,
    path                       varchar not null,
    submitter_declared         varchar,
    division                   varchar,
    division_raw               varchar,
    availability               varchar,
    status_raw                 varchar,
    system_name                varchar,
    number_of_nodes            bigint,
    accelerators_per_node      bigint,
    accelerators               bigint,
    accelerator_model_name     varchar,
    host_processor_model_name  varchar,
    host_processors_per_node   bigint,
    framework                  varchar,
    notes                      varchar,
    is_cpu_only                boolean,
    primary key (round, submitter, system)
);

comment on table systems is 'One row per system description (systems JSON) of a round.';
comment on column systems.round is 'MLPerf round, e.g. v4.1';
comment on column systems.submitter is 'submitter folder name';
comment on column systems.system is 'systems JSON stem (v0.5: system folder)';
comment on column systems.path is 'the systems JSON (v0.5: entry.json) inside the round';
comment on column systems.submitter_declared is 'what the JSON says; folder names are trusted';
comment on column systems.division is 'closed / open, normalised';
comment on column systems.division_raw is 'division as written';
comment on column systems.availability is 'normalised status: available on-premise, available cloud, preview, research';
comment on column systems.status_raw is 'status as written';
comment on column systems.system_name is 'system_name from the systems JSON';
comment on column systems.number_of_nodes is 'number_of_nodes (old schema: sum of num_nodes)';
comment on column systems.accelerators_per_node is 'accelerators_per_node as read';
comment on column systems.accelerators is 'accelerators_per_node x number_of_nodes';
comment on column systems.accelerator_model_name is 'accelerator_model_name as the systems JSON gives it';
comment on column systems.host_processor_model_name is 'host_processor_model_name';
comment on column systems.host_processors_per_node is 'host_processors_per_node';
comment on column systems.framework is 'framework as written';
comment on column systems.notes is 'repairs made while reading the file';
comment on column systems.is_cpu_only is 'no accelerators: a CPU-only system';
