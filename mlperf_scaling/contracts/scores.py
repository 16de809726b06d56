"""Contract for `scores`: one row per (round, submitter, system, benchmark)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class ScoresSchema(Contract, table="scores"):
    """Its columns: contracts/tables/scores.yaml; the checks across columns here."""

    @pa.dataframe_check(error="a scored row needs a time to train, an unscored row must not have one")
    def status_matches_time(cls, data) -> bool:
        import polars as pl

        scored = pl.col("status") != "not_scored"
        return data.lazyframe.select(scored == pl.col("time_to_train_min").is_not_null())
