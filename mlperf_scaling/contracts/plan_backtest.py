"""Contract for `plan_backtest`: each measured count of a group left out and predicted from the others."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class PlanBacktestSchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    accelerator_group: str = pa.Field()
    accelerators: int = pa.Field(ge=1)
    model: str = pa.Field(isin=["two-part", "amdahl on time"])
    measured_min: float = pa.Field(gt=0)
    predicted_min: float | None = pa.Field(nullable=True)
    predicted_low_min: float | None = pa.Field(nullable=True)
    predicted_high_min: float | None = pa.Field(nullable=True)
    error_pct: float | None = pa.Field(nullable=True)
    extrapolated: bool = pa.Field()

    class Config:
        unique = ["round", "benchmark", "accelerator_group", "accelerators", "model"]
