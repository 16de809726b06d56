"""Across rounds: how time to train moved from round to round for one workload on one comparable accelerator group (model and
form factor) at the same scale (software and system gains on the same hardware), with logs carried over between rounds counted once."""

from __future__ import annotations

import polars as pl

from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.accelerators import with_accelerator_classes
from mlperf_scaling.tasks.metrics.efficiency import select_usable

TREND_COLUMNS = [
    "benchmark_canonical", "accelerator_group", "accelerators", "round", "round_order", "n_systems", "best_time_min",
    "best_system", "median_time_min", "speedup_vs_first", "first_round", "n_carried_over",
]


def carried_over_groups(runs: pl.DataFrame) -> pl.DataFrame:
    """(round, submitter, system, benchmark, scaling mode) whose every log was already published in an earlier round.

    A log is a copy when it is byte-identical to an earlier round's log, or when it records the very same run
    (identical run_start and run_stop to the millisecond: re-published logs with changed line ends or headers).
    """
    order = runs.with_columns(
        pl.col("round").map_elements(round_order, return_dtype=pl.Int64).alias("order"),
        pl.format("{}-{}", pl.col("run_start_ms"), pl.col("run_stop_ms")).alias("run_identity"),
    )
    by_bytes = order.group_by("sha256").agg(pl.col("order").min().alias("first_by_bytes"))
    by_run = order.filter(pl.col("run_start_ms").is_not_null() & pl.col("run_stop_ms").is_not_null()).group_by("run_identity").agg(
        pl.col("order").min().alias("first_by_run"))
    marked = order.join(by_bytes, on="sha256", how="left").join(by_run, on="run_identity", how="left").with_columns(
        ((pl.col("first_by_bytes") < pl.col("order")) | (pl.col("first_by_run").fill_null(10**9) < pl.col("order"))).alias("is_copy"))
    return (
        marked.group_by("round", "submitter", "system", "benchmark", "scaling_mode")
        .agg(pl.col("is_copy").all().alias("is_carried_over"), pl.col("is_copy").sum().alias("n_copied_logs"))
        .filter(pl.col("n_copied_logs") > 0)
        .sort("round", "submitter", "system", "benchmark", "scaling_mode")  # group_by order is not stable
    )


def trend_table(scores: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Best and median official time per (workload, accelerator group, accelerator count, round); carried-over results skipped."""
    carried = carried_over_groups(runs)
    usable, _ = select_usable(scores)
    usable = (
        with_accelerator_classes(usable)
        .filter(pl.col("accelerator_family").is_not_null())  # a name nobody can place starts no series
        .join(carried.filter(pl.col("scaling_mode") == "strong").select("round", "submitter", "system", "benchmark", "is_carried_over"),
              on=["round", "submitter", "system", "benchmark"], how="left")
        .with_columns(pl.col("is_carried_over").fill_null(False))
    )
    key = ["benchmark_canonical", "accelerator_group", "accelerators", "round"]
    fresh = usable.filter(~pl.col("is_carried_over"))
    per_round = (
        fresh.sort("time_to_train_min")
        .group_by(key, maintain_order=True)
        .agg(
            pl.len().alias("n_systems"),
            pl.col("time_to_train_min").min().alias("best_time_min"),
            pl.format("{}/{}", "submitter", "system").first().alias("best_system"),
            pl.col("time_to_train_min").median().alias("median_time_min"),
        )
        .join(usable.filter(pl.col("is_carried_over")).group_by(key).agg(pl.len().alias("n_carried_over")), on=key, how="left")
        .with_columns(
            pl.col("n_carried_over").fill_null(0),
            pl.col("round").map_elements(round_order, return_dtype=pl.Int64).alias("round_order"),
        )
    )
    series = ["benchmark_canonical", "accelerator_group", "accelerators"]
    # only configurations seen in at least two rounds show a trend
    lasting = per_round.group_by(series).agg(pl.col("round").n_unique().alias("n_rounds")).filter(pl.col("n_rounds") >= 2)
    trends = per_round.join(lasting.select(series), on=series, how="inner").sort([*series, "round_order"])
    trends = trends.with_columns(
        (pl.col("best_time_min").first().over(series) / pl.col("best_time_min")).alias("speedup_vs_first"),
        pl.col("round").first().over(series).alias("first_round"),
    )
    return trends.select(TREND_COLUMNS)
