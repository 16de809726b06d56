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
    basis: str = pa.Field(isin=["amdahl fit", "measured"])
    threshold: float = pa.Field(gt=0, lt=1)
    n_systems: int = pa.Field(ge=1)
    n_distinct_accelerators: int = pa.Field(ge=1)
    reference_accelerators: int = pa.Field(gt=0)
    max_measured_accelerators: int = pa.Field(gt=0)
    accelerators: int = pa.Field(gt=0)
    time_min: float = pa.Field(gt=0)
    time_min_low: float | None = pa.Field(nullable=True, gt=0)
    time_min_high: float | None = pa.Field(nullable=True, gt=0)
    efficiency: float = pa.Field(gt=0)
    efficiency_low: float | None = pa.Field(nullable=True, gt=0)
    efficiency_high: float | None = pa.Field(nullable=True, gt=0)
    measured_time_min: float = pa.Field(gt=0)
    accelerator_hours: float = pa.Field(gt=0)
    next_accelerators: int | None = pa.Field(nullable=True, gt=0)
    next_time_min: float | None = pa.Field(nullable=True, gt=0)
    time_saved_min: float | None = pa.Field(nullable=True)
    extra_accelerator_hours_pct: float | None = pa.Field(nullable=True)
    next_is_extrapolated: bool | None = pa.Field(nullable=True)
    knee: float | None = pa.Field(nullable=True, gt=0)
    knee_low: float | None = pa.Field(nullable=True, gt=0)
    knee_high: float | None = pa.Field(nullable=True, gt=0)
    reason: str = pa.Field()
    sentence: str = pa.Field()

    class Config:
        unique = ["round", "benchmark", "accelerator_group"]
