"""Scaling plots per (round, benchmark), drawn from the `efficiency` and `clusters` tables.

Each view as SVG (and PNG on request): scaling within comparable hardware (the efficiency of every system and of the
planner's best time per count, with its 90 % interval, and the throughput and convergence parts), time to train with
the run-to-run spread and its Pareto front, energy where measured, systems by accelerator group (the paper's Figures 1,
3, 5, 7) and the paper's E′ (Figures 2, 4, 6, 8), under its own name.
"""

from __future__ import annotations

from pathlib import Path

# isort: off
import mlperf_scaling.tasks.publish.plot_canvas  # noqa: F401  # matplotlib set up (headless, text kept as text) before pyplot
# isort: on
import matplotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

from mlperf_scaling.reference.lookup import canonical_benchmark  # noqa: E402
from mlperf_scaling.rounds import sorted_rounds  # noqa: E402
from mlperf_scaling.tasks.planning.calibration import Calibration  # noqa: E402
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS, MIN_ENERGY_POINTS, NOTE, PLOT_KINDS, workload_label, wrapped_name  # noqa: E402, F401
from mlperf_scaling.tasks.publish.plot_canvas import fit_layout, save_figure, scaffold  # matplotlib set up first

_COLOURS = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]  # a ListedColormap


TITLE_CHARACTERS = 85  # about what a 9-inch figure holds on one line at 11 pt


def title_text(round_name: str, benchmark: str, what: str, n_systems: int) -> str:
    first = f"MLPerf Training {round_name} · {workload_label(benchmark, round_name)}: {what}"
    if len(first) > TITLE_CHARACTERS:  # it would run past the figure's edges: what is shown goes on a line of its own
        first = f"MLPerf Training {round_name} · {workload_label(benchmark, round_name)}:\n{what}"
    return f"{first}\n{n_systems:,} system{'' if n_systems == 1 else 's'}"


def _title(ax, round_name: str, benchmark: str, what: str, n_systems: int) -> None:
    ax.set_title(title_text(round_name, benchmark, what, n_systems), fontsize=11)


def _footer(fig, round_name: str) -> None:
    fig.text(0.01, 0.01, f"{NOTE} Source: MLPerf Training {round_name} results.", fontsize=7.5, color="#555555")


def _log2_axis(axis, values) -> None:
    """Powers of two as ticks, labelled as plain counts."""
    low, high = max(min(values), 1), max(values)
    exponents = range(int(np.floor(np.log2(low))), int(np.ceil(np.log2(high))) + 1)
    ticks = [2**e for e in exponents]
    if len(ticks) > 12:  # keep labels apart on wide ranges
        ticks = ticks[:: int(np.ceil(len(ticks) / 12))]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}"))


def plain_log_axis(axis) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, ... rather than in powers."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _cluster_colour(cluster: int) -> tuple:
    return _COLOURS[cluster % len(_COLOURS)]


