-- Score rows left out of the analysis, and why.
create table if not exists analysis_exclusions (
    round      varchar not null,
    benchmark  varchar not null,
    submitter  varchar not null,
    system     varchar not null,
    reason     varchar not null
);

comment on table analysis_exclusions is 'Score rows left out of the analysis, and why.';
comment on column analysis_exclusions.round is 'MLPerf round, e.g. v4.1';
comment on column analysis_exclusions.benchmark is 'benchmark folder name';
comment on column analysis_exclusions.submitter is 'submitter folder name (folder names are trusted over what files declare)';
comment on column analysis_exclusions.system is 'system folder name = systems JSON stem (v0.5: the folder, qualified by submission where several share a name)';
comment on column analysis_exclusions.reason is 'why a score row is not in `efficiency`';
