"""Contract for `scores`: one row per (round, submitter, system, benchmark)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import ScoreKey
from mlperf_scaling.contracts.enums import ScoreStatus


class ScoresSchema(ScoreKey):
    benchmark_canonical: str = pa.Field()
    division: str | None = pa.Field(nullable=True, isin=["closed", "open"])
    availability: str | None = pa.Field(nullable=True)
    system_name: str | None = pa.Field(nullable=True)
    accelerator_model_name: str | None = pa.Field(nullable=True)
    accelerators: int | None = pa.Field(nullable=True, ge=0)
    number_of_nodes: int | None = pa.Field(nullable=True, ge=0)
    time_to_train_min: float | None = pa.Field(nullable=True, gt=0)
    time_to_train_unscaled_min: float | None = pa.Field(nullable=True, gt=0)
    scaling_factor: float | None = pa.Field(nullable=True, gt=0)
    n_runs: int = pa.Field(ge=0)
    n_valid: int = pa.Field(ge=0)
    n_required: int | None = pa.Field(nullable=True, ge=1)
    n_missing: int = pa.Field(ge=0)
    status: str = pa.Field(isin=[s.value for s in ScoreStatus])
    status_reason: str | None = pa.Field(nullable=True)
    energy_j: float | None = pa.Field(nullable=True, gt=0)
    time_to_train_min_low: float | None = pa.Field(nullable=True, gt=0)
    time_to_train_min_high: float | None = pa.Field(nullable=True, gt=0)
    time_to_train_std_min: float | None = pa.Field(nullable=True, ge=0)
    global_batch_size: float | None = pa.Field(nullable=True, gt=0)
    samples_to_converge: float | None = pa.Field(nullable=True, ge=0)
    epochs_to_converge: float | None = pa.Field(nullable=True, ge=0)

    @pa.dataframe_check(error="a scored row needs a time to train, an unscored row must not have one")
    def status_matches_time(cls, data) -> bool:
        import polars as pl

        scored = pl.col("status") != "not_scored"
        return data.lazyframe.select(scored == pl.col("time_to_train_min").is_not_null())

    class Config:
        unique = ["round", "submitter", "system", "benchmark"]
