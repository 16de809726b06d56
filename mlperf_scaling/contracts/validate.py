"""Run a table's contract lazily and split its rows into those that load and those rejected."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.rejections import RejectionsSchema
from mlperf_scaling.rounds import HPC_ROUND_PREFIX


class ContractError(RuntimeError):
    """A failure that is not about particular rows (a missing column, a wrong type): a bug, not bad data."""


def split_valid_rows(
    frame: pl.DataFrame, schema: type[pa.DataFrameModel], table: str, key_columns: list[str]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Return (rows that satisfy the schema, rejection rows naming each failed check).

    Checks run on collected data (pandera checks only the schema of a LazyFrame).
    """
    try:
        return schema.validate(frame, lazy=True), _empty_rejections()
    except pa.errors.SchemaErrors as errors:
        failures = errors.failure_cases
    row_failures = failures.filter(pl.col("index").is_not_null())
    if row_failures.height < failures.height:
        general = failures.filter(pl.col("index").is_null())
        raise ContractError(f"{table}: contract broken beyond single rows:\n{general}")
    indexed = frame.with_row_index("__row")
    bad = (
        row_failures.group_by("index")
        .agg(
            pl.when(pl.col("column").is_null())
            .then(pl.col("check"))
            .otherwise(pl.format("{} failed {} (value: {})", pl.col("column"), pl.col("check"), pl.col("failure_case")))
            .str.join("; ")
            .alias("reason")
        )
        .join(indexed, left_on="index", right_on="__row", how="inner")
        .sort("index")
    )
    key = pl.concat_str([pl.col(c).cast(pl.String).fill_null("") for c in key_columns], separator="/")
    place = [(pl.col(c).cast(pl.String) if c in bad.columns else pl.lit(None, dtype=pl.String)).alias(c)
             for c in ("submitter", "system", "benchmark")]
    rejections = bad.select(
        pl.col("round"),
        # a row that fails its contract may lack a valid suite: the round's name says it
        pl.when(pl.col("round").cast(pl.String).str.starts_with(HPC_ROUND_PREFIX)).then(pl.lit("hpc")).otherwise(pl.lit("training")).alias("suite"),
        pl.format("{}:{}", pl.lit(table), key).alias("path"),
        *place,
        pl.lit("validate").alias("stage"),
        pl.format("row rejected by the {} contract: {}", pl.lit(table), pl.col("reason")).alias("reason"),
    )
    bad_rows = bad.get_column("index").cast(pl.UInt32)
    good = indexed.filter(~pl.col("__row").is_in(bad_rows.implode())).drop("__row")
    return schema.validate(good, lazy=True), rejections


def _empty_rejections() -> pl.DataFrame:
    return pl.DataFrame(schema=frame_schema(RejectionsSchema))
