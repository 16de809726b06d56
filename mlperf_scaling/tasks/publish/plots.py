"""Scaling plots per (round, benchmark), drawn from the `efficiency` and `clusters` tables.

Each view as SVG (and PNG on request): scaling within comparable hardware (the efficiency of every system and of the
planner's best time per count, with its 90 % interval, and the throughput and convergence parts), time to train with
the run-to-run spread and its Pareto front, energy where measured, systems by accelerator group (the paper's Figures 1,
3, 5, 7) and the paper's E′ (Figures 2, 4, 6, 8), under its own name.

Colour names the comparable accelerator group, the same in every plot (GROUP_COLOURS); the k-means cluster, where
shown, is a marker's shape. Every text reads at 10 CSS px or more where the page shows the plot (plot_canvas.SHOWN_PX).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# isort: off
import mlperf_scaling.tasks.publish.plot_canvas  # noqa: F401  # matplotlib set up (headless, text kept as text) before pyplot
# isort: on
import matplotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator  # noqa: E402

from mlperf_scaling.rounds import round_title
from mlperf_scaling.tasks.planning.calibration import Calibration  # noqa: E402
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS, MIN_ENERGY_POINTS, NOTE, PLOT_KINDS, workload_label, wrapped_name  # noqa: E402, F401
from mlperf_scaling.tasks.publish.plot_canvas import (  # matplotlib set up first
    SMALLEST_PT,
    fit_layout,
    legend_under,
    log2_axis,
    plain_log_axis,
    save_figure,
    scaffold,
    widest_figure_in,
)

# a plot in one of the round page's two columns (systems, paper, energy): a little narrower than its smallest text
# allows (widest_figure_in: 6.58 in), so that text renders at 10.3 px or more (plot_canvas.SHOWN_PX)
HALF_PAGE_IN = min(6.4, widest_figure_in("systems"))

# tab20's two greys: for accelerators the reference tables do not know ("unknown: ..."), never for a named one
_UNNAMED_COLOURS = ("#7f7f7f", "#c7c7c7")
# tab20's other eighteen qualitative colours, its strong ten first
_PALETTE = tuple(colour for colour in map(matplotlib.colors.to_hex, plt.get_cmap("tab20").colors[0::2] + plt.get_cmap("tab20").colors[1::2])  # type: ignore[attr-defined]
                 if colour not in _UNNAMED_COLOURS)
# Each comparable accelerator group's colour, the same in every plot of every page: a round's plots are drawn one
# benchmark at a time (and kept while their inputs are unchanged), so the colour can depend on the group's name only.
# One line per colour: the groups on a line never meet in one published round (v0.5 to v5.1), nor do two groups from
# 2024 on; the most common groups hold the strong colours. A group not listed takes one of _PALETTE from its name's
# hash: the same everywhere, but it may repeat a listed group's colour; list it here when a round brings it.
GROUP_COLOURS = {
    **dict.fromkeys(("H100-SXM", "Ascend 910", "TPU Ironwood", "GH200", "MI250-OAM", "MI250X-OAM", "TPU v4", "TPU v2"), "#1f77b4"),
    **dict.fromkeys(("A100-SXM", "B200-SXM"), "#ff7f0e"),
    **dict.fromkeys(("A100-PCIe", "TPU v3", "B300-SXM"), "#2ca02c"),
    **dict.fromkeys(("H200-SXM", "A30-PCIe", "IPU GC200-PCIe", "V100-PCIe"), "#d62728"),
    **dict.fromkeys(("Gaudi2-OAM", "GB300", "V100-SXM", "Gaudi-OAM"), "#9467bd"),
    **dict.fromkeys(("H100-PCIe", "MI350X-OAM", "A40-PCIe", "A100 (form factor not stated)"), "#8c564b"),
    **dict.fromkeys(("RTX A5000-PCIe", "MI355X-OAM", "V100 (form factor not stated)"), "#e377c2"),
    **dict.fromkeys(("L40S-PCIe", "RTX PRO 6000-PCIe"), "#bcbd22"),
    **dict.fromkeys(("TPU v5p", "GB200", "L4-PCIe"), "#17becf"),
    **dict.fromkeys(("GeForce RTX 4090-PCIe", "H200-PCIe", "TPU v5e"), "#aec7e8"),
    **dict.fromkeys(("Radeon RX 7900 XTX-PCIe", "MI325X-OAM", "A10G-PCIe"), "#ffbb78"),
    **dict.fromkeys(("TPU Trillium", "MI300X-OAM", "L40-PCIe"), "#98df8a"),
    "B100-SXM": "#ff9896",
    "Gaudi3-OAM": "#c5b0d5",
}
# the k-means cluster of a system, where a plot shows it: its marker's shape (the colour names the accelerator)
_CLUSTER_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")


def group_colour(name: str) -> str:
    """The colour of a comparable accelerator group in every plot: listed, else from its name (grey for an accelerator
    the reference tables do not know)."""
    listed = GROUP_COLOURS.get(name)
    if listed is not None:
        return listed
    colours = _UNNAMED_COLOURS if name.startswith("unknown") else _PALETTE
    return colours[int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") % len(colours)]


def cluster_marker(cluster: int) -> str:
    return _CLUSTER_MARKERS[int(cluster) % len(_CLUSTER_MARKERS)]


TITLE_CHARACTERS = 85  # about what a 9-inch figure holds on one line at 11 pt


def title_text(round_name: str, benchmark: str, what: str, n_systems: int, characters: int = TITLE_CHARACTERS) -> str:
    """The title of a round's plot, on lines of about `characters` at most (what the figure holds at 11 pt)."""
    where = f"{round_title(round_name)} · {workload_label(benchmark, round_name)}:"
    if len(where) > characters:  # the workload's long name on a line of its own too
        where = f"{round_title(round_name)} ·\n{workload_label(benchmark, round_name)}:"
    first = f"{where} {what}"
    if len(first.rsplit("\n", 1)[-1]) > characters:  # it would run past the figure's edges: what is shown goes on a line of its own
        first = f"{where}\n{what}"
    return f"{first}\n{n_systems:,} system{'' if n_systems == 1 else 's'}"