def _finish(fig, ax, round_name: str, benchmark: str, what: str, n_systems: int, folder: Path, stem: str,
            formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Title, layout and the derived-metrics note, then the PNG and SVG files."""
    _title(ax, round_name, benchmark, what, n_systems)
    fit_layout(fig)
    _footer(fig, round_name)
    return save_figure(fig, folder, stem, formats)


def _legend_clusters(clusters: list[int]) -> list:
    return [plt.Line2D([], [], marker="o", linestyle="", color=_cluster_colour(c), label=f"cluster {c}") for c in clusters]


def plot_systems(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Comparable accelerator group against accelerator count; marker size = systems sharing that configuration."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    groups = group.group_by("accelerator_group").agg(pl.col("accelerators").median().alias("m")).sort("m", "accelerator_group")
    row_of = {name: i for i, name in enumerate(groups["accelerator_group"])}
    # sorted: group_by's order varies from run to run, and markers that overlap are drawn in this order
    counts = group.group_by("accelerator_group", "accelerators", "cluster").len().sort("accelerator_group", "accelerators", "cluster")
    height = max(3.6, 1.2 + 0.42 * len(row_of))
    fig, ax = scaffold("systems", (9, height))
    for name, accelerators, cluster, n in counts.iter_rows():
        ax.scatter(accelerators, row_of[name], s=60 + 70 * (n - 1), color=_cluster_colour(cluster), alpha=0.75,
                   edgecolors="black", linewidths=0.5, zorder=3)
        if n > 1:
            ax.annotate(str(n), (accelerators, row_of[name]), ha="center", va="center", fontsize=7, zorder=4)
    ax.set_xscale("log", base=2)
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    ax.set_yticks(range(len(row_of)), list(row_of), fontsize=8)
    ax.set_ylim(-0.7, len(row_of) - 0.3)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.grid(axis="x", alpha=0.3)
    clusters = sorted(group["cluster"].unique().to_list())
    ax.legend(handles=_legend_clusters(clusters), fontsize=8, loc="lower right", title="marker size = systems", title_fontsize=7)
    return _finish(fig, ax, round_name, benchmark, "systems by comparable accelerator group", group.height, folder, f"{benchmark}_systems", formats)


def _scatter_by_cluster(ax, group: pl.DataFrame, y: str) -> None:
    for cluster in sorted(group["cluster"].unique().to_list()):
        part = group.filter(pl.col("cluster") == cluster)
        ax.scatter(part["accelerators"], part[y], color=_cluster_colour(cluster), alpha=0.75, edgecolors="black",
                   linewidths=0.5, label=f"cluster {cluster}", zorder=3)


def _mark_reference(ax, group: pl.DataFrame, y: str) -> None:
    reference = group.filter(pl.col("is_paper_reference"))
    ax.scatter(reference["accelerators"], reference[y], marker="*", s=260, color="gold", edgecolors="black",
               linewidths=0.8, zorder=5, label=f"reference: {reference['system'][0]}")


def plot_paper_e_prime(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """The paper's E': one reference per benchmark across every accelerator, so across hardware generations."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = scaffold("paper", (9, 5.2))
    _scatter_by_cluster(ax, group, "paper_e_prime")
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="ideal (E′ = 1)")
    _mark_reference(ax, group, "paper_e_prime")
    ax.set_xscale("log", base=2)
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    if group["paper_e_prime"].max() / max(group["paper_e_prime"].min(), 1e-9) > 50:
        ax.set_yscale("log")  # mixed generations can differ by orders of magnitude
        plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("the paper's E′ = speedup / (N / N_ref), not the efficiency")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _finish(fig, ax, round_name, benchmark, "the paper's E′ (reference across hardware generations)", group.height, folder,
                   f"{benchmark}_paper_e_prime", formats)


def _error_bars(ax, frame: pl.DataFrame, x: str, y: str, low: pl.Expr, high: pl.Expr, colour) -> None:
    """Run-to-run spread as an error bar: from the fastest to the slowest valid run, where logged."""
    spread = frame.filter(low.is_not_null() & high.is_not_null()).with_columns(low.alias("_low"), high.alias("_high"))
    if spread.height:
        yerr = np.vstack([np.clip((spread[y] - spread["_low"]).to_numpy(), 0, None), np.clip((spread["_high"] - spread[y]).to_numpy(), 0, None)])
        ax.errorbar(spread[x], spread[y], yerr=yerr, fmt="none", ecolor=colour, elinewidth=0.8, capsize=2, alpha=0.7, zorder=2)


