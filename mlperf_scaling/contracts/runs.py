"""Contract for `runs`: one row per result log (one training run), valid or not."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class RunsSchema(Contract, table="runs"):
    """Its columns: contracts/tables/runs.yaml; the checks across columns here."""

    @pa.dataframe_check(error="a valid run needs a positive time to train")
    def valid_runs_have_positive_time(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select(
            ~pl.col("is_valid") | (pl.col("time_to_train_min").is_not_null() & (pl.col("time_to_train_min") > 0))
        )
