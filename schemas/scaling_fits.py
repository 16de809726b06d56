"""Contract for `scaling_fits`: Amdahl and USL fits per (round, benchmark, accelerator family)."""

from typing import Optional

import pandera.polars as pa

from schemas.common import round_field


class ScalingFitsSchema(pa.DataFrameModel):
    round: str = round_field()
    benchmark: str = pa.Field()
    accelerator_family: str = pa.Field()
    model: str = pa.Field(isin=["amdahl", "usl"])
    status: str = pa.Field(isin=["fitted", "refused"])
    note: Optional[str] = pa.Field(nullable=True)
    n_points: int = pa.Field(ge=1)
    n_distinct_accelerators: int = pa.Field(ge=1)
    min_accelerators: int = pa.Field(ge=1)
    max_accelerators: int = pa.Field(ge=1)
    t1_min: Optional[float] = pa.Field(nullable=True, gt=0)
    t1_stderr: Optional[float] = pa.Field(nullable=True, ge=0)
    p: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    p_stderr: Optional[float] = pa.Field(nullable=True, ge=0)
    g: Optional[float] = pa.Field(nullable=True, gt=0)
    g_stderr: Optional[float] = pa.Field(nullable=True, ge=0)
    a: Optional[float] = pa.Field(nullable=True, ge=0, le=1)
    a_stderr: Optional[float] = pa.Field(nullable=True, ge=0)
    b: Optional[float] = pa.Field(nullable=True, ge=0)
    b_stderr: Optional[float] = pa.Field(nullable=True, ge=0)
    n_star: Optional[float] = pa.Field(nullable=True, gt=0)
    r2_log: Optional[float] = pa.Field(nullable=True)
    rmse_log: Optional[float] = pa.Field(nullable=True, ge=0)
    knee_50: Optional[float] = pa.Field(nullable=True, gt=0)
    knee_50_low: Optional[float] = pa.Field(nullable=True, gt=0)
    knee_50_high: Optional[float] = pa.Field(nullable=True, gt=0)
    threshold: float = pa.Field(gt=0, lt=1)
    knee_threshold: Optional[float] = pa.Field(nullable=True, gt=0)
    knee_threshold_low: Optional[float] = pa.Field(nullable=True, gt=0)
    knee_threshold_high: Optional[float] = pa.Field(nullable=True, gt=0)

    class Config:
        strict = True
        coerce = True
        unique = ["round", "benchmark", "accelerator_family", "model"]
