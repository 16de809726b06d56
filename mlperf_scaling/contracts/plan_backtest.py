"""Contract for `plan_backtest`: each measured count of a group left out and predicted from the others."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class PlanBacktestSchema(Contract, table="plan_backtest"):
    """Its columns: contracts/tables/plan_backtest.yaml; the checks across columns here."""

    @pa.dataframe_check(error="an interval holds its prediction")
    def interval_holds_the_prediction(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select(pl.col("predicted_low_min").is_null()
                                     | ((pl.col("predicted_low_min") <= pl.col("predicted_min")) & (pl.col("predicted_min") <= pl.col("predicted_high_min"))))