def plot_time(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Time to train with the run-to-run spread, and the Pareto front of time against accelerator-hours numbered."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = scaffold("time", (9, 5.6))
    _error_bars(ax, group, "accelerators", "time_to_train_min", pl.col("time_to_train_min_low"), pl.col("time_to_train_min_high"), "#666666")
    _scatter_by_cluster(ax, group, "time_to_train_min")
    front = group.filter(pl.col("is_pareto")).sort("accelerators")
    ax.plot(front["accelerators"], front["time_to_train_min"], color="crimson", linewidth=1.2, zorder=2)
    ax.scatter(front["accelerators"], front["time_to_train_min"], s=130, facecolors="none", edgecolors="crimson",
               linewidths=1.6, zorder=4, label="Pareto front: time vs accelerator-hours")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    # short numbers on the points, the names in the legend: long names clip at the edge and collide
    x_mid = np.sqrt(float(group["accelerators"].min()) * float(group["accelerators"].max()))
    handles, labels = ax.get_legend_handles_labels()
    for i, row in enumerate(front.iter_rows(named=True), start=1):
        left = row["accelerators"] > x_mid
        ax.annotate(str(i), (row["accelerators"], row["time_to_train_min"]), xytext=(-7 if left else 7, 5),
                    textcoords="offset points", fontsize=8, color="crimson", ha="right" if left else "left", fontweight="bold")
        handles.append(plt.Line2D([], [], linestyle=""))
        labels.append(wrapped_name(f"{i}: {row['system']} ({row['accelerators']:,})"))
    handles.append(plt.Line2D([], [], color="#666666", marker="|", linestyle=""))
    labels.append("bar: fastest to slowest valid run")
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("time to train, minutes (official score, log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.set_size_inches(12, 5.6)
    return _finish(fig, ax, round_name, benchmark, "time to train", group.height, folder, f"{benchmark}_time", formats)


def plot_energy(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Energy to train against time to train, for the systems whose power was measured; colour = accelerators."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    measured = group.filter(pl.col("energy_kj").is_not_null())
    fig, ax = plt.subplots(figsize=(9, 5.2))
    counts = measured["accelerators"].to_numpy().astype(float)
    norm = matplotlib.colors.LogNorm(vmin=counts.min(), vmax=max(counts.max(), counts.min() * 2))
    points = ax.scatter(measured["time_to_train_min"], measured["energy_kj"], c=counts, cmap="viridis", norm=norm, s=70,
                        alpha=0.9, edgecolors="black", linewidths=0.5, zorder=3)
    what = "energy against time to train"
    if len(set(counts.tolist())) > 1:  # a colour bar of one value says less than the title does
        colourbar = fig.colorbar(points, ax=ax, pad=0.01)
        colourbar.set_label("accelerators")
        colourbar.ax.yaxis.set_major_locator(FixedLocator(sorted(set(counts.tolist()))))
        colourbar.ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}"))
        colourbar.ax.yaxis.set_minor_locator(NullLocator())
    else:
        what += f", every system at {int(counts[0]):,} accelerators"
    front = measured.filter(pl.col("is_pareto_energy")).sort("time_to_train_min")
    if front.height > 1:
        ax.plot(front["time_to_train_min"], front["energy_kj"], color="crimson", linewidth=1.2, label="Pareto front: time vs energy")
        ax.legend(fontsize=8, loc="best")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_axis(ax.xaxis)
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("time to train, minutes (log scale)")
    ax.set_ylabel("energy to train, kJ (log scale)")
    ax.grid(alpha=0.3, which="both")
    return _finish(fig, ax, round_name, benchmark, what, measured.height, folder, f"{benchmark}_energy", formats)


MAX_GROUPS = 4  # groups drawn in the scaling plot: the ones with the most distinct counts


def scaling_groups(group: pl.DataFrame) -> list[str]:
    """The comparable groups worth a scaling curve: at least two distinct counts, the most measured first."""
    ranked = (group.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
              .group_by("accelerator_group").agg(pl.col("accelerators").n_unique().alias("counts"), pl.len().alias("n"))
              .filter(pl.col("counts") >= 2).sort(["counts", "n", "accelerator_group"], descending=[True, True, False]))
    return ranked["accelerator_group"].to_list()[:MAX_GROUPS]


def plot_scaling(group: pl.DataFrame, recommendations: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS,
                 calibration: Calibration | None = None) -> list[Path]:
    """Per comparable group: the efficiency of every system, and the planner's best time per count as an efficiency
    (through the best measured at each count, predicted between and two doublings beyond, the band its 90 %
    interval, `calibration`'s) with the knee (left); the same efficiency split into its throughput and convergence parts
    (right)."""
    from mlperf_scaling.tasks.metrics.fits import apart_series
    from mlperf_scaling.tasks.planning.predict import AMDAHL, group_model

    round_name, benchmark = group["round"][0], group["benchmark"][0]
    names = scaling_groups(group)
    fig, (ax, parts) = scaffold("scaling", (13, 5.4), 2, True)
    everything = group.filter(pl.col("accelerator_group").is_in(names))
    largest = float(everything["accelerators"].max())
    for colour, name in zip(_COLOURS, names, strict=False):
        points = group.filter(pl.col("accelerator_group") == name).sort("accelerators")
        n_ref, t_ref = float(points["reference_accelerators"][0]), float(points["reference_time_min"][0])
        label = f"{name} ({points.height} systems)"
        model = group_model(apart_series(points)[0], AMDAHL, round_name=str(round_name), calibration=calibration)
        if model is not None:
            curve = model.curve(points=24)
            xs = curve["accelerators"].to_numpy()
            efficiency = t_ref * n_ref / (xs * curve["time_min"].to_numpy())
            slow = t_ref * n_ref / (xs * curve["time_min_high"].fill_null(curve["time_min"]).to_numpy())
            fast = t_ref * n_ref / (xs * curve["time_min_low"].fill_null(curve["time_min"]).to_numpy())
            ax.fill_between(xs, slow, fast, color=colour, alpha=0.15, linewidth=0)
            ax.plot(xs, efficiency, color=colour, linewidth=1.2)
            found = recommendations.filter(pl.col("accelerator_group") == name)
            row = found.row(0, named=True) if found.height else {"knee": None}
            if row["knee"] is not None:
                low = "-" if row["knee_low"] is None else f"{row['knee_low']:,.0f}"
                high = "beyond reach" if row["knee_high"] is None else f"{row['knee_high']:,.0f}"
                label += f"; E < {row['threshold']:g} from ~{row['knee']:,.0f} [{low}, {high}]"
                if row["knee"] <= xs[-1]:
                    ax.plot([row["knee"]], [row["threshold"]], marker="v", color=colour, markersize=8, zorder=5)
        else:
            label += "; too few counts to predict"
        _error_bars(ax, points, "accelerators", "efficiency", pl.col("efficiency") * pl.col("time_to_train_min") / pl.col("time_to_train_min_high"),
                    pl.col("efficiency") * pl.col("time_to_train_min") / pl.col("time_to_train_min_low"), colour)
        ax.scatter(points["accelerators"], points["efficiency"], color=colour, edgecolors="black", linewidths=0.5, zorder=3, label=label)
        split = points.filter(pl.col("throughput_part").is_not_null())
        parts.scatter(split["accelerators"], split["throughput_part"], color=colour, marker="^", edgecolors="black", linewidths=0.5, zorder=3)
        parts.scatter(split["accelerators"], split["convergence_part"], facecolors="none", edgecolors=colour, marker="s", linewidths=1.2, zorder=3)
    for axis in (ax, parts):
        axis.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
        axis.set_xscale("log", base=2)
        _log2_axis(axis.xaxis, everything["accelerators"].to_list() + [largest * 2])
        axis.set_xlabel("accelerators (log2 scale)")
        axis.grid(alpha=0.3)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
    ax.set_ylabel("efficiency: best time at the smallest count x that count / (T x N)")
    ax.legend(fontsize=7.5, loc="lower left", title="line: best per count, measured, predicted between and beyond; band: 90 % interval; v: knee",
              title_fontsize=7)
    parts.set_ylabel("part of the efficiency (efficiency = throughput x convergence)")
    parts.legend([plt.Line2D([], [], marker="^", color="grey", linestyle=""),
                  plt.Line2D([], [], marker="s", markerfacecolor="none", color="grey", linestyle="")],
                 ["throughput part: samples per accelerator-second", "convergence part: samples needed (bigger batches need more)"],
                 fontsize=7.5, loc="lower left")
    ax.set_title("efficiency per group: systems, and the best per count", fontsize=10)
    parts.set_title("where the efficiency is lost", fontsize=10)
    # two panels: the title belongs to the figure, not to the left panel it would overflow
    fig.suptitle(title_text(round_name, benchmark, "scaling within comparable hardware", everything.height), fontsize=11)
    fit_layout(fig)
    _footer(fig, round_name)
    return save_figure(fig, folder, f"{benchmark}_scaling", formats)


def plot_benchmark(efficiency: pl.DataFrame, clusters: pl.DataFrame, folder: Path, recommendations: pl.DataFrame | None = None,
                   formats: tuple[str, ...] = DEFAULT_FORMATS, calibration: Calibration | None = None) -> dict[str, list[Path]]:
    """Every view of one (round, benchmark); `efficiency` holds only that benchmark's rows; `calibration`: the
    planner's intervals (load_calibration().with_backtest of the round's backtest, which sets their level)."""
    group = efficiency.join(clusters.select("round", "benchmark", "submitter", "system", "cluster"),
                            on=["round", "benchmark", "submitter", "system"], how="left").with_columns(pl.col("cluster").fill_null(0))
    plots = {}
    if scaling_groups(group):
        plots["scaling"] = plot_scaling(group, recommendations if recommendations is not None else pl.DataFrame(schema=_KNEE_COLUMNS), folder, formats,
                                        calibration)
    plots["time"] = plot_time(group, folder, formats)
    # one measured point is a sentence on the page (see report._energy_fact), not a point on an empty plane
    if "energy_kj" in group.columns and group["energy_kj"].is_not_null().sum() >= MIN_ENERGY_POINTS:
        plots["energy"] = plot_energy(group, folder, formats)
    plots["systems"] = plot_systems(group, folder, formats)
    plots["paper"] = plot_paper_e_prime(group, folder, formats)
    return plots


_KNEE_COLUMNS = {"accelerator_group": pl.String, "threshold": pl.Float64, "knee": pl.Float64, "knee_low": pl.Float64, "knee_high": pl.Float64}


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
    calls = [(str(workload), group, folder, rounds, formats) for (workload,), group in trends.group_by(["benchmark_canonical"], maintain_order=True)]
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
    ax.legend(fontsize=8, loc="best", title="accelerator group x count", title_fontsize=8)
    ax.set_title(f"{canonical_benchmark(workload).label}: best time to train at the same scale, round by round", fontsize=11)
    fit_layout(fig)
    fig.text(0.01, 0.01, f"Official scores; results carried over unchanged from an earlier round are counted once. {NOTE}",
             fontsize=7, color="#555555")
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
    _log2_axis(ax.xaxis, frame["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("accelerator-minutes to train (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, title="scale-up fabric", title_fontsize=8)
    rounds = sorted_rounds(frame["round"].unique().to_list())
    span = rounds[0] if len(rounds) == 1 else f"{rounds[0]} to {rounds[-1]}"
    ax.set_title(f"MLPerf Training {span} · {canonical_benchmark(workload).label}: accelerator-minutes by scale-up fabric\n"
                 f"{frame.height:,} results", fontsize=11)
    fit_layout(fig)
    fig.text(0.01, 0.01, f"{NOTE} Source: MLPerf Training results; fabric from the systems JSON.", fontsize=7.5, color="#555555")
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
        _log2_axis(ax.xaxis, frame["accelerators"].to_list())
        ax.set_xlabel("accelerators (log2 scale)")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    axes[1].set_yscale("log")
    plain_log_axis(axes[1].yaxis)
    axes[1].legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    rounds = sorted_rounds(frame["round"].unique().to_list())
    fig.suptitle(f"MLPerf Training {', '.join(rounds)} · {canonical_benchmark(workload).label}: power and energy against accelerators\n"
                 f"{frame.height:,} results with power logs", fontsize=11)
    fit_layout(fig)
    fig.text(0.01, 0.01, f"{NOTE} Source: MLPerf Training power logs.", fontsize=7.5, color="#555555")
    return save_figure(fig, folder, f"{workload}_power", formats)
