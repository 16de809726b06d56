-- Every file or row that could not be used, and why.
create table if not exists rejections (
    round      varchar not null,
    path       varchar not null,
    submitter  varchar,
    system     varchar,
    benchmark  varchar,
    stage      varchar not null,
    reason     varchar not null
);

comment on table rejections is 'Every file or row that could not be used, and why.';
comment on column rejections.round is 'MLPerf round, e.g. v4.1';
comment on column rejections.path is 'file path from the round repository''s root (every round alike; v0.5''s repository has its v0.5.0/ folder), the archive''s name for the archive itself, or table:key for a row';
comment on column rejections.submitter is 'the submitter the file or row belongs to, where its place says (null: it does not)';
comment on column rejections.system is 'the system folder the file or row belongs to, where its place says';
comment on column rejections.benchmark is 'the benchmark folder the file or row belongs to, where its place says';
comment on column rejections.stage is 'source, layout, parse, score, validate';
comment on column rejections.reason is 'why, in words';
