"""Read rows back from the warehouse as polars frames, with the queries kept in `warehouse/queries/`."""

from __future__ import annotations

import functools
from importlib import resources

import duckdb
import polars as pl


@functools.cache
def query_text(name: str) -> str:
    return resources.files("warehouse").joinpath("queries", f"{name}.sql").read_text(encoding="utf-8")


def read_query(connection: duckdb.DuckDBPyConnection, name: str, **parameters) -> pl.DataFrame:
    """Run a named query with bound parameters and return all rows."""
    return connection.sql(query_text(name), params=parameters).pl()


def rounds_in_warehouse(connection: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in connection.execute("select round from round_summary").fetchall()]
