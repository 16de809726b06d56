"""Publish a round's analysis as files: `reports/vX.Y/` with plots, CSV tables and a static index.html."""

from __future__ import annotations

import html
from pathlib import Path

import polars as pl

from tasks.plots import NOTE, PLOT_KINDS

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


def write_tables(folder: Path, tables: dict[str, pl.DataFrame]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        frame.write_csv(path)
        paths.append(path)
    return paths


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return html.escape(str(value))


def _table(frame: pl.DataFrame, columns: list[tuple[str, str]], css: str = "") -> str:
    head = "".join(f"<th>{html.escape(label)}</th>" for _, label in columns)
    rows = []
    for row in frame.iter_rows(named=True):
        marks = " class='reference'" if row.get("is_reference") else ""
        rows.append(f"<tr{marks}>" + "".join(f"<td>{_cell(row.get(key))}</td>" for key, _ in columns) + "</tr>")
    return f"<table class='{css}'><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


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
    """The round's page: one section per benchmark, plots and tables, all paths relative."""
    joined = efficiency.join(clusters.select("benchmark", "submitter", "system", "cluster", "k", "silhouette"),
                             on=["benchmark", "submitter", "system"], how="left")
    sections, toc = [], []
    for row in summary.iter_rows(named=True):
        benchmark = row["benchmark"]
        anchor = html.escape(benchmark)
        toc.append(f"<li><a href='#{anchor}'>{anchor}</a> ({row['n_systems']} systems)</li>")
        group = joined.filter(pl.col("benchmark") == benchmark).sort("accelerators", "time_to_train_min")
        k, silhouette = group["k"][0], group["silhouette"][0]
        cluster_note = f"k = {k}, silhouette {silhouette:.2f}" if silhouette is not None else "too few systems to cluster"
        best = (
            f"{_cell(row['best_scale_out_system'])} with {row['best_scale_out_accelerators']:,} accelerators, "
            f"efficiency {row['best_scale_out_efficiency']:.2f}" if row["best_scale_out_system"] else "none (no system larger than the reference)"
        )
        facts = (
            f"<ul class='facts'><li>Reference: {_cell(row['reference_system'])}, {row['reference_accelerators']:,} accelerators, "
            f"{row['reference_time_min']:.2f} min</li>"
            f"<li>Fastest: {_cell(row['fastest_system'])}, {row['fastest_accelerators']:,} accelerators, {row['fastest_time_min']:.3f} min</li>"
            f"<li>Most efficient scale-out: {best}</li>"
            f"<li>{row['n_accelerator_models']} accelerator models; clusters: {cluster_note}; {row['n_pareto']} systems on the Pareto front</li></ul>"
        )
        figures = "".join(
            f"<figure><a href='plots/{benchmark}_{kind}.svg'><img src='plots/{benchmark}_{kind}.png' "
            f"alt='{anchor} {kind} plot' loading='lazy'></a><figcaption>{html.escape(_PLOT_CAPTIONS[kind])}</figcaption></figure>"
            for kind in PLOT_KINDS if kind in plots.get(benchmark, {})
        )
        top = group.sort("time_to_train_min").head(10)
        fit_html = ""
        if fits is not None:
            fitted = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "fitted"))
            refused = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "refused") & (pl.col("model") == "amdahl"))
            if fitted.height:
                fit_html = f"<h3>Scaling-law fits (where adding accelerators stops paying)</h3>{_table(fitted, _FIT_COLUMNS)}"
            if refused.height:
                fit_html += "<p class='source'>Not fitted: " + "; ".join(
                    f"{html.escape(r['accelerator_family'])} ({html.escape(r['note'] or '')})" for r in refused.iter_rows(named=True)) + "</p>"
        sections.append(
            f"<section id='{anchor}'><h2>{anchor}</h2>{facts}<div class='plots'>{figures}</div>{fit_html}"
            f"<h3>Ten fastest</h3>{_table(top, _TABLE_COLUMNS)}"
            f"<details><summary>All {group.height} systems, by accelerator count</summary>{_table(group, _TABLE_COLUMNS)}</details></section>"
        )
    excluded = (
        f"<details><summary>{exclusions.height} score rows left out of the analysis</summary>"
        f"{_table(exclusions, [('benchmark', 'benchmark'), ('submitter', 'submitter'), ('system', 'system'), ('reason', 'reason')])}</details>"
        if exclusions.height else ""
    )
    provenance = ""
    if source:
        version = source.get("source_commit") or source.get("source_sha256") or ""
        provenance = f"<p class='source'>Data: {html.escape(str(source.get('source')))} ({html.escape(str(version))}), loaded {html.escape(str(source.get('finished_at')))}.</p>"
        provenance += _rules_line(source)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>MLPerf Training {html.escape(round_name)}: scaling analysis</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; }}
