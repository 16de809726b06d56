"""Scaling metrics per (round, benchmark): speedup and efficiency against a reference system.

The method of Cortes, Juiz and Bermejo (arXiv 2509.03263): the reference is the system with the
fewest accelerators and, among those, the longest time to train; speedup = T_ref / T and
efficiency = speedup / (N / N_ref), so 1.0 is perfect scaling. The same metrics are also taken
against a reference of the same accelerator model, which is what a buyer of one model needs.
"""

from __future__ import annotations

import polars as pl

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.tasks.metrics.accelerators import accelerator_families, accelerator_model_key

GROUP = ["round", "benchmark"]

EFFICIENCY_COLUMNS = [
    "round",
    "benchmark",
    "benchmark_canonical",
    "submitter",
    "system",
    "system_name",
    "availability",
    "accelerator_model_name",
    "accelerator_model",
    "accelerator_vendor",
    "accelerator_family",
    "accelerator_family_inferred",
    "accelerators",
    "number_of_nodes",
    "time_to_train_min",
    "accelerator_hours",
    "is_complete",
    "reference_system",
    "reference_accelerators",
    "reference_time_min",
    "is_reference",
    "speedup",
    "ideal_speedup",
    "efficiency",
    "reference_system_same_model",
    "reference_accelerators_same_model",
    "is_reference_same_model",
    "speedup_same_model",
    "efficiency_same_model",
    "is_pareto",
    "energy_kj",
    "average_kw",
    "energy_kj_per_accelerator",
    "is_pareto_energy",
]


