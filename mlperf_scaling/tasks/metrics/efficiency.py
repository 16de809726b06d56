"""Scaling metrics per (round, benchmark): speedup and efficiency, within comparable hardware and as the paper has it.

Within a comparable group (one accelerator model and form factor, tasks/metrics/accelerators.py), the reference is
the best system at the group's smallest configuration (fewest accelerators, then the shortest time): what the hardware
does at that size with the best software measured, so one slow submission does not make everyone else look
super-linear. The group efficiency E = (T_ref x N_ref) / (T x N) splits exactly into a throughput part and a
convergence part:

    throughput part  = (S / (T x N)) / (S_ref / (T_ref x N_ref))   training done per accelerator-minute, vs the reference
    convergence part = S_ref / S                                    training needed to reach the target, vs the reference

with S the samples (or epochs) to converge, so a planner sees whether more accelerators lose to communication or to
large-batch convergence. The paper's E' (Cortes, Juiz and Bermejo, arXiv 2509.03263) is kept as it defines it: one
reference per benchmark (fewest accelerators, then the longest time) across every accelerator, so across hardware
generations; it reproduces the paper's Table I and is labelled as the paper's metric wherever it is shown.
"""

from __future__ import annotations

import polars as pl

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.tasks.metrics.accelerators import accelerator_families

GROUP = ["round", "benchmark"]
HARDWARE = [*GROUP, "accelerator_group"]