h1 {{ margin-bottom: .2rem; }} .note {{ color: #8a4b00; background: #fff4e0; padding: .5rem .8rem; border-radius: 4px; }}
section {{ border-top: 1px solid #ddd; margin-top: 2rem; padding-top: .5rem; }}
.plots {{ display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 1rem; }}
figure {{ margin: 0; }} figure img {{ width: 100%; height: auto; border: 1px solid #eee; }}
figcaption {{ font-size: .85rem; color: #555; }}
table {{ border-collapse: collapse; font-size: .85rem; margin: .5rem 0; }}
th, td {{ border-bottom: 1px solid #e5e5e5; padding: .25rem .5rem; text-align: left; }}
td:nth-child(n+4) {{ text-align: right; }} tr.reference {{ background: #fff8d6; }}
.source, .toc {{ font-size: .9rem; }}
</style></head><body>
<h1>MLPerf Training {html.escape(round_name)}: how far does adding accelerators pay?</h1>
<p class="note">{html.escape(NOTE)} Times to train are the official scores (olympic average, scaling factor applied).</p>
{provenance}
<p>Reference system per benchmark: the fewest accelerators and, among those, the longest time to train
(Cortes, Juiz and Bermejo, arXiv 2509.03263). Efficiency 1.0 is perfect scaling. The same-model efficiency takes the
reference within one accelerator model. Highlighted rows are the reference.</p>
<ul class="toc">{''.join(toc)}</ul>
{''.join(sections)}
<section><h2>Left out</h2>{excluded or '<p>Nothing.</p>'}</section>
</body></html>
"""


def _rules_line(source: dict) -> str:
    """How the round's runs were judged, in one line; a warning where the rules installed are older than the round."""
    coverage, ruleset, package = source.get("rules_coverage"), source.get("ruleset"), source.get("rules_package")
    if coverage is None:
        return ""
    if coverage == "checked":
        return (f"<p class='source'>Runs judged by every compliance rule of ruleset {html.escape(str(ruleset))} "
                f"({html.escape(str(package))}), as the MLCommons checker judges them.</p>")
    css = "note" if coverage == "newer" else "source"
    return f"<p class='{css}'>Rules: {html.escape(str(source.get('message') or coverage))}</p>"


def write_index(folder: Path, page: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def render_trends(trends: pl.DataFrame, carried: pl.DataFrame, plots: dict[str, list[Path]]) -> str:
    """The cross-round page: per workload, best time at equal scale round by round."""
    columns = [("accelerator_family", "family"), ("accelerators", "N"), ("round", "round"), ("n_systems", "systems"),
               ("best_time_min", "best T (min)"), ("best_system", "best system"), ("median_time_min", "median T"),
               ("speedup_vs_first", "speedup vs first round"), ("n_carried_over", "carried over")]
    sections = []
    for workload in sorted(trends["benchmark_canonical"].unique().to_list()):
        group = trends.filter(pl.col("benchmark_canonical") == workload)
        figure = (f"<figure><a href='plots/{workload}_trend.svg'><img src='plots/{workload}_trend.png' alt='{html.escape(workload)} trend'></a></figure>"
                  if workload in plots else "")
        sections.append(f"<section id='{html.escape(workload)}'><h2>{html.escape(workload)}</h2>{figure}{_table(group, columns)}</section>")
    copies = carried.filter(pl.col("is_carried_over"))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>MLPerf Training across rounds</title>
<style>body {{ font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; }}
figure img {{ max-width: 900px; width: 100%; }} table {{ border-collapse: collapse; font-size: .85rem; }}
th, td {{ border-bottom: 1px solid #e5e5e5; padding: .25rem .5rem; }}</style></head><body>
<h1>MLPerf Training across rounds: the same workload, accelerator family and scale</h1>
<p>Best official time to train per round for each (workload, accelerator family, accelerator count) seen in at least two
rounds. {copies.height} results re-published unchanged from an earlier round (byte-identical logs, or the same runs to the
millisecond) are counted once, in their first round. {html.escape(NOTE)}</p>
{''.join(sections)}
</body></html>
"""
