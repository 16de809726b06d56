"""Contract for `runs`: one row per result log (one training run), valid or not."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import ScoreKey


class RunsSchema(ScoreKey):
    benchmark_canonical: str = pa.Field()
    path: str = pa.Field(description="file path inside the round")
    file_name: str = pa.Field()
    bytes: int = pa.Field(ge=0)
    sha256: str = pa.Field(str_matches=r"^[0-9a-f]{64}$")
    log_format: str | None = pa.Field(nullable=True, isin=["mllog", "mll", "mlp"])
    log_benchmark: str | None = pa.Field(nullable=True)
    official_layout: bool = pa.Field()
    n_marker_lines: int = pa.Field(ge=0)
    n_parse_errors: int = pa.Field(ge=0)
    n_run_start: int = pa.Field(ge=0)
    n_run_stop: int = pa.Field(ge=0)
    run_start_ms: float | None = pa.Field(nullable=True)
    run_stop_ms: float | None = pa.Field(nullable=True)
    run_stop_status: str | None = pa.Field(nullable=True)
    time_to_train_min: float | None = pa.Field(nullable=True)
    is_valid: bool = pa.Field()
    is_valid_today: bool = pa.Field()
    invalid_reason: str | None = pa.Field(nullable=True)
    failed_rule: str | None = pa.Field(nullable=True)
    later_rule_failed: str | None = pa.Field(nullable=True)
    later_rule_reason: str | None = pa.Field(nullable=True)
    global_batch_size: float | None = pa.Field(nullable=True, gt=0)
    samples_to_converge: float | None = pa.Field(nullable=True, ge=0)
    epochs_to_converge: float | None = pa.Field(nullable=True, ge=0)

    @pa.dataframe_check(error="a valid run needs a positive time to train")
    def valid_runs_have_positive_time(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select(
            ~pl.col("is_valid") | (pl.col("time_to_train_min").is_not_null() & (pl.col("time_to_train_min") > 0))
        )

    class Config:
        unique = ["round", "path"]
