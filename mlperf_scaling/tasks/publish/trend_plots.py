"""The plots across rounds: a workload's best time to train round by round (reports/trends/), and why its results
scale differently (reports/why/): accelerator-minutes by scale-up fabric, power and energy where measured."""

from __future__ import annotations

from pathlib import Path

# isort: off
import mlperf_scaling.tasks.publish.plot_canvas  # noqa: F401  # matplotlib set up (headless, text kept as text) before pyplot
# isort: on
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from mlperf_scaling.reference.lookup import canonical_benchmark  # noqa: E402
from mlperf_scaling.rounds import sorted_rounds, suite_of  # noqa: E402
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS, NOTE  # noqa: E402
from mlperf_scaling.tasks.publish.plot_canvas import SMALLEST_PT, fit_layout, log2_axis, plain_log_axis, save_figure, scaffold  # noqa: E402

_COLOURS = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]  # a ListedColormap; a trend's lines, by rank


def _gapped(positions: list[int], values: list[float]) -> tuple[list[float], list[float]]:
    """The series with a gap (NaN) where rounds are missing, so no line bridges them as if adjacent."""
    xs: list[float] = []
    ys: list[float] = []
    for i, (x, y) in enumerate(zip(positions, values, strict=True)):
        if i and x - positions[i - 1] > 1:
            xs.append(np.nan)
            ys.append(np.nan)
        xs.append(x)
        ys.append(y)
    return xs, ys


def plot_trends(trends: pl.DataFrame, folder: Path, all_rounds: list[str] | None = None,
                formats: tuple[str, ...] = DEFAULT_FORMATS) -> dict[str, list[Path]]:
    """One plot per workload, drawn on every core: best time to train per round, a line per (comparable group,
    accelerator count); rounds without a result leave a gap (dotted) rather than a line that reads as adjacent rounds."""
    from mlperf_scaling.runtime.dispatch import map_on_cores
    from mlperf_scaling.runtime.pools import DRAW

    folder.mkdir(parents=True, exist_ok=True)
    rounds = all_rounds or trends.select("round", "round_order").unique().sort("round_order")["round"].to_list()
    # a workload's axis holds its own suite's rounds only: Training's v0.7 and HPC's hpc-v0.7 are different rounds
    calls = [(str(workload), group, folder, [r for r in rounds if suite_of(r) == suite_of(group["round"][0])], formats)
             for (workload,), group in trends.group_by(["benchmark_canonical"], maintain_order=True)]
    return dict(zip([call[0] for call in calls], map_on_cores(plot_trend, calls, DRAW, writes_into=2), strict=True))


