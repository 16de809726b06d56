"""Across rounds: how time to train moved from round to round for one workload on one accelerator family at the
same scale (software and system gains on the same hardware), with logs carried over between rounds counted once."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tasks.metrics import accelerator_families
from tasks.reference import round_key

TREND_COLUMNS = [
    "benchmark_canonical", "accelerator_family", "accelerators", "round", "round_order", "n_systems", "best_time_min",
    "best_system", "median_time_min", "speedup_vs_first", "first_round", "n_carried_over",
]


def carried_over_groups(runs: pl.DataFrame) -> pl.DataFrame:
    """(round, submitter, system, benchmark) whose every log was already published in an earlier round.

    A log is a copy when it is byte-identical to an earlier round's log, or when it records the very same run
    (identical run_start and run_stop to the millisecond: re-published logs with changed line ends or headers).
    """
    order = runs.with_columns(
        pl.col("round").map_elements(lambda r: round_key(r)[0] * 100 + round_key(r)[1], return_dtype=pl.Int64).alias("order"),
        pl.format("{}-{}", pl.col("run_start_ms"), pl.col("run_stop_ms")).alias("run_identity"),
    )
    by_bytes = order.group_by("sha256").agg(pl.col("order").min().alias("first_by_bytes"))
    by_run = order.filter(pl.col("run_start_ms").is_not_null() & pl.col("run_stop_ms").is_not_null()).group_by("run_identity").agg(
        pl.col("order").min().alias("first_by_run"))
    marked = order.join(by_bytes, on="sha256", how="left").join(by_run, on="run_identity", how="left").with_columns(
        ((pl.col("first_by_bytes") < pl.col("order")) | (pl.col("first_by_run").fill_null(10**9) < pl.col("order"))).alias("is_copy"))
    return (
        marked.group_by("round", "submitter", "system", "benchmark")
        .agg(pl.col("is_copy").all().alias("is_carried_over"), pl.col("is_copy").sum().alias("n_copied_logs"))
        .filter(pl.col("n_copied_logs") > 0)
    )


def trend_table(scores: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Best and median official time per (workload, family, accelerator count, round); carried-over results skipped."""
    carried = carried_over_groups(runs)
    usable = (
        scores.filter((pl.col("division") == "closed") & (pl.col("status") != "not_scored") & (pl.col("accelerators") > 0))
        .join(accelerator_families(), on="accelerator_model_name", how="left")
        .filter(pl.col("accelerator_family").is_not_null())
        .join(carried.select("round", "submitter", "system", "benchmark", "is_carried_over"),
              on=["round", "submitter", "system", "benchmark"], how="left")
        .with_columns(pl.col("is_carried_over").fill_null(False))
    )
    key = ["benchmark_canonical", "accelerator_family", "accelerators", "round"]
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
            pl.col("round").map_elements(lambda r: round_key(r)[0] * 100 + round_key(r)[1], return_dtype=pl.Int64).alias("round_order"),
        )
    )
    series = ["benchmark_canonical", "accelerator_family", "accelerators"]
    # only configurations seen in at least two rounds show a trend
    lasting = per_round.group_by(series).agg(pl.col("round").n_unique().alias("n_rounds")).filter(pl.col("n_rounds") >= 2)
    trends = per_round.join(lasting.select(series), on=series, how="inner").sort([*series, "round_order"])
    trends = trends.with_columns(
        (pl.col("best_time_min").first().over(series) / pl.col("best_time_min")).alias("speedup_vs_first"),
        pl.col("round").first().over(series).alias("first_round"),
    )
    return trends.select(TREND_COLUMNS)


def plot_trends(trends: pl.DataFrame, folder: Path) -> dict[str, list[Path]]:
    """One plot per workload: best time to train per round, a line per (family, accelerator count)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tasks.plots import NOTE, _plain_log_axis

    folder.mkdir(parents=True, exist_ok=True)
    outputs = {}
    rounds = trends.select("round", "round_order").unique().sort("round_order")
    position = {r: i for i, r in enumerate(rounds["round"])}
    for (workload,), group in trends.group_by(["benchmark_canonical"], maintain_order=True):
        fig, ax = plt.subplots(figsize=(9, 5.2))
        series = group.group_by("accelerator_family", "accelerators").agg(pl.len().alias("n")).sort("n", "accelerators", descending=[True, False]).head(8)
        for family, accelerators, _ in series.iter_rows():
            line = group.filter((pl.col("accelerator_family") == family) & (pl.col("accelerators") == accelerators)).sort("round_order")
            ax.plot([position[r] for r in line["round"]], line["best_time_min"], marker="o", label=f"{family} x {accelerators:,}")
        used = sorted({position[r] for r in group["round"]})
        ax.set_xticks(used, [rounds["round"][i] for i in used])
        ax.set_yscale("log")
        _plain_log_axis(ax.yaxis)
        ax.set_xlabel("MLPerf Training round")
        ax.set_ylabel("best time to train, minutes (log scale)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="best", title="accelerator family x count", title_fontsize=8)
        ax.set_title(f"{workload}: best time to train at the same scale, round by round", fontsize=11)
        fig.text(0.01, 0.01, f"Official scores; results carried over unchanged from an earlier round are counted once. {NOTE}",
                 fontsize=7, color="#555555")
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        paths = [folder / f"{workload}_trend.png", folder / f"{workload}_trend.svg"]
        fig.savefig(paths[0], dpi=110)
        fig.savefig(paths[1])
        plt.close(fig)
        outputs[workload] = paths
    return outputs