def _title(ax, round_name: str, benchmark: str, what: str, n_systems: int) -> None:
    characters = int(TITLE_CHARACTERS * ax.figure.get_size_inches()[0] / 9)
    ax.set_title(title_text(round_name, benchmark, what, n_systems, characters), fontsize=11)


def _footer_text(round_name: str) -> str:
    return f"{NOTE} Source: {round_title(round_name)} results."


HALF_PAGE_TICKS = 7  # log2 ticks along a plot in half the page: "1,024" and "2,048" side by side at 10 pt need the room


def _finish(fig, ax, round_name: str, benchmark: str, what: str, n_systems: int, folder: Path, stem: str,
            formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Title, layout and the derived-metrics note, then the PNG and SVG files."""
    _title(ax, round_name, benchmark, what, n_systems)
    fit_layout(fig, _footer_text(round_name))
    return save_figure(fig, folder, stem, formats)


def _group_colours(frame: pl.DataFrame) -> pl.Series:
    """Each row's accelerator group's colour (group_colour), one call per group, not per row."""
    names = frame["accelerator_group"].unique().to_list()
    return frame["accelerator_group"].replace_strict({name: group_colour(name) for name in names}, return_dtype=pl.String)


def _legend_groups(frame: pl.DataFrame) -> tuple[list, list[str]]:
    """A legend entry per accelerator group of `frame` in its colour, with its count of systems, the most first."""
    sizes = frame.group_by("accelerator_group").len().sort(["len", "accelerator_group"], descending=[True, False])
    handles = [plt.Line2D([], [], marker="o", linestyle="", markerfacecolor=group_colour(name), markeredgecolor="black",
                          markeredgewidth=0.5, markersize=7) for name in sizes["accelerator_group"]]
    return handles, [f"{name} ({n:,})" for name, n in sizes.iter_rows()]


def _legend_clusters(frame: pl.DataFrame) -> tuple[list, list[str]]:
    """A grey entry per k-means cluster in its marker's shape; none where every system is in one cluster."""
    clusters = sorted(frame["cluster"].unique().to_list())
    if len(clusters) < 2:
        return [], []
    handles = [plt.Line2D([], [], marker=cluster_marker(c), linestyle="", color="#666666", markersize=6) for c in clusters]
    return handles, [f"{'shape: k-means cluster' if i == 0 else 'cluster'} {c}" for i, c in enumerate(clusters)]


def _outside_legend(ax, handles: list, labels: list[str], **options):
    """The legend to the right of the axes, where no point hides it (fit_layout makes the room)."""
    return ax.legend(handles, labels, fontsize=SMALLEST_PT, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, **options)


def plot_systems(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Comparable accelerator group against accelerator count; colour = the group (as in every plot of the round),
    shape = k-means cluster, marker size = systems sharing that configuration."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    groups = group.group_by("accelerator_group").agg(pl.col("accelerators").median().alias("m")).sort("m", "accelerator_group")
    row_of = {name: i for i, name in enumerate(groups["accelerator_group"])}
    # sorted: group_by's order varies from run to run, and markers that overlap are drawn in this order
    counts = group.group_by("accelerator_group", "accelerators", "cluster").len().sort("accelerator_group", "accelerators", "cluster")
    counts = counts.with_columns(row=pl.col("accelerator_group").replace_strict(row_of, return_dtype=pl.Int64), colour=_group_colours(counts))
    height = max(3.2, 1.2 + 0.42 * len(row_of))
    fig, ax = scaffold("systems", (HALF_PAGE_IN, height))
    for cluster in sorted(counts["cluster"].unique().to_list()):  # one collection per shape
        part = counts.filter(pl.col("cluster") == cluster)
        ax.scatter(part["accelerators"], part["row"], s=(20 + 40 * part["len"]).to_numpy(), color=part["colour"].to_list(),
                   marker=cluster_marker(cluster), alpha=0.75, edgecolors="black", linewidths=0.5, zorder=3)
    for accelerators, row, n in counts.filter(pl.col("len") > 1).select("accelerators", "row", "len").iter_rows():
        ax.annotate(str(n), (accelerators, row), ha="center", va="center", fontsize=SMALLEST_PT, zorder=4)
    ax.set_xscale("log", base=2)
    log2_axis(ax.xaxis, group["accelerators"].to_list(), HALF_PAGE_TICKS)
    ax.set_yticks(range(len(row_of)), list(row_of), fontsize=SMALLEST_PT + 1)
    ax.set_ylim(-0.7, len(row_of) - 0.3)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.grid(axis="x", alpha=0.3)
    handles, labels = _legend_clusters(group)
    legend_under(ax, handles, labels, 6, title="colour: accelerator group, as in every plot of the round; size: systems sharing a configuration",
                 title_fontsize=SMALLEST_PT, columnspacing=1.0, handletextpad=0.3)
    return _finish(fig, ax, round_name, benchmark, "systems by comparable accelerator group", group.height, folder, f"{benchmark}_systems", formats)


def _scatter_by_group(ax, group: pl.DataFrame, y: str) -> None:
    """Every system at (accelerators, y): its colour its accelerator group's, its shape its k-means cluster's; one
    collection per cluster, the colours as one array."""
    frame = group.select("accelerators", y, "accelerator_group", "cluster").sort("cluster", "accelerator_group", "accelerators", y)
    frame = frame.with_columns(colour=_group_colours(frame))
    for cluster in frame["cluster"].unique(maintain_order=True).to_list():
        part = frame.filter(pl.col("cluster") == cluster)
        ax.scatter(part["accelerators"], part[y], color=part["colour"].to_list(), marker=cluster_marker(cluster), alpha=0.8,
                   edgecolors="black", linewidths=0.5, zorder=3)


def _mark_reference(ax, group: pl.DataFrame, y: str):
    reference = group.filter(pl.col("is_paper_reference"))
    return ax.scatter(reference["accelerators"], reference[y], marker="*", s=260, color="gold", edgecolors="black", linewidths=0.8, zorder=5)


def plot_paper_e_prime(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """The paper's E': one reference per benchmark across every accelerator, so across hardware generations; colour =
    accelerator group, shape = k-means cluster."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = scaffold("paper", (HALF_PAGE_IN, 4.4))
    _scatter_by_group(ax, group, "paper_e_prime")
    ideal = ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    star = _mark_reference(ax, group, "paper_e_prime")
    ax.set_xscale("log", base=2)
    log2_axis(ax.xaxis, group["accelerators"].to_list(), HALF_PAGE_TICKS)
    if group["paper_e_prime"].max() / max(group["paper_e_prime"].min(), 1e-9) > 50:
        ax.set_yscale("log")  # mixed generations can differ by orders of magnitude
        plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("the paper's E′ = speedup / (N / N_ref),\nnot the efficiency")
    ax.grid(alpha=0.3)
    handles, labels = _legend_groups(group)
    more, named = _legend_clusters(group)
    reference = group.filter(pl.col("is_paper_reference"))["system"]
    legend_under(ax, [*handles, *more, ideal, star],
                 [*labels, *named, "ideal (E′ = 1)", wrapped_name(f"reference: {reference[0]}") if reference.len() else "reference"],
                 title="colour: accelerator group (systems); shape: k-means cluster", title_fontsize=SMALLEST_PT)
    return _finish(fig, ax, round_name, benchmark, "the paper's E′ (reference across hardware generations)", group.height, folder,
                   f"{benchmark}_paper_e_prime", formats)


def _error_bars(ax, frame: pl.DataFrame, x: str, y: str, low: pl.Expr, high: pl.Expr, colour) -> None:
    """Run-to-run spread as an error bar: from the fastest to the slowest valid run, where logged."""
    spread = frame.filter(low.is_not_null() & high.is_not_null()).with_columns(low.alias("_low"), high.alias("_high"))
    if spread.height:
        yerr = np.vstack([np.clip((spread[y] - spread["_low"]).to_numpy(), 0, None), np.clip((spread["_high"] - spread[y]).to_numpy(), 0, None)])
        ax.errorbar(spread[x], spread[y], yerr=yerr, fmt="none", ecolor=colour, elinewidth=0.8, capsize=2, alpha=0.7, zorder=2)


FRONT_COLOUR = "black"  # the Pareto front: no accelerator group's colour


def plot_time(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Time to train with the run-to-run spread, coloured by accelerator group and shaped by k-means cluster, and the
    Pareto front of time against accelerator-hours numbered."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = scaffold("time", (12, 5.6))
    _error_bars(ax, group, "accelerators", "time_to_train_min", pl.col("time_to_train_min_low"), pl.col("time_to_train_min_high"), "#666666")
    _scatter_by_group(ax, group, "time_to_train_min")
    front = group.filter(pl.col("is_pareto")).sort("accelerators")
    ax.plot(front["accelerators"], front["time_to_train_min"], color=FRONT_COLOUR, linewidth=1.2, zorder=2)
    rings = ax.scatter(front["accelerators"], front["time_to_train_min"], s=130, facecolors="none", edgecolors=FRONT_COLOUR,
                       linewidths=1.6, zorder=4)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    log2_axis(ax.xaxis, group["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    # short numbers on the points, the names in the legend: long names clip at the edge and collide
    x_mid = np.sqrt(float(group["accelerators"].min()) * float(group["accelerators"].max()))
    handles, labels = _legend_groups(group)
    more, named = _legend_clusters(group)
    handles += [*more, rings]
    labels += [*named, "Pareto front: time vs accelerator-hours"]
    for i, row in enumerate(front.iter_rows(named=True), start=1):
        left = row["accelerators"] > x_mid
        ax.annotate(str(i), (row["accelerators"], row["time_to_train_min"]), xytext=(-7 if left else 7, 5),
                    textcoords="offset points", fontsize=SMALLEST_PT + 1, color=FRONT_COLOUR, ha="right" if left else "left", fontweight="bold")
        handles.append(plt.Line2D([], [], linestyle=""))
        labels.append(wrapped_name(f"{i}: {row['system']} ({row['accelerators']:,})"))
    handles.append(plt.Line2D([], [], color="#666666", marker="|", linestyle=""))
    labels.append("bar: fastest to slowest valid run")
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("time to train, minutes (official score, log scale)")
    ax.grid(alpha=0.3, which="both")
    legend = _outside_legend(ax, handles, labels)
    # as tall as the legend needs: it runs from the axes' top to the footer
    renderer = fig.canvas.get_renderer()
    fig.set_size_inches(12, max(5.6, legend.get_window_extent(renderer).height / renderer.dpi + 1.3))
    return _finish(fig, ax, round_name, benchmark, "time to train", group.height, folder, f"{benchmark}_time", formats)


def plot_energy(group: pl.DataFrame, folder: Path, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Energy to train against time to train, for the systems whose power was measured; colour = accelerators."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    measured = group.filter(pl.col("energy_kj").is_not_null())
    fig, ax = plt.subplots(figsize=(HALF_PAGE_IN, 4.8))
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
        ax.legend(fontsize=SMALLEST_PT, loc="best")
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
    """Per comparable group, in its colour: the efficiency of every system, and the planner's best time per count as an
    efficiency (through the best measured at each count, predicted between and two doublings beyond, the band its
    90 % interval, `calibration`'s) with the knee (left); the same efficiency split into its throughput and convergence
    parts (right)."""
    from mlperf_scaling.tasks.metrics.fits import apart_series
    from mlperf_scaling.tasks.planning.predict import AMDAHL, group_model

    round_name, benchmark = group["round"][0], group["benchmark"][0]
    names = scaling_groups(group)
    fig, (ax, parts) = scaffold("scaling", (13, 5.6), 2, True)
    everything = group.filter(pl.col("accelerator_group").is_in(names))
    largest = float(everything["accelerators"].max())
    for name in names:
        colour = group_colour(name)
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
                label += f";\n   E < {row['threshold']:g} from ~{row['knee']:,.0f} [{low}, {high}]"
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
        log2_axis(axis.xaxis, everything["accelerators"].to_list() + [largest * 2], 10)
        axis.set_xlabel("accelerators (log2 scale)")
        axis.grid(alpha=0.3)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
    ax.set_ylabel("efficiency: best time at the smallest count x that count / (T x N)")
    ax.legend(fontsize=SMALLEST_PT, loc="lower left", title="line: best per count, measured, predicted between and beyond;\nband: 90 % interval; v: knee",
              title_fontsize=SMALLEST_PT)
    parts.set_ylabel("part of the efficiency (efficiency = throughput x convergence)")
    parts.legend([plt.Line2D([], [], marker="^", color="grey", linestyle=""),
                  plt.Line2D([], [], marker="s", markerfacecolor="none", color="grey", linestyle="")],
                 ["throughput part: samples per accelerator-second", "convergence part: samples needed (bigger batches need more)"],
                 fontsize=SMALLEST_PT, loc="lower left", title="colour: accelerator group, as on the left", title_fontsize=SMALLEST_PT)
    ax.set_title("efficiency per group: systems, and the best per count", fontsize=10)
    parts.set_title("where the efficiency is lost", fontsize=10)
    # two panels: the title belongs to the figure, not to the left panel it would overflow
    fig.suptitle(title_text(round_name, benchmark, "scaling within comparable hardware", everything.height), fontsize=11)
    fit_layout(fig, _footer_text(round_name))
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
