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
from mlperf_scaling.reference.lookup import analysis_folder
from mlperf_scaling.tasks.metrics.accelerators import with_accelerator_classes
from mlperf_scaling.tasks.parse.tpu_slices import tpu_slice

GROUP = ["round", "benchmark"]


def by_workload(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` (rows of scores, energy) with each round's workload under one benchmark name: a round's second folder of
    the same workload (v0.6 Google's `mask` beside `maskrcnn`) is analysed with it, not as a workload of its own."""
    if frame.height == 0:
        return frame
    pairs = frame.select("round", "benchmark").unique()
    folded = pairs.with_columns(pl.struct("benchmark", "round").map_elements(
        lambda pair: analysis_folder(pair["benchmark"], pair["round"]), return_dtype=pl.String).alias("_analysed"))
    if (folded["_analysed"] == folded["benchmark"]).all():
        return frame
    return (frame.join(folded, on=["round", "benchmark"], how="left")
            .with_columns(pl.col("_analysed").alias("benchmark")).drop("_analysed"))
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
    "reference_system",
    "reference_accelerators",
    "reference_time_min",
    "is_reference",
    "speedup",
    "efficiency",
    "convergence_unit",
    "training_per_accelerator_minute",
    "throughput_part",
    "convergence_part",
    "efficiency_note",
    "parts_note",
    "paper_reference_system",
    "paper_reference_accelerators",
    "paper_reference_time_min",
    "is_paper_reference",
    "paper_speedup",
    "paper_ideal_speedup",
    "paper_e_prime",
    "is_pareto",
    "energy_kj",
    "average_kw",
    "energy_kj_per_accelerator",
    "is_pareto_energy",
    "scale_unit",  # last: the CSV files' columns before it keep their places
]


def _count_contradicts_name() -> pl.Expr:
    """Why a row's accelerator count is known to be wrong, or null: its accelerator names a TPU slice of another number
    of chips. Ingest reads a slice's cores as chips (tasks/parse/tpu_slices.py); a count that is neither is left as
    written and kept out of the analysis."""
    chips = pl.col("accelerator_model_name").map_elements(lambda name: (found := tpu_slice(name)) and found.chips, return_dtype=pl.Int64)
    return (pl.when(chips.is_not_null() & (pl.col("accelerators") != chips))
            .then(pl.format("accelerator count known to be wrong: the systems file gives {} nodes x its accelerators = {}, "
                            "but {} names a slice of {} chips; kept in scores as published, left out of efficiency, fits and "
                            "recommendations", pl.col("number_of_nodes").fill_null(0), pl.col("accelerators"),
                            pl.col("accelerator_model_name"), chips))
            .otherwise(None))


def select_usable(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Split scores into rows the analysis uses and exclusions with a reason.

    Only closed-division rows with an official score and a known, non-zero accelerator count that is not known to be
    wrong.
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
        .otherwise(_count_contradicts_name())
        .alias("reason")
    )
    marked = scores.with_columns(reason)
    exclusions = marked.filter(pl.col("reason").is_not_null()).select("round", "benchmark", "submitter", "system", "reason")
    usable = marked.filter(pl.col("reason").is_null()).drop("reason")
    return usable, exclusions.sort("round", "benchmark", "submitter", "system")


def _reference(frame: pl.DataFrame, group: list[str], prefix: str, fastest: bool) -> pl.DataFrame:
    """The reference row per group: fewest accelerators, then the shortest time (`fastest`) or the longest (the
    paper's choice, kept for its metric), then a stable name order."""
    return (
        frame.sort([*group, "accelerators", "time_to_train_min", "submitter", "system"],
                   descending=[False] * len(group) + [False, not fastest, False, False])
        .group_by(group, maintain_order=True)
        .first()
        .select(
            *group,
            pl.format("{}/{}", "submitter", "system").alias(f"{prefix}reference_system"),
            pl.col("accelerators").alias(f"{prefix}reference_accelerators"),
            pl.col("time_to_train_min").alias(f"{prefix}reference_time_min"),
        )
    )


def pareto_front(frame: pl.DataFrame, group: list[str], x: str, y: str) -> pl.Series:
    """True for rows no other row of the group beats on both x and y (lower is better; of equal points, the first)."""
    ordered = frame.with_row_index("__row").sort([*group, x, y])
    best_y = pl.col(y).cum_min().shift(1).over(group)
    marked = ordered.with_columns(((best_y.is_null()) | (pl.col(y) < best_y)).alias("__front")).sort("__row")
    return marked.get_column("__front")


# A part outside this range is not a split of the efficiency but two logs counting in different units (v2.1 Baidu
# BERT logs a samples count of about 1 against its reference's 2.5 million: a convergence part of 2,478,896)
PLAUSIBLE_PART = (0.05, 20.0)


def _convergence(table: pl.DataFrame) -> pl.DataFrame:
    """The throughput and convergence parts of the efficiency, in the unit both the system and its group's reference
    logged (samples where both did, else epochs), and only where both parts are plausible; otherwise empty, with
    `parts_note` saying why."""
    ref = table.filter(pl.col("is_reference")).select(
        *HARDWARE, pl.col("samples_to_converge").alias("_ref_samples"), pl.col("epochs_to_converge").alias("_ref_epochs"),
        pl.col("time_to_train_min").alias("_ref_time"), pl.col("accelerators").alias("_ref_n"),
    )
    joined = table.join(ref, on=HARDWARE, how="left")
    logged = {unit: pl.col(f"{unit}_to_converge").is_not_null() & (pl.col(f"{unit}_to_converge") > 0) for unit in ("samples", "epochs")}
    ref_logged = {unit: pl.col(f"_ref_{unit}").is_not_null() & (pl.col(f"_ref_{unit}") > 0) for unit in ("samples", "epochs")}
    by_samples, by_epochs = logged["samples"] & ref_logged["samples"], logged["epochs"] & ref_logged["epochs"]
    unit = pl.when(by_samples).then(pl.lit("samples")).when(by_epochs).then(pl.lit("epochs")).otherwise(None)
    s = pl.when(by_samples).then(pl.col("samples_to_converge")).when(by_epochs).then(pl.col("epochs_to_converge"))
    s_ref = pl.when(by_samples).then(pl.col("_ref_samples")).when(by_epochs).then(pl.col("_ref_epochs"))
    per_minute = s / (pl.col("time_to_train_min") * pl.col("accelerators"))
    per_minute_ref = s_ref / (pl.col("_ref_time") * pl.col("_ref_n"))
    low, high = PLAUSIBLE_PART
    split = joined.with_columns(
        unit.alias("convergence_unit"),
        per_minute.alias("training_per_accelerator_minute"),
        (per_minute / per_minute_ref).alias("_throughput"),
        (s_ref / s).alias("_convergence"),
        s.alias("_s"), s_ref.alias("_s_ref"),
    )
    plausible = pl.col("_throughput").is_between(low, high) & pl.col("_convergence").is_between(low, high)
    logged_any = logged["samples"] | logged["epochs"]
    ref_any = ref_logged["samples"] | ref_logged["epochs"]
    note = (
        pl.when(pl.col("convergence_unit").is_not_null() & plausible).then(None)
        .when(~logged_any).then(pl.lit("no split: this system's logs give no samples or epochs to converge"))
        .when(~ref_any).then(pl.format("no split: the reference {} logs no samples or epochs to converge", pl.col("reference_system")))
        .when(pl.col("convergence_unit").is_null())
        .then(pl.format("no split: this system counts convergence in {} and the reference {} in {}",
                        pl.when(logged["samples"]).then(pl.lit("samples")).otherwise(pl.lit("epochs")), pl.col("reference_system"),
                        pl.when(ref_logged["samples"]).then(pl.lit("samples")).otherwise(pl.lit("epochs"))))
        .otherwise(pl.format("no split: {} {} to converge against the reference's {} gives a throughput part of {} and a convergence "
                             "part of {}, outside [{}, {}]: not a plausible split (the logs count in different units, or a count is wrong)",
                             pl.col("_s").round_sig_figs(4), pl.col("convergence_unit"), pl.col("_s_ref").round_sig_figs(4),
                             pl.col("_throughput").round_sig_figs(3), pl.col("_convergence").round_sig_figs(3), pl.lit(low), pl.lit(high)))
    )
    kept = pl.col("convergence_unit").is_not_null() & plausible
    return split.with_columns(
        note.alias("parts_note"),
        pl.when(kept).then(pl.col("_throughput")).alias("throughput_part"),
        pl.when(kept).then(pl.col("_convergence")).alias("convergence_part"),
        pl.when(kept).then(pl.col("convergence_unit")).alias("convergence_unit"),
        pl.when(kept).then(pl.col("training_per_accelerator_minute")).alias("training_per_accelerator_minute"),
    ).drop("_ref_samples", "_ref_epochs", "_ref_time", "_ref_n", "_throughput", "_convergence", "_s", "_s_ref")


# Above this, a group efficiency is said in words: more than the reference per accelerator is real but rare (another
# software stack or host, fewer samples to converge), and a reader must not take it for better than perfect scaling
SUPER_LINEAR = 1.0
ALSO_SAID = 1.05  # the smaller of the two parts is named beside the larger only when it too is this far above 1


def _two_decimals(value: pl.Expr) -> pl.Expr:
    """A ratio as text with two decimals, 1.00 rather than 1.0."""
    hundredths = (value * 100).round(0).cast(pl.Int64)
    return pl.format("{}.{}", hundredths // 100, (hundredths % 100).cast(pl.String).str.zfill(2))


def _note() -> pl.Expr:
    """Why an efficiency is above 1 (SUPER_LINEAR), from its two parts where they are known."""
    throughput = pl.format("{}x the reference's training per accelerator-minute (another software stack, host or "
                           "precision)", _two_decimals(pl.col("throughput_part")))
    convergence = pl.format("converged in {}x the reference's samples", _two_decimals(1 / pl.col("convergence_part")))
    said = (
        pl.when(pl.col("throughput_part").is_null())
        .then(pl.format("faster per accelerator than the best system at the group's smallest size ({})", pl.col("parts_note")))
        .when((pl.col("throughput_part") > ALSO_SAID) & (pl.col("convergence_part") > ALSO_SAID))
        .then(pl.when(pl.col("throughput_part") >= pl.col("convergence_part")).then(pl.format("{}; and {}", throughput, convergence))
              .otherwise(pl.format("{}; and {}", convergence, throughput)))
        .when(pl.col("throughput_part") >= pl.col("convergence_part"))
        .then(throughput)
        .otherwise(convergence)
    )
    return (pl.when(pl.col("efficiency") > SUPER_LINEAR)
            .then(pl.format("super-linear against {} ({} accelerators): {}", pl.col("reference_system"),
                            pl.col("reference_accelerators"), said))
            .otherwise(None))


def processors_where_no_accelerators(scores: pl.DataFrame) -> pl.DataFrame:
    """MLPerf HPC's CPU-only systems (Fugaku's A64FX, Cori's Xeon Phi) scale by their processors: for them `accelerators`
    becomes the host processor count their systems JSON states, the model their processor's, and `scale_unit` says
    which is counted. Training's CPU-only rows stay out of the analysis, as they always were."""
    if "host_processors" not in scores.columns:
        return scores.with_columns(pl.lit("accelerators").alias("scale_unit"))
    cpu_only = (pl.col("accelerators") == 0) & (pl.col("host_processors") > 0) & (pl.col("suite") == "hpc")
    return scores.with_columns(
        pl.when(cpu_only).then(pl.lit("processors")).otherwise(pl.lit("accelerators")).alias("scale_unit"),
        pl.when(cpu_only).then(pl.col("host_processors")).otherwise(pl.col("accelerators")).alias("accelerators"),
        pl.when(cpu_only).then(pl.col("host_processor_model_name")).otherwise(pl.col("accelerator_model_name")).alias("accelerator_model_name"),
    )


def efficiency_table(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The `efficiency` rows and the excluded score rows, from `scores` rows of any rounds."""
    usable, exclusions = select_usable(processors_where_no_accelerators(scores))
    for column in ("energy_j", "time_to_train_min_low", "time_to_train_min_high", "global_batch_size", "samples_to_converge",
                   "epochs_to_converge"):
        if column not in usable.columns:
            usable = usable.with_columns(pl.lit(None, dtype=pl.Float64).alias(column))
    usable = with_accelerator_classes(usable).with_columns(
        pl.col("accelerator_group").fill_null("unknown accelerator"),
        (pl.col("time_to_train_min") * pl.col("accelerators") / 60).alias("accelerator_hours"),
        (pl.col("status") == ScoreStatus.SCORED.value).alias("is_complete"),
        (pl.col("energy_j") / 1000).alias("energy_kj"),
        (pl.col("energy_j") / (pl.col("time_to_train_min") * 60) / 1000).alias("average_kw"),
        (pl.col("energy_j") / 1000 / pl.col("accelerators")).alias("energy_kj_per_accelerator"),
    )
    name = pl.format("{}/{}", "submitter", "system")
    table = (
        usable.join(_reference(usable, GROUP, "paper_", fastest=False), on=GROUP, how="left")
        .join(_reference(usable, HARDWARE, "", fastest=True), on=HARDWARE, how="left")
        .with_columns(
            (name == pl.col("paper_reference_system")).alias("is_paper_reference"),
            (name == pl.col("reference_system")).alias("is_reference"),
            (pl.col("paper_reference_time_min") / pl.col("time_to_train_min")).alias("paper_speedup"),
            (pl.col("accelerators") / pl.col("paper_reference_accelerators")).cast(pl.Float64).alias("paper_ideal_speedup"),
            (pl.col("reference_time_min") / pl.col("time_to_train_min")).alias("speedup"),
        )
        .with_columns(
            (pl.col("paper_speedup") / pl.col("paper_ideal_speedup")).alias("paper_e_prime"),
            (pl.col("speedup") / (pl.col("accelerators") / pl.col("reference_accelerators"))).alias("efficiency"),
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
    scaled_out = efficiency.filter(pl.col("accelerators") > pl.col("reference_accelerators"))
    best = (
        scaled_out.sort("efficiency", "accelerators", descending=[True, True]).group_by(GROUP, maintain_order=True).first()
        .select(*GROUP, name.alias("best_scale_out_system"), pl.col("accelerators").alias("best_scale_out_accelerators"),
                pl.col("efficiency").alias("best_scale_out_efficiency"), pl.col("accelerator_group").alias("best_scale_out_group"),
                pl.col("reference_accelerators").alias("best_scale_out_reference_accelerators"))
    )
    counts = efficiency.group_by(GROUP).agg(
        pl.len().alias("n_systems"),
        pl.col("accelerator_group").n_unique().alias("n_accelerator_groups"),
        pl.col("is_pareto").sum().alias("n_pareto"),
        pl.col("benchmark_canonical").first(),
        pl.col("paper_reference_system").first(),
        pl.col("paper_reference_accelerators").first(),
        pl.col("paper_reference_time_min").first(),
        pl.col("accelerators").max().alias("max_accelerators"),
    )
    return counts.join(fastest, on=GROUP, how="left").join(best, on=GROUP, how="left").sort(GROUP)
