"""Contract for `scaling_fits`: Amdahl and USL fits per (round, benchmark, comparable accelerator group)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class ScalingFitsSchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    accelerator_group: str = pa.Field()
    model: str = pa.Field(isin=["amdahl", "usl"])
    status: str = pa.Field(isin=["fitted", "refused"])
    note: str | None = pa.Field(nullable=True)
    n_points: int = pa.Field(ge=1)
    n_distinct_accelerators: int = pa.Field(ge=1)
    min_accelerators: int = pa.Field(ge=1)
    max_accelerators: int = pa.Field(ge=1)
    n_bootstrap: int | None = pa.Field(nullable=True, ge=0)
    t1_min: float | None = pa.Field(nullable=True, gt=0)
    t1_stderr: float | None = pa.Field(nullable=True, ge=0)
    p: float | None = pa.Field(nullable=True, ge=0, le=1)
    p_stderr: float | None = pa.Field(nullable=True, ge=0)
    g: float | None = pa.Field(nullable=True, gt=0)
    g_stderr: float | None = pa.Field(nullable=True, ge=0)
    a: float | None = pa.Field(nullable=True, ge=0, le=1)
    a_stderr: float | None = pa.Field(nullable=True, ge=0)
    b: float | None = pa.Field(nullable=True, ge=0)
    b_stderr: float | None = pa.Field(nullable=True, ge=0)
    n_star: float | None = pa.Field(nullable=True, gt=0)
    r2_log: float | None = pa.Field(nullable=True)
    rmse_log: float | None = pa.Field(nullable=True, ge=0)
    knee_50: float | None = pa.Field(nullable=True, gt=0)
    knee_50_low: float | None = pa.Field(nullable=True, gt=0)
    knee_50_high: float | None = pa.Field(nullable=True, gt=0)
    threshold: float = pa.Field(gt=0, lt=1)
    knee_threshold: float | None = pa.Field(nullable=True, gt=0)
    knee_threshold_low: float | None = pa.Field(nullable=True, gt=0)
    knee_threshold_high: float | None = pa.Field(nullable=True, gt=0)

    class Config:
        unique = ["round", "benchmark", "accelerator_group", "model"]
