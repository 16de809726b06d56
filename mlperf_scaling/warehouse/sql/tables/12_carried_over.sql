-- (round, submitter, system, benchmark) whose logs were already published in an earlier round.
create table if not exists carried_over (
    round            varchar not null,
    submitter        varchar not null,
    system           varchar not null,
    benchmark        varchar not null,
    is_carried_over  boolean not null,
    n_copied_logs    bigint not null,
    primary key (round, submitter, system, benchmark)
);

comment on table carried_over is '(round, submitter, system, benchmark) whose logs were already published in an earlier round.';
comment on column carried_over.round is 'MLPerf round, e.g. v4.1';
comment on column carried_over.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column carried_over.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column carried_over.benchmark is 'benchmark folder name';
comment on column carried_over.is_carried_over is 'every log already published in an earlier round';
comment on column carried_over.n_copied_logs is 'logs byte-identical to, or recording the same run as, an earlier round''s';
