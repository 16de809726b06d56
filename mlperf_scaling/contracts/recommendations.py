"""Contract for `recommendations`: how many accelerators, per (round, benchmark, comparable accelerator group)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class RecommendationsSchema(Contract, table="recommendations"):
    """Its columns: contracts/tables/recommendations.yaml; the checks across columns here."""

    @pa.dataframe_check(error="a measured recommendation quotes the best time measured there, with no interval")
    def measured_is_measured(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select((pl.col("basis") != "measured") | (pl.col("time_min_low").is_null() & pl.col("best_system").is_not_null()))
