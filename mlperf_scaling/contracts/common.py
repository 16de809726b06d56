"""Field definitions shared by several tables, and the frame schema each contract implies."""

from __future__ import annotations

import pandera.polars as pa
import polars as pl

from mlperf_scaling.rounds import ROUND_PATTERN


def round_field():
    return pa.Field(str_matches=ROUND_PATTERN, description="MLPerf round, e.g. v4.1")


def folder_field(description: str):
    return pa.Field(str_length={"min_value": 1, "max_value": 512}, description=description)


def frame_schema(model: type[pa.DataFrameModel]) -> dict[str, pl.DataType]:
    """The polars schema of a table, from its contract: the one place its columns are listed in Python."""
    return {name: column.dtype.type for name, column in model.to_schema().columns.items()}


class Contract(pa.DataFrameModel):
    """A warehouse table's contract: exactly its columns (strict), values coerced to their types, and no number that is
    not one: every floating-point value is finite or null, in every table."""

    class Config:
        strict = True
        coerce = True

    @pa.dataframe_check(error="every floating-point value is finite (no NaN, no infinity)")
    def floats_are_finite(cls, data) -> pl.LazyFrame:
        floats = [name for name, dtype in data.lazyframe.collect_schema().items() if dtype.is_float()]
        if not floats:
            return data.lazyframe.select(pl.lit(True).alias("finite"))
        return data.lazyframe.select(pl.all_horizontal([pl.col(name).is_finite().fill_null(True) for name in floats]).alias("finite"))


class ScoreKey(Contract):
    """The columns naming one (round, submitter, system, benchmark), first in every table keyed by them."""

    round: str = round_field()
    submitter: str = folder_field("submitter folder name")
    system: str = folder_field("system folder name")
    benchmark: str = folder_field("benchmark folder name")
