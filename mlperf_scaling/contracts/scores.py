"""Contract for `scores`: one row per (round, submitter, system, benchmark, scaling mode)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class ScoresSchema(Contract, table="scores"):
    """Its columns: contracts/tables/scores.yaml; the checks across columns here."""

    @pa.dataframe_check(error="a scored strong-scaling row needs a time to train, an unscored row must not have one")
    def status_matches_time(cls, data) -> bool:
        import polars as pl

        scored = pl.col("status") != "not_scored"
        strong = pl.col("scaling_mode") == "strong"
        return data.lazyframe.select(pl.when(strong).then(scored == pl.col("time_to_train_min").is_not_null())
                                     .otherwise(pl.col("time_to_train_min").is_null()))

    @pa.dataframe_check(error="a scored weak-scaling row needs its models and time to train all, an unscored row has neither")
    def weak_score_is_whole(cls, data) -> bool:
        import polars as pl

        scored = pl.col("status") != "not_scored"
        weak = pl.col("scaling_mode") == "weak"
        whole = pl.col("number_of_models").is_not_null() & pl.col("time_to_train_all_min").is_not_null()
        return data.lazyframe.select(pl.when(weak).then(scored == whole).otherwise(pl.col("number_of_models").is_null()))
