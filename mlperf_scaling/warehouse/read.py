"""Read the warehouse: one read-only connection, never the writer's lock, with the queries kept in `queries/`.

Loads write to a copy that replaces the file atomically, so a reader opened at any time sees one whole version.
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from mlperf_scaling.warehouse.connection import connect, file_problem, is_current


class WarehouseMissing(FileNotFoundError):
    """No warehouse at the path, or one written under other table definitions; the message says what to run."""


def open_reader(path: Path | str) -> duckdb.DuckDBPyConnection:
    """A read-only connection to the warehouse; raises WarehouseMissing with a line a user can act on."""
    problem = file_problem(path)
    if problem is not None:
        raise WarehouseMissing(problem)
    if not Path(path).is_file():
        raise WarehouseMissing(f"no warehouse at {path}: run `mlperf-scaling run` (or `ingest`) first")
    if not is_current(path):
        raise WarehouseMissing(
            f"the warehouse at {path} was written by another version of mlperf-scaling: run `mlperf-scaling run` to rebuild it"
        )
    return connect(path, read_only=True)


@functools.cache
def query_text(name: str) -> str:
    return resources.files("mlperf_scaling.warehouse").joinpath("queries", f"{name}.sql").read_text(encoding="utf-8")


def read_query(connection: duckdb.DuckDBPyConnection, name: str, **parameters) -> pl.DataFrame:
    """Run a named query with bound parameters and return all rows."""
    return connection.sql(query_text(name), params=parameters).pl()


def read_stored_scores(path: Path | str) -> pl.DataFrame:
    """The `scores` of a warehouse file, whatever version of the other tables' definitions wrote it: what tools that
    analyse the scores again with today's code read (their columns change only with the scoring)."""
    problem = file_problem(path)
    if problem is not None or not Path(path).is_file():
        raise WarehouseMissing(problem or f"no warehouse at {path}: run `mlperf-scaling run` (or `ingest`) first")
    connection = connect(path, read_only=True)
    try:
        return connection.sql("select * from scores").pl()
    finally:
        connection.close()


def read_queries(path: Path | str, *names: str, **parameters) -> list[pl.DataFrame]:
    """Open the warehouse read-only, run the named queries, close it."""
    connection = open_reader(path)
    try:
        return [read_query(connection, name, **parameters) for name in names]
    finally:
        connection.close()
