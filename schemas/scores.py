"""Contract for `scores`: one row per (round, submitter, system, benchmark)."""

from typing import Optional

import pandera.polars as pa

from schemas.common import folder_field, round_field


class ScoresSchema(pa.DataFrameModel):
    round: str = round_field()
    submitter: str = folder_field("submitter folder name")
    system: str = folder_field("system folder name = systems JSON stem")
    benchmark: str = folder_field("benchmark folder name")
    benchmark_canonical: str = pa.Field()
    division: Optional[str] = pa.Field(nullable=True, isin=["closed", "open"])
    availability: Optional[str] = pa.Field(nullable=True)
    system_name: Optional[str] = pa.Field(nullable=True)
    accelerator_model_name: Optional[str] = pa.Field(nullable=True)
    accelerators: Optional[int] = pa.Field(nullable=True, ge=0)
    number_of_nodes: Optional[int] = pa.Field(nullable=True, ge=0)
    time_to_train_min: Optional[float] = pa.Field(nullable=True, gt=0)
    time_to_train_unscaled_min: Optional[float] = pa.Field(nullable=True, gt=0)
    scaling_factor: Optional[float] = pa.Field(nullable=True, gt=0)
    n_runs: int = pa.Field(ge=0)
    n_valid: int = pa.Field(ge=0)
    n_required: Optional[int] = pa.Field(nullable=True, ge=1)
    n_missing: int = pa.Field(ge=0)
    status: str = pa.Field(isin=["scored", "scored_incomplete", "scored_unchecked", "not_scored"])
    status_reason: Optional[str] = pa.Field(nullable=True)
    energy_j: Optional[float] = pa.Field(nullable=True, gt=0)

    @pa.dataframe_check(error="a scored row needs a time to train, an unscored row must not have one")
    def status_matches_time(cls, data) -> bool:
        import polars as pl

        scored = pl.col("status") != "not_scored"
        return data.lazyframe.select(scored == pl.col("time_to_train_min").is_not_null())

    class Config:
        strict = True
        coerce = True
        unique = ["round", "submitter", "system", "benchmark"]
