"""The pages of a report: `reports/vX.Y/index.html` and `reports/trends/index.html`, rendered from Jinja2 templates
(`templates/`, HTML escaped automatically), every path relative so a page opens from disk."""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from typing import Any

import jinja2
import polars as pl
from markupsafe import Markup, escape

from mlperf_scaling.reference.lookup import benchmark_name, canonical_benchmark
from mlperf_scaling.rounds import round_label, round_title
from mlperf_scaling.tasks.publish.labels import ALL_GROUPS, ALL_ROUNDS, FORMATS, MIN_ENERGY_POINTS, NOTE, PLOT_KINDS, workload_label

_PLOT_CAPTIONS = {
    "scaling": "Within each comparable accelerator group: each system's efficiency (the best time at the group's smallest count x "
               "that count, over its time x N), bars from the fastest to the slowest valid run; the line is the best time per count "
               "as an efficiency, through the best measured at each count, predicted between and two doublings beyond, the band "
               "its 90 % interval (calibrated on the backtest), v the knee; right, the efficiency split into its throughput part "
               "and its convergence part.",
    "time": "Time to train, log-log, bars from the fastest to the slowest valid run; colour = accelerator group, shape = k-means "
            "cluster; numbered: the Pareto front of time against accelerator-hours.",
    "energy": "Energy to train against time to train, where power was measured (MLCommons power logs); colour = accelerators.",
    "systems": "Systems by comparable accelerator group and count; colour = accelerator group, shape = k-means cluster, marker size = "
               "systems sharing the configuration.",
    "paper": "The paper's E′ (not the efficiency above): one reference per benchmark across every accelerator, so it mixes hardware generations "
             "(dashed: perfect scaling); colour = accelerator group, shape = k-means cluster.",
}
_FIT_COLUMNS = [
    ("accelerator_group", "accelerator group"), ("model", "model"), ("n_points", "systems"), ("n_distinct_accelerators", "distinct N"),
    ("p", "p"), ("p_stderr", "± p"), ("n_star", "N* (USL peak)"), ("r2_log", "R² (log T)"), ("note", "note"),
]
_TABLE_COLUMNS = [
    ("submitter", "submitter"), ("system", "system"), ("accelerator_group", "accelerator group"),
    ("accelerators", "N"), ("time_to_train_min", "T (min)"), ("time_to_train_min_low", "fastest run"),
    ("time_to_train_min_high", "slowest"), ("accelerator_hours", "acc.-hours"),
    ("efficiency", "efficiency"), ("throughput_part", "throughput part"), ("convergence_part", "convergence part"),
    ("global_batch_size", "global batch"), ("paper_e_prime", "the paper's E′"),
    ("cluster", "cluster"), ("is_pareto", "Pareto"), ("energy_kj", "energy (kJ)"), ("average_kw", "avg kW"),
]
_RECOMMENDATION_COLUMNS = [
    ("workload_label", "workload"), ("accelerator_group", "accelerator group"), ("measured", "measured N"),
    ("accelerators", "recommended N"), ("evidence", "time (min), as measured"), ("efficiency_text", "efficiency"),
    ("hours_text", "acc.-hours"), ("energy_kwh", "energy (kWh)"),
    ("knee_text", "E < threshold from N [90 %]"), ("next", "the next step"),
    ("backtest", "backtest: median error; interval held"), ("warning", "warning"),
]
_SINGLE_COLUMNS = [("workload_label", "workload"), ("accelerator_group", "accelerator group"), ("accelerators", "N"),
                   ("measured_time_min", "best time (min)"), ("n_systems", "systems")]
_EXCLUSION_COLUMNS = [("workload_label", "workload"), ("submitter", "submitter"), ("system", "system"), ("reason", "reason")]
_GAIN_COLUMNS = [
    ("accelerator_group", "accelerator group"), ("round", "round"), ("previous_round", "against the fit of"),
    ("n_systems", "systems"), ("median_ratio", "measured / predicted, median"), ("best_ratio", "best"), ("range", "N"),
]

_TREND_COLUMNS = [
    ("accelerator_group", "accelerator group"), ("accelerators", "N"), ("round", "round"), ("n_systems", "systems"),
    ("best_time_min", "best T (min)"), ("best_system", "best system"), ("median_time_min", "median T"),
    ("speedup_vs_first", "speedup vs first round"), ("n_carried_over", "carried over"),
]


