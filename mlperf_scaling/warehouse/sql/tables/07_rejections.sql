-- Every file or row that could not be used, and why.
create table if not exists rejections (
    round   varchar not null,
    path    varchar not null,
    stage   varchar not null,
    reason  varchar not null
);

comment on table rejections is 'Every file or row that could not be used, and why.';
comment on column rejections.round is 'MLPerf round, e.g. v4.1';
comment on column rejections.path is 'file path in the round, or table:key for a row';
comment on column rejections.stage is 'source, layout, parse, score, validate';
comment on column rejections.reason is 'why, in words';
