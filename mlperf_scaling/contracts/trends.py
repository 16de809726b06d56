"""Contracts for the cross-round tables: `carried_over` and `round_trends`."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, ScoreKey, round_field


class CarriedOverSchema(ScoreKey):
    is_carried_over: bool = pa.Field()
    n_copied_logs: int = pa.Field(ge=0)

    class Config:
        unique = ["round", "submitter", "system", "benchmark"]


class RoundTrendsSchema(Contract):
    benchmark_canonical: str = pa.Field()
    accelerator_group: str = pa.Field()
    accelerators: int = pa.Field(gt=0)
    round: str = round_field()
    round_order: int = pa.Field(ge=0)
    n_systems: int = pa.Field(ge=1)
    best_time_min: float = pa.Field(gt=0)
    best_system: str = pa.Field()
    median_time_min: float = pa.Field(gt=0)
    speedup_vs_first: float = pa.Field(gt=0)
    first_round: str = round_field()
    n_carried_over: int = pa.Field(ge=0)

    class Config:
        unique = ["benchmark_canonical", "accelerator_group", "accelerators", "round"]
