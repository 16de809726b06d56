"""Scaling plots per (round, benchmark), drawn from the `efficiency` and `clusters` tables.

Four views, each as PNG and SVG: systems by accelerator model (the paper's Figures 1, 3, 5, 7),
efficiency (Figures 2, 4, 6, 8), speedup, and time to train with its Pareto front.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: files only

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

NOTE = "Speedup, efficiency and clusters are derived metrics, not official MLPerf results."
PLOT_KINDS = ("systems", "efficiency", "speedup", "time", "fit", "energy")
_COLOURS = plt.get_cmap("tab10").colors  # type: ignore[attr-defined]  # a ListedColormap


def _title(ax, round_name: str, benchmark: str, what: str, n_systems: int) -> None:
    ax.set_title(f"MLPerf Training {round_name} · {benchmark}: {what}\n{n_systems} systems", fontsize=11)


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


def _finish(fig, ax, round_name: str, benchmark: str, what: str, n_systems: int, folder: Path, stem: str) -> list[Path]:
    """Title, layout and the derived-metrics note, then the PNG and SVG files."""
    _title(ax, round_name, benchmark, what, n_systems)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    _footer(fig, round_name)
    return _save(fig, folder, stem)


def _save(fig, folder: Path, stem: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}.png", folder / f"{stem}.svg"]
    fig.savefig(paths[0], dpi=110)
    fig.savefig(paths[1])
    plt.close(fig)
    return paths


def _legend_clusters(clusters: list[int]) -> list:
    return [plt.Line2D([], [], marker="o", linestyle="", color=_cluster_colour(c), label=f"cluster {c}") for c in clusters]


def plot_systems(group: pl.DataFrame, folder: Path) -> list[Path]:
    """Accelerator model against accelerator count; marker size = systems sharing that configuration."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    # show each model under its most common published spelling
    names = (
        group.group_by("accelerator_model", "accelerator_model_name").len()
        .sort(["accelerator_model", "len", "accelerator_model_name"], descending=[False, True, False])
        .group_by("accelerator_model", maintain_order=True).first()
    )
    label_of = dict(zip(names["accelerator_model"], names["accelerator_model_name"], strict=True))
    models = group.group_by("accelerator_model").agg(pl.col("accelerators").median().alias("m")).sort("m", "accelerator_model")
    row_of = {model: i for i, model in enumerate(models["accelerator_model"])}
    counts = group.group_by("accelerator_model", "accelerators", "cluster").len()
    height = max(3.6, 1.2 + 0.42 * len(row_of))
    fig, ax = plt.subplots(figsize=(9, height))
    for model, accelerators, cluster, n in counts.iter_rows():
        ax.scatter(accelerators, row_of[model], s=60 + 70 * (n - 1), color=_cluster_colour(cluster), alpha=0.75,
                   edgecolors="black", linewidths=0.5, zorder=3)
        if n > 1:
            ax.annotate(str(n), (accelerators, row_of[model]), ha="center", va="center", fontsize=7, zorder=4)
    ax.set_xscale("log", base=2)
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    ax.set_yticks(range(len(row_of)), [label_of[m] for m in row_of], fontsize=8)
    ax.set_ylim(-0.7, len(row_of) - 0.3)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.grid(axis="x", alpha=0.3)
    clusters = sorted(group["cluster"].unique().to_list())
    ax.legend(handles=_legend_clusters(clusters), fontsize=8, loc="lower right", title="marker size = systems", title_fontsize=7)
    return _finish(fig, ax, round_name, benchmark, "systems by accelerator model", group.height, folder, f"{benchmark}_systems")


def _scatter_by_cluster(ax, group: pl.DataFrame, y: str) -> None:
    for cluster in sorted(group["cluster"].unique().to_list()):
        part = group.filter(pl.col("cluster") == cluster)
        ax.scatter(part["accelerators"], part[y], color=_cluster_colour(cluster), alpha=0.75, edgecolors="black",
                   linewidths=0.5, label=f"cluster {cluster}", zorder=3)


def _mark_reference(ax, group: pl.DataFrame, y: str) -> None:
    reference = group.filter(pl.col("is_reference"))
    ax.scatter(reference["accelerators"], reference[y], marker="*", s=260, color="gold", edgecolors="black",
               linewidths=0.8, zorder=5, label=f"reference: {reference['system'][0]}")


