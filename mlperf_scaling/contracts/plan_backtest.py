"""Contract for `plan_backtest`: each measured count of a group left out and predicted from the others."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class PlanBacktestSchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    accelerator_group: str = pa.Field()
    accelerators: int = pa.Field(ge=1)
    model: str = pa.Field(isin=["amdahl", "two-part"])
    measured_min: float = pa.Field(gt=0)
    predicted_min: float = pa.Field(gt=0)
    predicted_low_min: float | None = pa.Field(nullable=True, gt=0)
    predicted_high_min: float | None = pa.Field(nullable=True, gt=0)
    error_pct: float = pa.Field()
    beyond_ratio: float = pa.Field(ge=1)
    extrapolated: bool = pa.Field()
    covered: bool | None = pa.Field(nullable=True)

    @pa.dataframe_check(error="an interval holds its prediction")
    def interval_holds_the_prediction(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select(pl.col("predicted_low_min").is_null()
                                     | ((pl.col("predicted_low_min") <= pl.col("predicted_min")) & (pl.col("predicted_min") <= pl.col("predicted_high_min"))))

    class Config:
        unique = ["round", "benchmark", "accelerator_group", "accelerators", "model"]