# columns that count something (accelerators, systems) or hold a batch or a knee in accelerators: whole numbers, however
# they are stored (a knee of 406.694 accelerators reads as 407, a batch of 768.0 as 768)
_WHOLE = re.compile(r"^(n_.*|.*accelerators(_low|_high)?|global_batch_size|knee.*|n_star)$")


def cell(value: Any, key: str = "") -> str:
    """How a value reads in a table: thousands separated, three decimals (whole numbers for counts and batches), yes for
    a true flag, blank for nothing."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, float) and _WHOLE.match(key) and math.isfinite(value):
        return f"{round(value):,}"
    if isinstance(value, float) and key == "effective_instance_scale" and math.isfinite(value):  # a share of a machine
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.1f}"
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


# where a text cell may break: after `_` or `/`, and after `-` or `.` before a letter (H100-SXM, Oracle/128xBM.GPU),
# never inside a number (9.5, 24.04)
_BREAK = re.compile(r"(?<=[_/])(?=\S)|(?<=[-.])(?=[A-Za-z])")


def text_cell(value: Any, key: str = "") -> Markup:
    """A cell as HTML: a system name may go on to the next line after a separator (a `<wbr>` there), never inside a
    word; a number as `cell` writes it, never broken."""
    if not isinstance(value, str):
        return Markup(escape(cell(value, key)))
    return Markup("<wbr>").join(escape(piece) for piece in _BREAK.split(value))


def present(columns: list[tuple[str, str]], rows: list[dict]) -> list[tuple[str, str]]:
    """The columns with something to show in at least one row: an empty column only widens a table."""
    return [(key, label) for key, label in columns if any(cell(row.get(key), key) for row in rows)]


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
    environment.filters["text_cell"] = text_cell
    environment.filters["present"] = present
    environment.filters["round_title"] = round_title
    environment.filters["round_label"] = round_label
    return environment


def figure_files(paths: list[Path]) -> dict[str, str]:
    """The file a page shows (SVG where drawn, else PNG) and the one it links (the other format where drawn too)."""
    by_format = {p.suffix.lstrip("."): f"plots/{p.name}" for p in paths}
    shown = next(by_format[f] for f in FORMATS if f in by_format)
    return {"src": shown, "link": next((name for name in by_format.values() if name != shown), shown)}


def _figures(benchmark: str, plots: dict[str, dict[str, list[Path]]]) -> list[dict[str, str]]:
    return [{"kind": kind, "caption": _PLOT_CAPTIONS[kind], **figure_files(plots[benchmark][kind])}
            for kind in PLOT_KINDS if kind in plots.get(benchmark, {})]


def _interval(point: float | None, low: float | None, high: float | None, digits: int) -> str:
    if point is None:
        return ""
    if low is None and high is None:
        return f"{point:,.{digits}f}"
    return f"{point:,.{digits}f} [{'-' if low is None else f'{low:,.{digits}f}'}, {'beyond reach' if high is None else f'{high:,.{digits}f}'}]"


def recommendation_rows(recommendations: pl.DataFrame) -> tuple[list[dict], list[dict]]:
    """The page's answer: groups measured at two counts or more (what was measured at the recommended count, the next
    step measured or predicted, the knee, how well the planner predicted the group's measured counts and what to be
    wary of), and the groups measured at one count only, which say nothing about scaling."""
    rows, single = [], []
    for r in recommendations.sort("benchmark", "n_distinct_accelerators", "n_systems", descending=[False, True, True]).iter_rows(named=True):
        row = {**r, "workload_label": workload_label(r["benchmark"], r["round"]), "measured_time_min": r["time_min"]}
        if r["n_distinct_accelerators"] < 2:
            single.append(row)
            continue
        row["measured"] = f"{r['reference_accelerators']:,}-{r['max_measured_accelerators']:,} ({r['n_distinct_accelerators']} counts)"
        if r["basis"] == "measured":
            others = f"; others up to {r['slowest_system_min']:,.2f}" if r["n_systems_at"] and r["n_systems_at"] > 1 else ""
            row["evidence"] = f"{r['time_min']:,.2f} measured ({r['best_system']}{others})"
        else:
            row["evidence"] = f"{_interval(r['time_min'], r['time_min_low'], r['time_min_high'], 2)} predicted"
        row["efficiency_text"] = _interval(r["efficiency"], r["efficiency_low"], r["efficiency_high"], 2)
        row["efficiency_text_note"] = r.get("efficiency_note")
        low, high = (None if t is None else r["accelerators"] * t / 60 for t in (r["time_min_low"], r["time_min_high"]))
        row["hours_text"] = _interval(r["accelerator_hours"], low, high, 1)
        row["energy_kwh"] = None if r.get("energy_kj") is None else r["energy_kj"] / 3600
        row["knee_text"] = (_interval(r["knee"], r["knee_low"], r["knee_high"], 0) if r["knee"] is not None
                            else ("not within 16x the largest count" if r["model"] is not None else "fewer than 3 counts"))
        if r["next_accelerators"] is None:
            row["next"] = ""
        else:
            how = (f"measured {r['next_time_min']:,.2f} min" if r["next_basis"] == "measured"
                   else f"predicted {_interval(r['next_time_min'], r['next_time_min_low'], r['next_time_min_high'], 2)} min")
            why_not = f"; not the answer: {r['next_not_chosen']}" if r.get("next_not_chosen") else ""
            row["next"] = f"{r['next_accelerators']:,}: {how}, {r['extra_accelerator_hours_pct']:+.0f} % accelerator-hours{why_not}"
        if r["backtest_median_error_pct"] is None:
            row["backtest"] = "fewer than 4 counts"
        else:
            held = f"; {r['backtest_covered']} of {r['backtest_counts']}" if r["backtest_covered"] is not None else ""
            row["backtest"] = f"{r['backtest_median_error_pct']:.1f} % ({r['backtest_counts']} counts){held}"
        rows.append(row)
    return rows, single


def coverage_sentence(backtest: pl.DataFrame | None, where: str) -> str:
    """How often the stated interval held in a set of backtest cases, per model, in words ('' without cases)."""
    from mlperf_scaling.tasks.planning.calibration import LEVEL, coverage

    if backtest is None or backtest.height == 0:
        return ""
    said = [f"the {model} model's in {held:,} of {cases:,} ({100 * held / cases:.0f} %)" for model, (held, cases) in sorted(coverage(backtest).items()) if cases]
    if not said:
        return ""
    return (f"{where}, each measured count left out and predicted from the others, the stated {LEVEL * 100:.0f} % interval held the "
            f"measured best time: {'; '.join(said)}.")


def _energy_fact(group: pl.DataFrame) -> list[str]:
    """Where power was measured for one system only, what it measured: a plot of one point would say less."""
    measured = group.filter(pl.col("energy_kj").is_not_null()) if "energy_kj" in group.columns else group.clear()
    if measured.height == 0 or measured.height >= MIN_ENERGY_POINTS:
        return []
    r = measured.row(0, named=True)
    power = f", {r['average_kw']:,.1f} kW on average" if r.get("average_kw") is not None else ""
    return [f"Energy to train, measured for one system only: {r['submitter']}/{r['system']}, {r['accelerators']:,} accelerators, "
            f"{r['energy_kj'] / 3600:,.1f} kWh in {r['time_to_train_min']:,.2f} min{power}"]


def with_efficiency_notes(recommendations: pl.DataFrame, efficiency: pl.DataFrame) -> pl.DataFrame:
    """The recommendations with why the efficiency each quotes is above 1, where it is: the efficiency_note of the best
    system at the recommended count."""
    if "efficiency_note" in recommendations.columns or recommendations.height == 0:
        return recommendations
    notes = efficiency.select("round", "benchmark", "accelerator_group", "accelerators",
                              pl.format("{}/{}", "submitter", "system").alias("best_system"), "efficiency_note", "energy_kj")
    return recommendations.join(notes, on=["round", "benchmark", "accelerator_group", "accelerators", "best_system"], how="left")


def _without_knee(note: str | None) -> str | None:
    kept = [part for part in (note or "").split("; ") if part and "knee" not in part and "interval" not in part]
    return "; ".join(kept) or None


def _facts(row: dict[str, Any], group: pl.DataFrame) -> list[str]:
    k, silhouette = group["k"][0], group["silhouette"][0]
    cluster_note = f"k = {k}, silhouette {silhouette:.2f}" if silhouette is not None else "too few systems to cluster"
    note = None
    if row["best_scale_out_system"] is not None and "efficiency_note" in group.columns:
        scaled = group.filter((pl.format("{}/{}", "submitter", "system") == row["best_scale_out_system"])
                              & (pl.col("accelerators") == row["best_scale_out_accelerators"]))
        note = scaled["efficiency_note"][0] if scaled.height else None
    best = (
        f"{row['best_scale_out_system']}, {row['best_scale_out_accelerators']:,} {row['best_scale_out_group']} "
        f"(against {row['best_scale_out_reference_accelerators']:,}), efficiency {row['best_scale_out_efficiency']:.2f}"
        + (f", above 1: {note.split('): ', 1)[-1]}" if note else "")
        if row["best_scale_out_system"] else "none (no group measured at more than one count)"
    )
    return [
        f"Fastest: {row['fastest_system']}, {row['fastest_accelerators']:,} {row['fastest_group']}, {row['fastest_time_min']:.3f} min",
        f"Most efficient scale-out within comparable hardware: {best}",
        f"The paper's reference (for E', across hardware generations): {row['paper_reference_system']}, "
        f"{row['paper_reference_accelerators']:,} accelerators, {row['paper_reference_time_min']:.2f} min",
        f"{row['n_accelerator_groups']} comparable accelerator groups; clusters: {cluster_note}; {row['n_pareto']} systems on the Pareto front",
        *_energy_fact(group),
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
    recommendations: pl.DataFrame | None = None,
    backtest: pl.DataFrame | None = None,
    weak: pl.DataFrame | None = None,
) -> str:
    """The round's page: the recommendation table first, then one section per benchmark, plots and tables; for an MLPerf
    HPC round, its weak-scaling results after the answer."""
    joined = efficiency.join(clusters.select("benchmark", "submitter", "system", "cluster", "k", "silhouette"),
                             on=["benchmark", "submitter", "system"], how="left")
    sections = []
    for row in summary.iter_rows(named=True):
        benchmark = row["benchmark"]
        group = joined.filter(pl.col("benchmark") == benchmark).sort("accelerators", "time_to_train_min")
        fitted = refused = None
        if fits is not None:
            fitted = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "fitted")).with_columns(
                # the knee is the answer table's (the planner's): what a fit says of its own knee's interval is not shown
                pl.col("note").map_elements(_without_knee, return_dtype=pl.String))
            refused = fits.filter((pl.col("benchmark") == benchmark) & (pl.col("status") == "refused") & (pl.col("model") == "amdahl"))
        name = benchmark_name(benchmark, round_name)
        sections.append({
            "benchmark": benchmark,
            "canonical": group["benchmark_canonical"][0] if group.height else name.canonical_name,
            "title": name.label,
            "task": name.task,
            "folder_note": name.note if benchmark != name.canonical_name else "",
            "n_systems": row["n_systems"],
            "facts": _facts(row, group),
            "figures": _figures(benchmark, plots),
            "fits": fitted.to_dicts() if fitted is not None else [],
            "refused": [f"{r['accelerator_group']} ({r['note'] or ''})" for r in refused.iter_rows(named=True)] if refused is not None else [],
            "fastest": group.sort("time_to_train_min").head(10).to_dicts(),
            "systems": group.to_dicts(),
        })
    answers, single = recommendation_rows(with_efficiency_notes(recommendations, efficiency) if recommendations is not None else pl.DataFrame(
        schema={"benchmark": pl.String, "n_distinct_accelerators": pl.Int64, "n_systems": pl.Int64}))
    excluded = [{**r, "workload_label": workload_label(r["benchmark"], round_name)} for r in exclusions.to_dicts()]
    threshold = recommendations["threshold"][0] if recommendations is not None and recommendations.height else 0.5
    return _templates().get_template("round.html.j2").render(
        round=round_name, note=NOTE, source=source, sections=sections, columns=_TABLE_COLUMNS, fit_columns=_FIT_COLUMNS,
        exclusions=excluded, exclusion_columns=_EXCLUSION_COLUMNS, unscored=unscored_workloads(round_name, summary, exclusions), answers=answers, single=single,
        answer_columns=_RECOMMENDATION_COLUMNS, single_columns=_SINGLE_COLUMNS, threshold=threshold,
        coverage=coverage_sentence(backtest, "In this round's backtest"),
        weak=weak.to_dicts() if weak is not None else [], weak_columns=_WEAK_COLUMNS,
    )


# The weak-scaling table of an HPC round page: official figures first, then what they mean per model
_WEAK_COLUMNS = [
    ("benchmark", "workload"), ("system", "system"), ("accelerator_group", "accelerator group"), ("scale_unit", "counts"),
    ("number_of_models", "models (official)"), ("instance_scale", "instance scale (official)"),
    ("time_to_train_all_min", "time to train all (min, official)"), ("models_per_minute", "models / min"),
    ("effective_instance_scale", "per instance"), ("mean_instance_min", "instance mean (min)"),
    ("straggler_efficiency", "straggler eff."), ("sharing_efficiency", "sharing eff."),
    ("unit_hours_per_model", "hours per model"), ("strong_best_unit_hours", "strong: fewest hours"),
    ("weak_saves_pct", "saves (%)"),
]


def unscored_workloads(round_name: str, summary: pl.DataFrame, exclusions: pl.DataFrame) -> list[str]:
    """The round's workloads none of whose scores could be analysed, each with how many there are and the commonest
    reason: a workload held but unscored says so, rather than missing from the page."""
    analysed = set(summary["benchmark"].to_list()) if summary.height else set()
    said = []
    left = exclusions.filter(~pl.col("benchmark").is_in(list(analysed)))
    for (benchmark,), rows in sorted(left.group_by(["benchmark"]), key=lambda item: str(item[0][0])):
        reason = rows["reason"].mode().sort()[0]
        said.append(f"{workload_label(str(benchmark), round_name)}: {rows.height:,} score row{'s' if rows.height != 1 else ''}, "
                    f"none analysed ({reason})")
    return said


def _gain_rows(gains: pl.DataFrame) -> list[dict]:
    summary = (gains.group_by("accelerator_group", "round", "previous_round")
               .agg(pl.len().alias("n_systems"), pl.col("time_ratio").median().alias("median_ratio"), pl.col("time_ratio").min().alias("best_ratio"),
                    pl.col("accelerators").min().alias("low"), pl.col("accelerators").max().alias("high"))
               .sort("accelerator_group", "round"))
    return [{**r, "median_ratio": f"{r['median_ratio']:.2f}", "best_ratio": f"{r['best_ratio']:.2f}",
             "range": f"{r['low']:,}" if r["low"] == r["high"] else f"{r['low']:,}-{r['high']:,}"} for r in summary.iter_rows(named=True)]


def render_trends(trends: pl.DataFrame, carried: pl.DataFrame, plots: dict[str, list[Path]], gains: pl.DataFrame | None = None) -> str:
    """The cross-round page: per workload, best time at equal scale round by round, and each round's systems against
    the previous round's fit (the software gain)."""
    sections = []
    for workload in sorted(trends["benchmark_canonical"].unique().to_list()):
        figure = figure_files(plots[workload]) if workload in plots else None
        workload_gains = gains.filter(pl.col("benchmark_canonical") == workload) if gains is not None else None
        sections.append({"workload": workload, "title": canonical_benchmark(workload).label, "task": canonical_benchmark(workload).task, "figure": figure,
                         "rows": trends.filter(pl.col("benchmark_canonical") == workload).to_dicts(),
                         "gains": _gain_rows(workload_gains) if workload_gains is not None and workload_gains.height else []})
    return _templates().get_template("trends.html.j2").render(
        sections=sections, columns=_TREND_COLUMNS, gain_columns=_GAIN_COLUMNS,
        n_carried_over=carried.filter(pl.col("is_carried_over")).height, note=NOTE,
    )


