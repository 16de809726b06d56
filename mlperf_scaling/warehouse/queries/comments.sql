-- COMMENT ON statements for every table, view and column of the warehouse that has a comment: what an export adds
-- to its schema.sql, so the documentation travels with the data.
select 'comment on ' || lower(kind) || ' ' || quoted || ' is ' || quote_literal || ';' as statement
from (
    select 'table' as kind, '"' || table_name || '"' as quoted, '''' || replace(comment, '''', '''''') || '''' as quote_literal,
           table_name as sort_name, 0 as position
    from duckdb_tables()
    where database_name = current_database() and schema_name = 'main' and comment is not null
    union all
    select 'view', '"' || view_name || '"', '''' || replace(comment, '''', '''''') || '''', view_name, 0
    from duckdb_views()
    where database_name = current_database() and schema_name = 'main' and not internal and comment is not null
    union all
    select 'column', '"' || table_name || '"."' || column_name || '"', '''' || replace(comment, '''', '''''') || '''', table_name, column_index
    from duckdb_columns()
    where database_name = current_database() and schema_name = 'main' and comment is not null
)
order by sort_name, position
