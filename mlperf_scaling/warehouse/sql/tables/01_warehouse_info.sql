-- The version of the table definitions this file was written with.
create table if not exists warehouse_info (
    schema_version  varchar not null
);

comment on table warehouse_info is 'The version of the table definitions this file was written with: a digest of the DDL. A warehouse of another version is rebuilt from scratch.';
comment on column warehouse_info.schema_version is 'digest of the warehouse''s SQL files';