_ROUND_COLUMNS = [("round", "round"), ("report", "report"), ("ruleset", "rules"), ("n_systems", "systems"), ("n_runs", "runs"),
                  ("n_valid_runs", "valid runs"), ("n_scores", "score rows"), ("n_scored", "scored"),
                  ("n_rejections", "rejected"), ("csv", "tables")]
def answer_rows(answers: list[dict]) -> list[dict]:
    """The front page's compact answer: per workload (named once, over its groups' rows) and group, the count, its time,
    measured or predicted, the efficiency and its round; the whole sentence behind a click or a hover."""
    rows = []
    for i, row in enumerate(answers):
        first = i == 0 or answers[i - 1]["workload_label"] != row["workload_label"]
        span = next((j for j in range(i + 1, len(answers)) if answers[j]["workload_label"] != row["workload_label"]), len(answers)) - i
        time = (f"{row['time_min']:,.2f}" if row["basis"] == "measured"
                else _interval(row["time_min"], row["time_min_low"], row["time_min_high"], 2))
        rows.append({**row, "workload_span": span if first else 0, "time_text": time,
                     "energy_text": "" if row["energy_kwh"] is None else f"{row['energy_kwh']:,.1f}",
                     "anchor": f"{row['benchmark_canonical']}-{row['accelerator_group']}"})
    return rows