def select_usable(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split scores into rows the analysis uses and exclusions with a reason.

    Only closed-division rows with an official score and a known, non-zero accelerator count.
    """
    reason = (
        pl.when(pl.col("status") == ScoreStatus.NOT_SCORED.value)
        .then(pl.format("no official score: {}", pl.col("status_reason").fill_null("not scored")))
        .when(pl.col("division").is_null())
        .then(pl.lit("division unknown: no systems JSON"))
        .when(pl.col("division") != "closed")
        .then(pl.format("{} division: not comparable with closed results", pl.col("division")))
        .when(pl.col("accelerators").is_null())
        .then(pl.lit("accelerator count unknown: no systems JSON"))
        .when(pl.col("accelerators") == 0)
        .then(pl.lit("CPU-only system: no accelerators to scale"))
        .otherwise(None)
        .alias("reason")
    )
    marked = scores.with_columns(reason)
    exclusions = marked.filter(pl.col("reason").is_not_null()).select("round", "benchmark", "submitter", "system", "reason")
    usable = marked.filter(pl.col("reason").is_null()).drop("reason")
    return usable, exclusions.sort("round", "benchmark", "submitter", "system")


def _reference(frame: pl.DataFrame, group: list[str], suffix: str) -> pl.DataFrame:
    """The reference row per group: fewest accelerators, then the longest time, then a stable name order."""
    return (
        frame.sort([*group, "accelerators", "time_to_train_min", "submitter", "system"], descending=[False] * len(group) + [False, True, False, False])
        .group_by(group, maintain_order=True)
        .first()
        .select(
            *group,
            pl.format("{}/{}", "submitter", "system").alias(f"reference_system{suffix}"),
            pl.col("accelerators").alias(f"reference_accelerators{suffix}"),
            pl.col("time_to_train_min").alias(f"reference_time_min{suffix}"),
        )
    )


def pareto_front(frame: pl.DataFrame, group: list[str], x: str, y: str) -> pl.Series:
    """True for rows no other row of the group beats on both x and y (lower is better; of equal points, the first)."""
    ordered = frame.with_row_index("__row").sort([*group, x, y])
    best_y = pl.col(y).cum_min().shift(1).over(group)
    marked = ordered.with_columns(((best_y.is_null()) | (pl.col(y) < best_y)).alias("__front")).sort("__row")
    return marked.get_column("__front")


def efficiency_table(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `efficiency` rows and the excluded score rows, from `scores` rows of any rounds."""
    usable, exclusions = select_usable(scores)
    if "energy_j" not in usable.columns:
        usable = usable.with_columns(pl.lit(None, dtype=pl.Float64).alias("energy_j"))
    names = usable.get_column("accelerator_model_name").drop_nulls().unique().sort().to_list()
    usable = usable.join(accelerator_families(names), on="accelerator_model_name", how="left")
    usable = usable.with_columns(
        # the same-model reference groups by family where the name is known (H100-SXM5-80GB and "H100 80GB HBM3"
        # alike); an unknown name is never guessed and groups only with its own spelling
        pl.coalesce(
            pl.col("accelerator_family").str.to_lowercase(),
            accelerator_model_key(pl.col("accelerator_model_name").fill_null("unknown")),
        ).alias("accelerator_model"),
        (pl.col("time_to_train_min") * pl.col("accelerators") / 60).alias("accelerator_hours"),
        (pl.col("status") == ScoreStatus.SCORED.value).alias("is_complete"),
        (pl.col("energy_j") / 1000).alias("energy_kj"),
        (pl.col("energy_j") / (pl.col("time_to_train_min") * 60) / 1000).alias("average_kw"),
        (pl.col("energy_j") / 1000 / pl.col("accelerators")).alias("energy_kj_per_accelerator"),
    )
    mixed = _reference(usable, GROUP, "")
    same = _reference(usable, [*GROUP, "accelerator_model"], "_same_model")
    table = (
        usable.join(mixed, on=GROUP, how="left")
        .join(same, on=[*GROUP, "accelerator_model"], how="left")
        .with_columns(
            (pl.format("{}/{}", "submitter", "system") == pl.col("reference_system")).alias("is_reference"),
            (pl.format("{}/{}", "submitter", "system") == pl.col("reference_system_same_model")).alias("is_reference_same_model"),
            (pl.col("reference_time_min") / pl.col("time_to_train_min")).alias("speedup"),
            (pl.col("accelerators") / pl.col("reference_accelerators")).cast(pl.Float64).alias("ideal_speedup"),
            (pl.col("reference_time_min_same_model") / pl.col("time_to_train_min")).alias("speedup_same_model"),
        )
        .with_columns(
            (pl.col("speedup") / pl.col("ideal_speedup")).alias("efficiency"),
            (pl.col("speedup_same_model") / (pl.col("accelerators") / pl.col("reference_accelerators_same_model"))).alias(
                "efficiency_same_model"
            ),
        )
    )
    table = table.with_columns(pareto_front(table, GROUP, "time_to_train_min", "accelerator_hours").alias("is_pareto"))
    # where energy was measured: not beaten on both time and energy by another measured system
    measured = table.filter(pl.col("energy_kj").is_not_null())
    front = measured.select(*GROUP, "submitter", "system").with_columns(
        pareto_front(measured, GROUP, "time_to_train_min", "energy_kj").alias("is_pareto_energy")
    )
    table = table.join(front, on=[*GROUP, "submitter", "system"], how="left")
    return table.select(EFFICIENCY_COLUMNS).sort("round", "benchmark", "accelerators", "time_to_train_min", "submitter", "system"), exclusions


def summarize_benchmarks(efficiency: pl.DataFrame) -> pl.DataFrame:
    """One line per (round, benchmark): the reference, the fastest system and the most efficient scale-out."""
    name = pl.format("{}/{}", "submitter", "system")
    fastest = (
        efficiency.sort("time_to_train_min").group_by(GROUP, maintain_order=True).first()
        .select(*GROUP, name.alias("fastest_system"), pl.col("accelerators").alias("fastest_accelerators"),
                pl.col("time_to_train_min").alias("fastest_time_min"))
    )
    scaled_out = efficiency.filter(pl.col("accelerators") > pl.col("reference_accelerators"))
    best = (
        scaled_out.sort("efficiency", descending=True).group_by(GROUP, maintain_order=True).first()
        .select(*GROUP, name.alias("best_scale_out_system"), pl.col("accelerators").alias("best_scale_out_accelerators"),
                pl.col("efficiency").alias("best_scale_out_efficiency"))
    )
    counts = efficiency.group_by(GROUP).agg(
        pl.len().alias("n_systems"),
        pl.col("accelerator_model").n_unique().alias("n_accelerator_models"),
        pl.col("is_pareto").sum().alias("n_pareto"),
        pl.col("reference_system").first(),
        pl.col("reference_accelerators").first(),
        pl.col("reference_time_min").first(),
        pl.col("accelerators").max().alias("max_accelerators"),
    )
    return counts.join(fastest, on=GROUP, how="left").join(best, on=GROUP, how="left").sort(GROUP)
