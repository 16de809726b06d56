"""The warehouse described from its own DDL: tables, columns, types and comments, as DuckDB holds them.

`python -m mlperf_scaling.warehouse.describe docs/tables.md` writes the documentation's table reference; a test keeps
it current with the DDL, which the contracts' declarations generate (warehouse/ddl.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from mlperf_scaling.warehouse.connection import connect, ensure_schema

PAGE_HEAD = """# Tables

Every table and view of the warehouse, with each column's type and meaning. Generated from the tables' declarations
(`mlperf_scaling/contracts/tables/*.yaml`) by `python -m mlperf_scaling.warehouse.describe docs/tables.md`: do not edit
by hand. `warehouse_info` holds the version of these definitions; a warehouse written under others is rebuilt.
"""


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    nullable: bool
    comment: str | None


@dataclass(frozen=True)
class Relation:
    name: str
    kind: str  # table or view
    comment: str | None
    columns: tuple[Column, ...]


def describe(connection: duckdb.DuckDBPyConnection | None = None) -> list[Relation]:
    """Every table and view of the warehouse DDL, in the order the DDL creates them."""
    own = connection is None
    if connection is None:
        connection = connect(":memory:")
        ensure_schema(connection)
    try:
        relations = []
        tables = connection.execute(
            "select table_name, comment from duckdb_tables() where database_name = current_database() order by table_oid"
        ).fetchall()
        views = connection.execute(
            "select view_name, comment from duckdb_views() where database_name = current_database() and not internal order by view_oid"
        ).fetchall()
        for kind, rows in (("table", tables), ("view", views)):
            for name, comment in rows:
                columns = connection.execute(
                    "select column_name, data_type, is_nullable, comment from duckdb_columns() "
                    "where database_name = current_database() and table_name = ? order by column_index",
                    [name],
                ).fetchall()
                relations.append(Relation(name, kind, comment, tuple(Column(c, t, bool(n), m) for c, t, n, m in columns)))
        return relations
    finally:
        if own:
            connection.close()


def tables_page(relations: list[Relation] | None = None) -> str:
    """The documentation's reference of every table and view: its comment, then each column with its type and comment."""
    lines = [PAGE_HEAD]
    for relation in relations or describe():
        if relation.name == "warehouse_info":
            continue  # the schema version: said in the head of the page
        lines.append(f"## `{relation.name}`")
        lines.append("")
        lines.append(f"{relation.kind.capitalize()}. {relation.comment}")
        lines.append("")
        for column in relation.columns:
            nullable = "" if column.nullable or relation.kind == "view" else ", not null"
            comment = f": {column.comment}" if column.comment else ""
            lines.append(f"- `{column.name}` ({column.type.lower()}{nullable}){comment}")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if len(sys.argv) > 1:
        Path(sys.argv[1]).write_text(tables_page(), encoding="utf-8")
    else:
        print(tables_page(), end="")