def render_site_index(rounds: pl.DataFrame, latest: pl.DataFrame, published: set[str], backtest: pl.DataFrame | None = None,
                      weak: pl.DataFrame | None = None) -> str:
    """reports/index.html: every round (linked where its page exists), the trends page, the CSVs, and the recommendation
    per workload and accelerator group from the round that measured it best."""
    round_rows = []
    for r in rounds.iter_rows(named=True):
        has_page = r["round"] in published
        round_rows.append({**r, "report": "report" if has_page else "not published", "round_href": f"{r['round']}/index.html" if has_page else None,
                           "report_href": f"{r['round']}/index.html" if has_page else None,
                           "csv": "recommendations.csv" if has_page else "", "csv_href": f"{r['round']}/recommendations.csv" if has_page else None})
    answers, _ = recommendation_rows(latest)
    for row in answers:
        row["round_href"] = f"{row['round']}/index.html#{row['benchmark_canonical']}" if row["round"] in published else None
    answers.sort(key=lambda row: (row["workload_label"].lower(), row["accelerator_group"]))
    return _templates().get_template("index.html.j2").render(
        rounds=round_rows, round_columns=_ROUND_COLUMNS, latest=answer_rows(answers), note=NOTE,
        coverage=coverage_sentence(backtest, "Over every round's backtest"),
        weak=[{**row, "round_href": f"{row['round']}/index.html#weak-scaling" if row["round"] in published else None}
              for row in (weak.to_dicts() if weak is not None else [])],
    )


