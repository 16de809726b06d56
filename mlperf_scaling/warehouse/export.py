"""The warehouse for any tool: read-only SQL statements, or every table written out as files."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl

from mlperf_scaling.warehouse.read import open_reader, read_query


class QueryError(ValueError):
    """The statement failed (syntax, unknown table, an attempt to write); the message is DuckDB's, in one line."""


# what `query` runs: statements that only read. A read-only connection already refuses to change the warehouse, but
# COPY ... TO, EXPORT DATABASE, ATTACH or a PRAGMA's profile output would still write files; each is refused before
# anything runs
READING_STATEMENTS = {duckdb.StatementType.SELECT: "SELECT", duckdb.StatementType.EXPLAIN: "EXPLAIN", duckdb.StatementType.CALL: "CALL"}


def _reading_only(statements: list) -> None:
    for number, statement in enumerate(statements, start=1):
        if statement.type not in READING_STATEMENTS:
            which = f"statement {number}" if len(statements) > 1 else "the statement"
            kind = str(statement.type).rsplit(".", 1)[-1]
            raise QueryError(f"{which} is a {kind}: `query` only reads ({', '.join(READING_STATEMENTS.values())}, and DESCRIBE, SHOW, "
                             "SUMMARIZE); nothing was run. `mlperf-scaling export DIR` writes the tables to files")


def run_queries(warehouse: Path | str, sql: str) -> list[pl.DataFrame]:
    """The result of every statement in `sql`, in order, on a read-only connection: nothing can be changed, no file
    written, and no writer is waited for."""
    try:
        parsed = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(" ".join(str(exc).split())) from None
    if not parsed:
        raise QueryError("no statement given")
    _reading_only(parsed)
    connection = open_reader(warehouse)
    try:
        statements = [statement.query for statement in parsed]
        results = []
        for number, statement in enumerate(statements, start=1):
            relation = connection.sql(statement)
            if relation is None:
                which = f"statement {number} " if len(statements) > 1 else "the statement "
                raise QueryError(f"{which}returns no rows; only queries are run (the warehouse is opened read-only)")
            results.append(_with_comments(connection, statement, relation.pl()))
        return results
    except duckdb.Error as exc:
        raise QueryError(" ".join(str(exc).split())) from None
    finally:
        connection.close()


_DESCRIBE = re.compile(r"^\s*(?:describe|show)\s+(?:table\s+)?(?:\"?main\"?\.)?\"?(?P<name>\w+)\"?\s*;?\s*$", re.I)


def _with_comments(connection, statement: str, result: pl.DataFrame) -> pl.DataFrame:
    """`describe scores` with what each column means: DuckDB keeps the contracts' descriptions as column comments, shown
    only by duckdb_columns()."""
    found = _DESCRIBE.match(statement)
    if found is None or "column_name" not in result.columns:
        return result
    rows = connection.execute("select column_name, comment from duckdb_columns() where table_name = ?", [found["name"]]).fetchall()
    comments = pl.DataFrame(rows, schema={"column_name": pl.String, "comment": pl.String}, orient="row")
    return result.join(comments, on="column_name", how="left") if comments.height else result


# DuckDB 2.0 reads a CSV back with another escape character than the quote unless the export names it: written
# explicitly, `load.sql` carries it, and IMPORT DATABASE reads every field as written (DuckDB 1.x too)
_EXPORT_OPTIONS = {"parquet": "format parquet", "csv": "format csv, escape '\"'"}


def export_database(warehouse: Path | str, folder: Path, file_format: str = "parquet") -> list[Path]:
    """Every table as `<table>.parquet` (or .csv) in `folder`, with `schema.sql` and `load.sql`, DuckDB's EXPORT
    DATABASE: any DuckDB (`IMPORT DATABASE 'folder'`), pandas, polars, Spark or a BI tool reads them. `schema.sql`
    also carries the comment of every table, view and column, which EXPORT DATABASE leaves out."""
    if file_format not in ("parquet", "csv"):
        raise ValueError(f"format: parquet or csv, not {file_format!r}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FileExistsError(f"{folder} exists and is not an empty folder: name a new one")
    connection = open_reader(warehouse)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        literal = str(folder).replace("'", "''")  # EXPORT takes no bound parameter for its path
        connection.execute(f"export database '{literal}' ({_EXPORT_OPTIONS[file_format]})")
        comments = read_query(connection, "comments")
    finally:
        connection.close()
    with (folder / "schema.sql").open("a", encoding="utf-8") as schema:
        schema.write("\n-- The comment of every table, view and column, as the warehouse documents them\n")
        schema.writelines(f"{statement}\n" for statement in comments["statement"])
    return sorted(folder.iterdir())
