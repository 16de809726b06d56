"""Contract for `recommendations`: how many accelerators, per (round, benchmark, comparable accelerator group)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class RecommendationsSchema(Contract):
    round: str = round_field()
    round_order: int = pa.Field(ge=0)
    benchmark: str = pa.Field()
    benchmark_canonical: str = pa.Field()
    workload: str = pa.Field()
    accelerator_group: str = pa.Field()
    basis: str = pa.Field(isin=["measured", "predicted"])
    threshold: float = pa.Field(gt=0, lt=1)
    n_systems: int = pa.Field(ge=1)
    n_distinct_accelerators: int = pa.Field(ge=1)
    reference_accelerators: int = pa.Field(gt=0)
    reference_time_min: float = pa.Field(gt=0)
    reference_system: str = pa.Field()
    max_measured_accelerators: int = pa.Field(gt=0)
    accelerators: int = pa.Field(gt=0)
    time_min: float = pa.Field(gt=0)
    time_min_low: float | None = pa.Field(nullable=True, gt=0)
    time_min_high: float | None = pa.Field(nullable=True, gt=0)
    n_systems_at: int | None = pa.Field(nullable=True, ge=1)
    best_system: str | None = pa.Field(nullable=True)
    slowest_system_min: float | None = pa.Field(nullable=True, gt=0)
    fastest_run_min: float | None = pa.Field(nullable=True, gt=0)
    slowest_run_min: float | None = pa.Field(nullable=True, gt=0)
    efficiency: float = pa.Field(gt=0)
    efficiency_low: float | None = pa.Field(nullable=True, gt=0)
    efficiency_high: float | None = pa.Field(nullable=True, gt=0)
    accelerator_hours: float = pa.Field(gt=0)
    next_accelerators: int | None = pa.Field(nullable=True, gt=0)
    next_basis: str | None = pa.Field(nullable=True, isin=["measured", "predicted"])
    next_time_min: float | None = pa.Field(nullable=True, gt=0)
    next_time_min_low: float | None = pa.Field(nullable=True, gt=0)
    next_time_min_high: float | None = pa.Field(nullable=True, gt=0)
    time_saved_min: float | None = pa.Field(nullable=True)
    extra_accelerator_hours_pct: float | None = pa.Field(nullable=True)
    next_is_extrapolated: bool | None = pa.Field(nullable=True)
    knee: float | None = pa.Field(nullable=True, gt=0)
    knee_low: float | None = pa.Field(nullable=True, gt=0)
    knee_high: float | None = pa.Field(nullable=True, gt=0)
    model: str | None = pa.Field(nullable=True, isin=["amdahl", "two-part"])
    backtest_median_error_pct: float | None = pa.Field(nullable=True, ge=0)
    backtest_counts: int | None = pa.Field(nullable=True, ge=1)
    backtest_covered: int | None = pa.Field(nullable=True, ge=0)
    warning: str | None = pa.Field(nullable=True)
    reason: str = pa.Field()
    sentence: str = pa.Field()

    @pa.dataframe_check(error="a measured recommendation quotes the best time measured there, with no interval")
    def measured_is_measured(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select((pl.col("basis") != "measured") | (pl.col("time_min_low").is_null() & pl.col("best_system").is_not_null()))

    class Config:
        unique = ["round", "benchmark", "accelerator_group"]
