"""The pages of a report: `reports/vX.Y/index.html` and `reports/trends/index.html`, rendered from Jinja2 templates
(`templates/`, HTML escaped automatically), every path relative so a page opens from disk."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jinja2
import polars as pl

from mlperf_scaling.tasks.publish.plots import NOTE, PLOT_KINDS

_PLOT_CAPTIONS = {
    "systems": "Systems by accelerator model and count; marker size = systems sharing the configuration, colour = cluster.",
    "efficiency": "Scaling efficiency against the reference system (dashed: perfect scaling).",
    "speedup": "Speedup against the reference system (dashed: perfect scaling).",
    "time": "Time to train, log-log; circled: the Pareto front of time against accelerator-hours.",
    "energy": "Energy to train against time to train, where power was measured (MLCommons power logs).",
    "fit": "Efficiency within each accelerator family with Amdahl (solid) and USL (dashed) fits; dotted: where predicted efficiency falls below 0.5.",
}
_FIT_COLUMNS = [
    ("accelerator_family", "family"), ("model", "model"), ("n_points", "points"), ("n_distinct_accelerators", "distinct N"),
    ("p", "p"), ("p_stderr", "± p"), ("a", "a"), ("b", "b"), ("n_star", "N*"), ("r2_log", "R² (log T)"),
    ("knee_50", "E < 0.5 from N"), ("knee_50_low", "5%"), ("knee_50_high", "95%"), ("note", "note"),
]
_TABLE_COLUMNS = [
    ("submitter", "submitter"), ("system", "system"), ("accelerator_model_name", "accelerator"),
    ("accelerators", "N"), ("time_to_train_min", "T (min)"), ("accelerator_hours", "acc.-hours"),
    ("speedup", "speedup"), ("efficiency", "efficiency"), ("efficiency_same_model", "eff. (same model)"),
    ("cluster", "cluster"), ("is_pareto", "Pareto"), ("energy_kj", "energy (kJ)"), ("average_kw", "avg kW"),
]
_EXCLUSION_COLUMNS = [("benchmark", "benchmark"), ("submitter", "submitter"), ("system", "system"), ("reason", "reason")]
_TREND_COLUMNS = [
    ("accelerator_family", "family"), ("accelerators", "N"), ("round", "round"), ("n_systems", "systems"),
    ("best_time_min", "best T (min)"), ("best_system", "best system"), ("median_time_min", "median T"),
    ("speedup_vs_first", "speedup vs first round"), ("n_carried_over", "carried over"),
]


def cell(value: Any) -> str:
    """How a value reads in a table: thousands separated, three decimals, yes for a true flag, blank for nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@functools.cache
def _templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("mlperf_scaling.tasks.publish", "templates"),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["cell"] = cell
    return environment


def _figures(benchmark: str, plots: dict[str, dict[str, list[Path]]]) -> list[dict[str, str]]:
    return [
        {"kind": kind, "png": f"plots/{benchmark}_{kind}.png", "svg": f"plots/{benchmark}_{kind}.svg", "caption": _PLOT_CAPTIONS[kind]}
        for kind in PLOT_KINDS
        if kind in plots.get(benchmark, {})
    ]


def _facts(row: dict[str, Any], group: pl.DataFrame) -> list[str]:
    k, silhouette = group["k"][0], group["silhouette"][0]
    cluster_note = f"k = {k}, silhouette {silhouette:.2f}" if silhouette is not None else "too few systems to cluster"
    best = (
        f"{row['best_scale_out_system']} with {row['best_scale_out_accelerators']:,} accelerators, "
        f"efficiency {row['best_scale_out_efficiency']:.2f}" if row["best_scale_out_system"] else "none (no system larger than the reference)"
    )
    return [
        f"Reference: {row['reference_system']}, {row['reference_accelerators']:,} accelerators, {row['reference_time_min']:.2f} min",
        f"Fastest: {row['fastest_system']}, {row['fastest_accelerators']:,} accelerators, {row['fastest_time_min']:.3f} min",
        f"Most efficient scale-out: {best}",
        f"{row['n_accelerator_models']} accelerator models; clusters: {cluster_note}; {row['n_pareto']} systems on the Pareto front",
    ]


def render_index(
    round_name: str,
    summary: pl.DataFrame,
    efficiency: pl.DataFrame,
    clusters: pl.DataFrame,
    exclusions: pl.DataFrame,
    plots: dict[str, dict[str, list[Path]]],
    source: dict | None,
    fits: pl.DataFrame | None = None,
) -> str:
    """The round's page: one section per benchmark, plots and tables."""
    joined = efficiency.join(clusters.select("benchmark", "submitter", "system", "cluster", "k", "silhouette"),
                             on=["benchmark", "submitter", "system"], how="left")
    sections = []
    for row in summary.iter_rows(named=True):
        benchmark = row["benchmark"]
        group = joined.filter(pl.col("benchmark") == benchmark).sort("accelerators", "time_to_train_min")
        fitted = refused = None
        if fits is not None:
            fitted = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "fitted"))
            refused = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "refused") & (pl.col("model") == "amdahl"))
        sections.append({
            "benchmark": benchmark,
            "n_systems": row["n_systems"],
            "facts": _facts(row, group),
            "figures": _figures(benchmark, plots),
            "fits": fitted.to_dicts() if fitted is not None else [],
            "refused": [f"{r['accelerator_family']} ({r['note'] or ''})" for r in refused.iter_rows(named=True)] if refused is not None else [],
            "fastest": group.sort("time_to_train_min").head(10).to_dicts(),
            "systems": group.to_dicts(),
        })
    return _templates().get_template("round.html.j2").render(
        round=round_name, note=NOTE, source=source, sections=sections, columns=_TABLE_COLUMNS, fit_columns=_FIT_COLUMNS,
        exclusions=exclusions.to_dicts(), exclusion_columns=_EXCLUSION_COLUMNS,
    )


def render_trends(trends: pl.DataFrame, carried: pl.DataFrame, plots: dict[str, list[Path]]) -> str:
    """The cross-round page: per workload, best time at equal scale round by round."""
    sections = []
    for workload in sorted(trends["benchmark_canonical"].unique().to_list()):
        figure = {"png": f"plots/{workload}_trend.png", "svg": f"plots/{workload}_trend.svg"} if workload in plots else None
        sections.append({"workload": workload, "figure": figure,
                         "rows": trends.filter(pl.col("benchmark_canonical") == workload).to_dicts()})
    return _templates().get_template("trends.html.j2").render(
        sections=sections, columns=_TREND_COLUMNS, n_carried_over=carried.filter(pl.col("is_carried_over")).height, note=NOTE,
    )


def write_index(folder: Path, page: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
