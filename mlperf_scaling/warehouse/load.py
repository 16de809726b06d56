"""Write validated frames into the warehouse: a round replaced as a whole, in one transaction."""

from __future__ import annotations

import duckdb
import polars as pl

# Identifiers come from these fixed lists only; values are always bound parameters.
ROUND_TABLES = ("systems", "runs", "scores", "energy", "rejections")
ANALYSIS_TABLES = ("efficiency", "clusters", "analysis_exclusions", "scaling_fits", "recommendations", "plan_backtest", "result_context",
                   "weak_scaling")


def replace_round(connection: duckdb.DuckDBPyConnection, round_name: str, frames: dict[str, pl.DataFrame], ingestion: pl.DataFrame,
                  changes: pl.DataFrame | None = None) -> None:
    """Delete the round from every ingested table, insert the new rows and record the ingestion (and what the new
    version changed, `score_changes`, which keeps every load's rows), atomically; the round's derived tables go with
    the data they were derived from (the analysis of the new version replaces them).

    Readers keep seeing the previous version of the round until the commit.
    """
    unknown = set(frames) - set(ROUND_TABLES)
    if unknown:
        raise ValueError(f"not warehouse tables: {sorted(unknown)}")
    _replace(connection, round_name, ROUND_TABLES + ANALYSIS_TABLES, frames, ingestion, changes)


def replace_round_analysis(connection: duckdb.DuckDBPyConnection, round_name: str, frames: dict[str, pl.DataFrame]) -> None:
    """Replace a round's derived tables atomically; the ingested tables are not touched."""
    if set(frames) != set(ANALYSIS_TABLES):
        raise ValueError(f"analysis writes exactly {ANALYSIS_TABLES}, got {sorted(frames)}")
    _replace(connection, round_name, ANALYSIS_TABLES, frames, None)


HISTORY_TABLES = ("score_changes",)  # appended at each load, never replaced
TREND_TABLES = ("carried_over", "round_trends", "software_gains", "explanations", "paper_claims", "workload_ranking", "transfer_backtest",
                "production_backtest", "scale_backtest")


def replace_trends(connection: duckdb.DuckDBPyConnection, frames: dict[str, pl.DataFrame]) -> None:
    """Replace the cross-round tables as a whole, atomically."""
    if set(frames) != set(TREND_TABLES):
        raise ValueError(f"trends write exactly {TREND_TABLES}, got {sorted(frames)}")
    connection.execute("begin transaction")
    try:
        for table in TREND_TABLES:
            connection.execute(f"delete from {table}")
            if frames[table].height:
                _insert(connection, table, frames[table])
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise


def record_ingestion(connection: duckdb.DuckDBPyConnection, ingestion: pl.DataFrame) -> None:
    """Record an attempt on its own, e.g. one that failed before anything could load."""
    _insert(connection, "ingestions", ingestion)


def _replace(connection, round_name: str, tables: tuple[str, ...], frames: dict[str, pl.DataFrame], ingestion: pl.DataFrame | None,
             changes: pl.DataFrame | None = None) -> None:
    connection.execute("begin transaction")
    try:
        for table in tables:
            connection.execute(f"delete from {table} where round = ?", [round_name])
            frame = frames.get(table)
            if frame is not None and frame.height:
                if frame.get_column("round").unique().to_list() != [round_name]:
                    raise ValueError(f"{table} rows belong to another round than {round_name}")
                _insert(connection, table, frame)
        if ingestion is not None:
            _insert(connection, "ingestions", ingestion)
        if changes is not None and changes.height:
            _insert(connection, HISTORY_TABLES[0], changes)
        connection.execute("commit")
    except BaseException:
        connection.execute("rollback")
        raise


def _insert(connection: duckdb.DuckDBPyConnection, table: str, frame: pl.DataFrame) -> None:
    connection.register("incoming_rows", frame.to_arrow())
    try:
        connection.execute(f"insert into {table} by name select * from incoming_rows")
    finally:
        connection.unregister("incoming_rows")
