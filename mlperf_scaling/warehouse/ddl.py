"""The warehouse's tables, generated from their pandera contracts: each column's name, type, nullability and comment,
the table's comment and its primary key (the contract's `unique`). A column is declared once, in its contract; the DDL,
its `COMMENT ON` statements and the documentation's table reference all come from there."""

from __future__ import annotations

import functools

import pandera.polars as pa

from mlperf_scaling.contracts import TABLE_CONTRACTS
from mlperf_scaling.contracts.common import declaration
from mlperf_scaling.contracts.warehouse_info import WarehouseInfoSchema

# DuckDB's type for each polars type the contracts use
_DUCKDB_TYPES = {"String": "varchar", "Int64": "bigint", "Float64": "double", "Boolean": "boolean", "Datetime": "timestamp"}


def duckdb_type(dtype: object) -> str:
    name = str(dtype).split("(", 1)[0]
    if name not in _DUCKDB_TYPES:
        raise TypeError(f"no DuckDB type for the contract type {dtype}")
    return _DUCKDB_TYPES[name]


def column_type(table: str, name: str, dtype: object) -> str:
    """A column's DuckDB type: `json` where its declaration says so (text to polars, a JSON document to DuckDB)."""
    declared = declaration(table)["columns"].get(name, {})
    return "json" if declared.get("type") == "json" else duckdb_type(dtype)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def table_ddl(table: str, contract: type[pa.DataFrameModel]) -> str:
    """`create table` for one contract, then a comment on the table and on each column."""
    schema = contract.to_schema()
    if not schema.description:
        raise ValueError(f"the contract of {table} has no description (Config.description)")
    width = max(len(name) for name in schema.columns) + 2
    lines = [f"    {name:<{width}}{column_type(table, name, column.dtype)}{'' if column.nullable else ' not null'}" for name, column in schema.columns.items()]
    if schema.unique:
        lines.append(f"    primary key ({', '.join(schema.unique)})")
    statements = [f"create table if not exists {table} (\n" + ",\n".join(lines) + "\n);",
                  f"comment on table {table} is {_literal(schema.description)};"]
    for name, column in schema.columns.items():
        if not column.description:
            raise ValueError(f"{table}.{name} has no description in its contract")
        statements.append(f"comment on column {table}.{name} is {_literal(column.description)};")
    return "\n".join(statements) + "\n"


@functools.cache
def tables_ddl() -> tuple[tuple[str, str], ...]:
    """(table, its DDL) for every table, warehouse_info first."""
    contracts: dict[str, type[pa.DataFrameModel]] = {"warehouse_info": WarehouseInfoSchema, **TABLE_CONTRACTS}
    return tuple((table, table_ddl(table, contract)) for table, contract in contracts.items())