EFFICIENCY_COLUMNS = [
    "round",
    "benchmark",
    "benchmark_canonical",
    "submitter",
    "system",
    "system_name",
    "availability",
    "accelerator_model_name",
    "accelerator_vendor",
    "accelerator_family",
    "accelerator_form_factor",
    "accelerator_group",
    "accelerator_family_inferred",
    "accelerators",
    "number_of_nodes",
    "time_to_train_min",
    "time_to_train_min_low",
    "time_to_train_min_high",
    "accelerator_hours",
    "is_complete",
    "global_batch_size",
    "samples_to_converge",
    "epochs_to_converge",
    "reference_system_group",
    "reference_accelerators_group",
    "reference_time_min_group",
    "is_reference_group",
    "speedup_group",
    "efficiency_group",
    "convergence_unit",
    "training_per_accelerator_minute",
    "throughput_part",
    "convergence_part",
    "efficiency_note",
    "reference_system",
    "reference_accelerators",
    "reference_time_min",
    "is_reference",
    "speedup",
    "ideal_speedup",
    "efficiency",
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


def _reference(frame: pl.DataFrame, group: list[str], suffix: str, fastest: bool) -> pl.DataFrame:
    """The reference row per group: fewest accelerators, then the shortest time (`fastest`) or the longest (the
    paper's choice, kept for its metric), then a stable name order."""
    return (
        frame.sort([*group, "accelerators", "time_to_train_min", "submitter", "system"],
                   descending=[False] * len(group) + [False, not fastest, False, False])
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


def _convergence(table: pl.DataFrame) -> pl.DataFrame:
    """The throughput and convergence parts of the group efficiency, in the unit both the system and its group's
    reference logged (samples where both did, else epochs)."""
    ref = table.filter(pl.col("is_reference_group")).select(
        *HARDWARE, pl.col("samples_to_converge").alias("_ref_samples"), pl.col("epochs_to_converge").alias("_ref_epochs"),
        pl.col("time_to_train_min").alias("_ref_time"), pl.col("accelerators").alias("_ref_n"),
    )
    joined = table.join(ref, on=HARDWARE, how="left")
    by_samples = pl.col("samples_to_converge").is_not_null() & pl.col("_ref_samples").is_not_null() & (pl.col("samples_to_converge") > 0)
    by_epochs = pl.col("epochs_to_converge").is_not_null() & pl.col("_ref_epochs").is_not_null() & (pl.col("epochs_to_converge") > 0)
    unit = pl.when(by_samples).then(pl.lit("samples")).when(by_epochs).then(pl.lit("epochs")).otherwise(None)
    s = pl.when(by_samples).then(pl.col("samples_to_converge")).when(by_epochs).then(pl.col("epochs_to_converge"))
    s_ref = pl.when(by_samples).then(pl.col("_ref_samples")).when(by_epochs).then(pl.col("_ref_epochs"))
    per_minute = s / (pl.col("time_to_train_min") * pl.col("accelerators"))
    per_minute_ref = s_ref / (pl.col("_ref_time") * pl.col("_ref_n"))
    return joined.with_columns(
        unit.alias("convergence_unit"),
        per_minute.alias("training_per_accelerator_minute"),
        (per_minute / per_minute_ref).alias("throughput_part"),
        (s_ref / s).alias("convergence_part"),
    ).drop("_ref_samples", "_ref_epochs", "_ref_time", "_ref_n")


# Above this, a group efficiency is said in words: more than the reference per accelerator is real but rare (another
# software stack or host, fewer samples to converge), and a reader must not take it for perfect scaling
SUPER_LINEAR = 1.1


def _note() -> pl.Expr:
    """Why an efficiency is above SUPER_LINEAR, from its two parts where they are known."""
    throughput = pl.format("{}x the reference's training per accelerator-minute (another software stack, host or "
                           "precision)", pl.col("throughput_part").round(2))
    convergence = pl.format("converged in {}x the reference's samples", (1 / pl.col("convergence_part")).round(2))
    said = (
        pl.when(pl.col("throughput_part").is_null())
        .then(pl.lit("faster per accelerator than the best system at the group's smallest size (samples to converge not logged)"))
        .when((pl.col("throughput_part") > SUPER_LINEAR) & (pl.col("convergence_part") > SUPER_LINEAR))
        .then(pl.format("{}; and {}", throughput, convergence))
        .when(pl.col("throughput_part") >= pl.col("convergence_part"))
        .then(throughput)
        .otherwise(convergence)
    )
    return (pl.when(pl.col("efficiency_group") > SUPER_LINEAR)
            .then(pl.format("super-linear against {} ({} accelerators): {}", pl.col("reference_system_group"),
                            pl.col("reference_accelerators_group"), said))
            .otherwise(None))


def efficiency_table(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `efficiency` rows and the excluded score rows, from `scores` rows of any rounds."""
    usable, exclusions = select_usable(scores)
    for column in ("energy_j", "time_to_train_min_low", "time_to_train_min_high", "global_batch_size", "samples_to_converge",
                   "epochs_to_converge"):
        if column not in usable.columns:
            usable = usable.with_columns(pl.lit(None, dtype=pl.Float64).alias(column))
    names = usable.get_column("accelerator_model_name").drop_nulls().unique().sort().to_list()
    usable = usable.join(accelerator_families(names), on="accelerator_model_name", how="left").with_columns(
        pl.col("accelerator_group").fill_null("unknown accelerator"),
        (pl.col("time_to_train_min") * pl.col("accelerators") / 60).alias("accelerator_hours"),
        (pl.col("status") == ScoreStatus.SCORED.value).alias("is_complete"),
        (pl.col("energy_j") / 1000).alias("energy_kj"),
        (pl.col("energy_j") / (pl.col("time_to_train_min") * 60) / 1000).alias("average_kw"),
        (pl.col("energy_j") / 1000 / pl.col("accelerators")).alias("energy_kj_per_accelerator"),
    )
    name = pl.format("{}/{}", "submitter", "system")
    table = (
        usable.join(_reference(usable, GROUP, "", fastest=False), on=GROUP, how="left")
        .join(_reference(usable, HARDWARE, "_group", fastest=True), on=HARDWARE, how="left")
        .with_columns(
            (name == pl.col("reference_system")).alias("is_reference"),
            (name == pl.col("reference_system_group")).alias("is_reference_group"),
            (pl.col("reference_time_min") / pl.col("time_to_train_min")).alias("speedup"),
            (pl.col("accelerators") / pl.col("reference_accelerators")).cast(pl.Float64).alias("ideal_speedup"),
            (pl.col("reference_time_min_group") / pl.col("time_to_train_min")).alias("speedup_group"),
        )
        .with_columns(
            (pl.col("speedup") / pl.col("ideal_speedup")).alias("efficiency"),
            (pl.col("speedup_group") / (pl.col("accelerators") / pl.col("reference_accelerators_group"))).alias("efficiency_group"),
        )
    )
    table = _convergence(table)
    table = table.with_columns(_note().alias("efficiency_note"))
    table = table.with_columns(pareto_front(table, GROUP, "time_to_train_min", "accelerator_hours").alias("is_pareto"))
    # where energy was measured: not beaten on both time and energy by another measured system
    measured = table.filter(pl.col("energy_kj").is_not_null())
    front = measured.select(*GROUP, "submitter", "system").with_columns(
        pareto_front(measured, GROUP, "time_to_train_min", "energy_kj").alias("is_pareto_energy")
    )
    table = table.join(front, on=[*GROUP, "submitter", "system"], how="left")
    return table.select(EFFICIENCY_COLUMNS).sort("round", "benchmark", "accelerators", "time_to_train_min", "submitter", "system"), exclusions


def summarize_benchmarks(efficiency: pl.DataFrame) -> pl.DataFrame:
    """One line per (round, benchmark): the paper's reference, the fastest system, and the most efficient scale-out
    within comparable hardware (the group's efficiency, only configurations larger than the group's reference)."""
    name = pl.format("{}/{}", "submitter", "system")
    fastest = (
        efficiency.sort("time_to_train_min").group_by(GROUP, maintain_order=True).first()
        .select(*GROUP, name.alias("fastest_system"), pl.col("accelerators").alias("fastest_accelerators"),
                pl.col("time_to_train_min").alias("fastest_time_min"), pl.col("accelerator_group").alias("fastest_group"))
    )
    scaled_out = efficiency.filter(pl.col("accelerators") > pl.col("reference_accelerators_group"))
    best = (
        scaled_out.sort("efficiency_group", "accelerators", descending=[True, True]).group_by(GROUP, maintain_order=True).first()
        .select(*GROUP, name.alias("best_scale_out_system"), pl.col("accelerators").alias("best_scale_out_accelerators"),
                pl.col("efficiency_group").alias("best_scale_out_efficiency"), pl.col("accelerator_group").alias("best_scale_out_group"),
                pl.col("reference_accelerators_group").alias("best_scale_out_reference_accelerators"))
    )
    counts = efficiency.group_by(GROUP).agg(
        pl.len().alias("n_systems"),
        pl.col("accelerator_group").n_unique().alias("n_accelerator_groups"),
        pl.col("is_pareto").sum().alias("n_pareto"),
        pl.col("benchmark_canonical").first(),
        pl.col("reference_system").first(),
        pl.col("reference_accelerators").first(),
        pl.col("reference_time_min").first(),
        pl.col("accelerators").max().alias("max_accelerators"),
    )
    return counts.join(fastest, on=GROUP, how="left").join(best, on=GROUP, how="left").sort(GROUP)