def plot_trend(workload: str, group: pl.DataFrame, folder: Path, rounds: list[str], formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """The trend plot of one workload (its rows of `round_trends`)."""
    position = {r: i for i, r in enumerate(rounds)}
    fig, ax = scaffold("trend", (9, 5.2))
    # ties broken by name too: group_by's order varies from run to run, and the order gives each line its colour
    series = (group.group_by("accelerator_group", "accelerators").agg(pl.len().alias("n"))
              .sort("n", "accelerators", "accelerator_group", descending=[True, False, False]).head(8))
    for colour, (name, accelerators, _) in zip(_COLOURS, series.iter_rows(), strict=False):
        line = group.filter((pl.col("accelerator_group") == name) & (pl.col("accelerators") == accelerators)).sort("round_order")
        xs = [position[r] for r in line["round"]]
        ys = line["best_time_min"].to_list()
        ax.plot(xs, ys, color=colour, linestyle=":", linewidth=0.9)  # across missing rounds: dotted
        ax.plot(*_gapped(xs, ys), color=colour, marker="o", label=f"{name} x {accelerators:,}")
    used = sorted({position[r] for r in group["round"]})
    shown = range(min(used), max(used) + 1)
    ax.set_xticks(list(shown), [rounds[i] for i in shown])
    ax.set_yscale("log")
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("MLPerf Training round (dotted: a round without this result)")
    ax.set_ylabel("best time to train, minutes (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALLEST_PT, loc="best", title="accelerator group x count", title_fontsize=SMALLEST_PT)
    ax.set_title(f"{canonical_benchmark(workload).label}: best time to train at the same scale, round by round", fontsize=11)
    fit_layout(fig, f"Official scores; results carried over unchanged from an earlier round are counted once. {NOTE}")
    return save_figure(fig, folder, f"{workload}_trend", formats)


_KIND_COLOURS = {"NVLink + NVSwitch": "#1f77b4", "NVLink": "#17becf", "Infinity Fabric": "#d62728", "TPU ICI": "#2ca02c", "HCCS": "#9467bd",
                 "IPU-Link": "#8c564b", "RoCE": "#ff7f0e", "PCIe": "#7f7f7f", None: "#cccccc"}


def plot_why(workload: str, context: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Accelerator-minutes against accelerators for every result of a workload across rounds, coloured by the scale-up
    fabric: at one count, a lower point is a system that needed less accelerator time, and the colours show whether
    the fabric goes with it."""
    fig, ax = scaffold("why", (11, 5.6))
    frame = context.filter(pl.col("accelerators") > 0).with_columns((pl.col("time_to_train_min") * pl.col("accelerators")).alias("accelerator_minutes"))
    for kind, colour in _KIND_COLOURS.items():
        part = frame.filter(pl.col("interconnect_kind").is_null() if kind is None else pl.col("interconnect_kind") == kind)
        if part.height:
            ax.scatter(part["accelerators"], part["accelerator_minutes"], s=28, color=colour, alpha=0.85, edgecolors="white", linewidths=0.4,
                       label=f"{kind or 'fabric not stated'} ({part.height})")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    log2_axis(ax.xaxis, frame["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("accelerator-minutes to train (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=SMALLEST_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="scale-up fabric", title_fontsize=SMALLEST_PT)
    rounds = sorted_rounds(frame["round"].unique().to_list())
    span = rounds[0] if len(rounds) == 1 else f"{rounds[0]} to {rounds[-1]}"
    ax.set_title(f"MLPerf Training {span} · {canonical_benchmark(workload).label}: accelerator-minutes by scale-up fabric\n"
                 f"{frame.height:,} results", fontsize=11)
    fit_layout(fig, f"{NOTE} Source: MLPerf Training results; fabric from the systems JSON.")
    return save_figure(fig, folder, f"{workload}_why", formats)


def plot_power(workload: str, context: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Where power was measured: watts per accelerator and joules per sample against accelerators, per submitter and
    AC or DC, so the energy cost of scaling out reads beside the time it saves."""
    frame = context.filter(pl.col("w_per_accelerator").is_not_null(), pl.col("accelerators") > 0).sort("accelerators")
    fig, axes = scaffold("power", (12, 4.8), ncols=2)
    for (submitter, measurement), part in frame.group_by(["submitter", "measurement"], maintain_order=True):
        label = f"{submitter} ({measurement or 'AC/DC not stated'})"
        marker = "s" if measurement == "DC" else "o"
        axes[0].plot(part["accelerators"], part["w_per_accelerator"], marker=marker, linewidth=1, label=label)
        per_sample = part.filter(pl.col("j_per_sample").is_not_null())
        axes[1].plot(per_sample["accelerators"], per_sample["j_per_sample"], marker=marker, linewidth=1, label=label)
    for ax, ylabel in zip(axes, ("mean power per accelerator, W (node power / accelerators)", "energy per sample, J (log scale)"), strict=True):
        ax.set_xscale("log", base=2)
        log2_axis(ax.xaxis, frame["accelerators"].to_list())
        ax.set_xlabel("accelerators (log2 scale)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    axes[1].set_yscale("log")
    plain_log_axis(axes[1].yaxis)
    axes[1].legend(fontsize=SMALLEST_PT, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    rounds = sorted_rounds(frame["round"].unique().to_list())
    fig.suptitle(f"MLPerf Training {', '.join(rounds)} · {canonical_benchmark(workload).label}: power and energy against accelerators\n"
                 f"{frame.height:,} results with power logs", fontsize=11)
    fit_layout(fig, f"{NOTE} Source: MLPerf Training power logs.")
    return save_figure(fig, folder, f"{workload}_power", formats)