_LOCAL_LINK = re.compile(r'(?:src|href)="(?![a-z][a-z0-9+.-]*:|//)([^"?#]*)(?:\?[^"#]*)?(?:#([^"]*))?"')
_ANCHOR = re.compile(r'\sid="([^"]+)"')


@functools.lru_cache(maxsize=256)
def _anchors(page: Path, modified: float) -> frozenset[str]:
    return frozenset(_ANCHOR.findall(page.read_text(encoding="utf-8")))


def missing_links(page: Path) -> list[str]:
    """The files and anchors a page links to (relative links, images and pages alike) that are not there: a report must
    never point at a figure a worker wrote somewhere else, or never wrote, nor at a section a page does not have. A
    fragment that holds a view's state (`explore.html#workload=bert`) is the explorer's to read, not an anchor."""
    text = page.read_text(encoding="utf-8")
    missing = set()
    for path, fragment in _LOCAL_LINK.findall(text):
        target = page if not path else page.parent / path
        if path and not target.exists():
            missing.add(path)
        elif fragment and "=" not in fragment and target.suffix == ".html" and target.is_file() \
                and fragment not in _anchors(target.resolve(), target.stat().st_mtime):
            missing.add(f"{path}#{fragment}")
    return sorted(missing)


def write_index(folder: Path, page: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "index.html"
    path.write_text(page, encoding="utf-8")
    return path


def render_explorer(title: str, spec: str, top: str, n_points: int, coverage: str = "") -> str:
    """An explorer page around its Vega-Lite spec (JSON, made safe for a script element by the caller); `top` leads
    from the page's folder to reports/ ("" or "../")."""
    return _templates().get_template("explore.html.j2").render(title=title, spec=spec, top=top, in_round=bool(top), n_points=n_points, note=NOTE, coverage=coverage,
                                                                all_rounds=ALL_ROUNDS, all_groups=ALL_GROUPS)


def render_page(template: str, **values: Any) -> str:
    """Any page of the site from its template (templates/<template>), with the table macros and filters."""
    return _templates().get_template(template).render(**values)