def plot_efficiency(group: pl.DataFrame, folder: Path) -> list[Path]:
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = plt.subplots(figsize=(9, 5.2))
    _scatter_by_cluster(ax, group, "efficiency")
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1, label="ideal (efficiency 1)")
    _mark_reference(ax, group, "efficiency")
    ax.set_xscale("log", base=2)
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    if group["efficiency"].max() / max(group["efficiency"].min(), 1e-9) > 50:
        ax.set_yscale("log")  # mixed generations can differ by orders of magnitude
        plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("scaling efficiency E' = speedup / (N / N_ref)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    return _finish(fig, ax, round_name, benchmark, "scaling efficiency against the reference system", group.height, folder, f"{benchmark}_efficiency")


def plot_speedup(group: pl.DataFrame, folder: Path) -> list[Path]:
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = plt.subplots(figsize=(9, 5.2))
    _scatter_by_cluster(ax, group, "speedup")
    n_ref = group["reference_accelerators"][0]
    xs = np.geomspace(group["accelerators"].min(), group["accelerators"].max(), 50)
    ax.plot(xs, xs / n_ref, color="black", linestyle="--", linewidth=1, label="ideal (speedup = N / N_ref)")
    _mark_reference(ax, group, "speedup")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("speedup T_ref / T (log scale)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return _finish(fig, ax, round_name, benchmark, "speedup against the reference system", group.height, folder, f"{benchmark}_speedup")


def plot_time(group: pl.DataFrame, folder: Path) -> list[Path]:
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fig, ax = plt.subplots(figsize=(9, 5.2))
    _scatter_by_cluster(ax, group, "time_to_train_min")
    front = group.filter(pl.col("is_pareto")).sort("accelerators")
    ax.plot(front["accelerators"], front["time_to_train_min"], color="crimson", linewidth=1.2, zorder=2)
    ax.scatter(front["accelerators"], front["time_to_train_min"], s=130, facecolors="none", edgecolors="crimson",
               linewidths=1.6, zorder=4, label="Pareto front: time vs accelerator-hours")
    for row in front.iter_rows(named=True):
        ax.annotate(row["system"], (row["accelerators"], row["time_to_train_min"]), xytext=(6, 4),
                    textcoords="offset points", fontsize=7, color="crimson")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _log2_axis(ax.xaxis, group["accelerators"].to_list())
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("time to train, minutes (official score, log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="upper right")
    return _finish(fig, ax, round_name, benchmark, "time to train", group.height, folder, f"{benchmark}_time")


def plot_energy(group: pl.DataFrame, folder: Path) -> list[Path]:
    """Energy to train against time to train, for the systems whose power was measured."""
    round_name, benchmark = group["round"][0], group["benchmark"][0]
    measured = group.filter(pl.col("energy_kj").is_not_null())
    fig, ax = plt.subplots(figsize=(9, 5.2))
    for submitter in sorted(measured["submitter"].unique().to_list()):
        part = measured.filter(pl.col("submitter") == submitter)
        ax.scatter(part["time_to_train_min"], part["energy_kj"], s=60, alpha=0.8, edgecolors="black", linewidths=0.5,
                   label=submitter, zorder=3)
        for row in part.iter_rows(named=True):
            ax.annotate(f"{row['accelerators']:,} acc.", (row["time_to_train_min"], row["energy_kj"]), xytext=(6, 4),
                        textcoords="offset points", fontsize=7)
    front = measured.filter(pl.col("is_pareto_energy")).sort("time_to_train_min")
    ax.plot(front["time_to_train_min"], front["energy_kj"], color="crimson", linewidth=1.2, label="Pareto front: time vs energy")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_axis(ax.xaxis)
    plain_log_axis(ax.yaxis)
    ax.set_xlabel("time to train, minutes (log scale)")
    ax.set_ylabel("energy to train, kJ (log scale)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8, loc="best")
    return _finish(fig, ax, round_name, benchmark, "energy against time to train", measured.height, folder, f"{benchmark}_energy")


def plot_fits(group: pl.DataFrame, fits: pl.DataFrame, folder: Path) -> list[Path]:
    """Same-family efficiency with the fitted Amdahl (solid) and USL (dashed) curves and the 0.5 knee."""
    from mlperf_scaling.tasks.metrics.fits import predicted_efficiency

    round_name, benchmark = group["round"][0], group["benchmark"][0]
    fitted = fits.filter(pl.col("status") == "fitted")
    families = fitted.group_by("accelerator_family").agg(pl.col("n_points").max()).sort("n_points", descending=True)["accelerator_family"].to_list()[:4]
    fig, ax = plt.subplots(figsize=(9, 5.2))
    for colour, family in zip(_COLOURS, families, strict=False):
        points = group.filter(pl.col("accelerator_family") == family)
        n_ref = float(points["accelerators"].min())
        reference_time = points.filter(pl.col("accelerators") == n_ref)["time_to_train_min"].max()
        efficiency = (reference_time / points["time_to_train_min"]) / (points["accelerators"] / n_ref)
        ax.scatter(points["accelerators"], efficiency, color=colour, edgecolors="black", linewidths=0.5, zorder=3,
                   label=f"{family} ({points.height} systems)")
        xs = np.geomspace(n_ref, max(points["accelerators"].max() * 4, n_ref * 8), 120)
        for row in fitted.filter(pl.col("accelerator_family") == family).iter_rows(named=True):
            params = (row["t1_min"], row["p"]) if row["model"] == "amdahl" else (row["g"], row["a"], row["b"])
            # the fitted curve's own reference point makes its efficiency 1 at N_ref, like the points
            ax.plot(xs, predicted_efficiency(row["model"], params, xs, n_ref), color=colour,
                    linestyle="-" if row["model"] == "amdahl" else "--", linewidth=1.1)
            if row["model"] == "amdahl" and row["knee_50"] is not None and row["knee_50"] <= xs[-1]:
                ax.axvline(row["knee_50"], color=colour, linestyle=":", linewidth=1)
                ax.annotate(f"E < 0.5 from ~{row['knee_50']:,.0f}", (row["knee_50"], 0.5), xytext=(4, 6),
                            textcoords="offset points", fontsize=7, color=colour)
    ax.axhline(1.0, color="black", linestyle="--", linewidth=0.8)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=0.8)
    ax.set_xscale("log", base=2)
    _log2_axis(ax.xaxis, group["accelerators"].to_list() + [float(group["accelerators"].max()) * 4])
    ax.set_xlabel("accelerators (log2 scale)")
    ax.set_ylabel("efficiency within the family (vs its fewest accelerators)")
    ax.grid(alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    handles += [plt.Line2D([], [], color="black", linestyle="-"), plt.Line2D([], [], color="black", linestyle="--")]
    labels += ["Amdahl fit", "USL fit"]
    ax.legend(handles, labels, fontsize=8, loc="best")
    return _finish(fig, ax, round_name, benchmark, "scaling-law fits per accelerator family", group.height, folder, f"{benchmark}_fit")


def plot_benchmark(efficiency: pl.DataFrame, clusters: pl.DataFrame, folder: Path, fits: pl.DataFrame | None = None) -> dict[str, list[Path]]:
    """All four views for one (round, benchmark); `efficiency` holds only that group's rows."""
    group = efficiency.join(clusters.select("round", "benchmark", "submitter", "system", "cluster"),
                            on=["round", "benchmark", "submitter", "system"], how="left").with_columns(pl.col("cluster").fill_null(0))
    plots = {
        "systems": plot_systems(group, folder),
        "efficiency": plot_efficiency(group, folder),
        "speedup": plot_speedup(group, folder),
        "time": plot_time(group, folder),
    }
    if fits is not None and fits.filter(pl.col("status") == "fitted").height:
        plots["fit"] = plot_fits(group, fits, folder)
    if "energy_kj" in group.columns and group["energy_kj"].is_not_null().any():
        plots["energy"] = plot_energy(group, folder)
    return plots


def plot_trends(trends: pl.DataFrame, folder: Path) -> dict[str, list[Path]]:
    """One plot per workload: best time to train per round, a line per (family, accelerator count)."""
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
        plain_log_axis(ax.yaxis)
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
