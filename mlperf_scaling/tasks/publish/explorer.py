"""The explorer: an interactive page per round and one for every round, built with Vega-Lite (through Altair) from the
warehouse, that works opened from disk with no network.

Per workload, time to train against accelerators (log-log), one point per score row with a time, coloured by
comparable accelerator group; the hover names the system and its figures; selectors for workload, round and group and
for the y axis (minutes, accelerator-hours, energy); the Pareto front of time against accelerator-hours ringed and
joined; the selected group's best time per count: measured where measured, predicted between and two doublings beyond
with the planner's 90 % interval (calibrated on the backtest) as a band. Vega's JavaScript (vl-convert's bundle of
Vega, Vega-Lite and vega-embed, about 0.9 MB) is written once beside the pages; the data is in each page (a page
opened from disk may not fetch a file) and in explore.json beside it, for other tools.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
from altair.utils.schemapi import debug_mode

from mlperf_scaling.reference.lookup import canonical_benchmark
from mlperf_scaling.rounds import sorted_rounds
from mlperf_scaling.tasks.metrics.context import SINGLE_SOURCE_PEAK
from mlperf_scaling.tasks.metrics.fits import apart_series
from mlperf_scaling.tasks.planning.calibration import Calibration, load_calibration
from mlperf_scaling.tasks.planning.predict import AMDAHL, group_model
from mlperf_scaling.tasks.publish.labels import ALL_GROUPS, ALL_ROUNDS, NOTE
from mlperf_scaling.tasks.publish.report import render_explorer

BUNDLE = "vega-embed.js"
PAGE = "explore.html"
DATA = "explore.json"
# the y axes a reader can switch between: column, axis title
# what the points can be coloured by, and filtered on (a covariate's value)
COLOUR_BY = {"accelerator_group": "accelerator group", "interconnect_kind": "scale-up fabric", "network_kind": "network",
             "cooling": "cooling", "precision_linear": "precision", "parallelism": "parallelism"}
NOT_STATED = "not stated"
ALL_VALUES = "every value"
Y_AXES = {"time_to_train_min": "time to train (minutes)", "accelerator_hours": "accelerator-hours", "energy_kwh": "energy to train (kWh)"}
_SIGNIFICANT = 5  # digits kept in the page's data: more than a hover shows, at a third of the size


def _rounded(value: Any) -> Any:
    if isinstance(value, float) and math.isfinite(value) and value != 0:
        return round(value, _SIGNIFICANT - 1 - int(math.floor(math.log10(abs(value)))))
    return value


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    # an absent key reads as no value in Vega, as null would, at no cost in bytes
    return [{key: _rounded(value) for key, value in row.items() if value is not None} for row in frame.iter_rows(named=True)]


def workload(canonical: str) -> str:
    return canonical_benchmark(canonical).label


def fit_curves(fitted_points: pl.DataFrame, calibration: Calibration | None = None) -> pl.DataFrame:
    """Per (round, workload, group) with three counts or more: the planner's best time per count, measured at the
    measured counts, predicted with its interval between them and beyond (the band; `calibration`'s, which the
    rounds' backtests set the level of)."""
    keys = ["round", "benchmark_canonical", "accelerator_group"]
    curves = []
    for key_values, group in fitted_points.group_by(keys, maintain_order=True):
        model = group_model(apart_series(group)[0], AMDAHL, round_name=str(key_values[0]), calibration=calibration)
        if model is not None:
            curves.append(model.curve(points=12).with_columns(*(pl.lit(value).alias(key) for key, value in zip(keys, key_values, strict=True))))
    columns = [*keys, "accelerators", "time_min", "time_min_low", "time_min_high"]
    if not curves:
        return pl.DataFrame(schema={c: pl.Utf8 if c in keys else pl.Float64 for c in columns})
    # the band where a count is measured is the measurement itself
    return pl.concat(curves).select(*keys, "accelerators", "time_min", pl.col("time_min_low").fill_null(pl.col("time_min")),
                                    pl.col("time_min_high").fill_null(pl.col("time_min")))


def explorer_data(points: pl.DataFrame, curves: pl.DataFrame) -> dict[str, Any]:
    """What a page shows, as plain JSON: the points (one per score row with a time), the fitted curves, and the
    workloads by name."""
    points = points.with_columns(pl.col("benchmark_canonical").map_elements(workload, return_dtype=pl.Utf8).alias("workload"))
    return {
        "note": NOTE,
        "points": _records(points),
        "fits": _records(curves),
        "workloads": dict(sorted({row["benchmark_canonical"]: row["workload"] for row in points.select("benchmark_canonical", "workload").unique().iter_rows(named=True)}.items(),
                                 key=lambda item: item[1].lower())),
    }


def _shown(field: str, fmt: str, unit: str = "") -> str:
    # a value absent from the row stays undefined, and the tooltip leaves its line out
    suffix = f" + ' {unit}'" if unit else ""
    return f"(isValid(datum.{field}) ? format(datum.{field}, '{fmt}'){suffix} : datum.{field})"


# The hover, as one object: its title is a heading, its other keys lines; a line whose value is undefined is left out
_HOVER = "{" + ", ".join([
    "title: datum.submitter + ' / ' + datum.system",
    "'round': datum.round",
    "'accelerator group': datum.accelerator_group",
    "'accelerators': format(datum.accelerators, ',')",
    f"'time to train': {_shown('time_to_train_min', ',.3f', 'min')}",
    "'fastest - slowest run': isValid(datum.time_to_train_min_low) ? format(datum.time_to_train_min_low, ',.2f') + ' - ' + "
    "format(datum.time_to_train_min_high, ',.2f') + ' min' : datum.time_to_train_min_low",
    f"'accelerator-hours': {_shown('accelerator_hours', ',.1f')}",
    f"'efficiency (against the best of the group at its fewest accelerators)': {_shown('efficiency', '.3f')}",
    "'efficiency above 1 because': datum.efficiency_note",
    f"'throughput part': {_shown('throughput_part', '.3f')}",
    f"'convergence part': {_shown('convergence_part', '.3f')}",
    f"'energy to train': {_shown('energy_kwh', ',.1f', 'kWh')}",
    f"'average power': {_shown('average_kw', ',.1f', 'kW')}",
    "'Pareto front (time, acc.-hours)': datum.is_pareto ? 'yes' : datum.__absent",
    "'division': datum.division",
    "'status': datum.status",
    "'RCP check': datum.rcp_status",
    "'result ID (as MLCommons published it)': datum.result_id",
    "'summarizer spreadsheet row (not the result ID)': datum.summarizer_row_id",
    "'files': isValid(datum.files_url) ? 'click the point to open them' : datum.__absent",
    "'not compared because': datum.left_out_because",
    "'scale-up fabric': datum.interconnect_kind",
    f"'scale-up domain': {_shown('scale_up_domain', ',')}",
    "'network': datum.network_kind",
    "'cooling': datum.cooling",
    "'precision (linear)': isValid(datum.precision_linear) ? datum.precision_linear + (isValid(datum.precision_source) ? ' (' + datum.precision_source + ')' : '') : datum.precision_linear",
    "'parallelism': datum.parallelism",
    f"'MFU (model FLOP/s over the datasheet peak)': isValid(datum.mfu) ? {_shown('mfu', '.2f')} + "
    "(datum.precision_source == 'assumed' ? ', at an assumed precision' : datum.precision_source == \"round's configs\" ? "
    "', at the precision the round\\'s other configs use' : '') + "
    f"(datum.peak_single_source ? ', {SINGLE_SOURCE_PEAK}' : '') : datum.mfu",
    f"'peak power': {_shown('peak_kw', ',.1f', 'kW')}",
    f"'energy per sample': {_shown('j_per_sample', ',.3~g', 'J')}",
]) + "}"


def _default_workload(points: pl.DataFrame) -> str:
    # the workload of the newest round measured at the most accelerator counts: the richest first view
    newest = sorted_rounds(points["round"].unique().to_list())[-1]
    counts = (points.filter(pl.col("round") == newest).group_by("benchmark_canonical").agg(pl.col("accelerators").n_unique().alias("n"))
              .sort(["n", "benchmark_canonical"], descending=[True, False]))
    return counts["benchmark_canonical"][0]


def explorer_chart(data: dict[str, Any], rounds: list[str], default_workload: str) -> alt.LayerChart:
    """The Vega-Lite chart of `data`; with several `rounds`, a round selector (default: all of them)."""
    workloads = data["workloads"]
    pick_workload = alt.param(name="pick_workload", value=default_workload,
                              bind=alt.binding_select(options=list(workloads), labels=list(workloads.values()), name="workload ", element="#controls"))
    groups = sorted({p["accelerator_group"] for p in data["points"]}, key=str.lower)
    pick_group = alt.param(name="pick_group", value=ALL_GROUPS, bind=alt.binding_select(options=[ALL_GROUPS, *groups], name="accelerator group ", element="#controls"))
    y_axis = alt.param(name="y_axis", value="time_to_train_min",
                       bind=alt.binding_radio(options=list(Y_AXES), labels=list(Y_AXES.values()), name="y axis ", element="#controls"))
    params = [pick_workload]
    in_round = "true"
    if len(rounds) > 1:
        pick_round = alt.param(name="pick_round", value=ALL_ROUNDS, bind=alt.binding_select(options=[ALL_ROUNDS, *reversed(rounds)], name="round ", element="#controls"))
        params.append(pick_round)
        in_round = f"(pick_round == '{ALL_ROUNDS}' || datum.round == pick_round)"
    colour_by = alt.param(name="colour_by", value="accelerator_group",
                          bind=alt.binding_select(options=list(COLOUR_BY), labels=list(COLOUR_BY.values()), name="colour by ", element="#controls"))
    values = sorted({str(p[field]) for p in data["points"] for field in COLOUR_BY if field != "accelerator_group" and p.get(field) is not None} | {NOT_STATED}, key=str.lower)
    pick_value = alt.param(name="pick_value", value=ALL_VALUES,
                           bind=alt.binding_select(options=[ALL_VALUES, *values], name="only where it is ", element="#controls"))
    params += [pick_group, y_axis, colour_by, pick_value]
    # the covariate the points are coloured by, as text; a value the system description leaves out says so
    coloured = f"isValid(datum[colour_by]) ? '' + datum[colour_by] : '{NOT_STATED}'"
    in_view = (f"datum.benchmark_canonical == pick_workload && {in_round} && (pick_group == '{ALL_GROUPS}' || datum.accelerator_group == pick_group)"
               f" && (pick_value == '{ALL_VALUES}' || ({coloured}) == pick_value)")
    # a time in minutes, read on the chosen axis: itself, or in accelerator-hours
    on_axis = "(y_axis == 'time_to_train_min' ? {t} : y_axis == 'accelerator_hours' ? {t} * datum.accelerators / 60 : null)"

    x = alt.X("accelerators:Q", scale=alt.Scale(type="log"), title="accelerators (log scale)")
    y = alt.Y("y:Q", scale=alt.Scale(type="log"), title=None)
    # an axis title cannot follow a parameter, a chart title can: "<workload>: <y axis> against accelerators"
    title = alt.TitleParams(text=alt.ExprRef(expr=f"{json.dumps(workloads)}[pick_workload] + ': ' + {json.dumps(Y_AXES)}[y_axis] + "
                                                   "' against accelerators (log-log)'"), anchor="start", fontSize=15)
    colour = alt.Color("coloured:N", title="colour", scale=alt.Scale(scheme="tableau20"), legend=alt.Legend(symbolLimit=40, symbolOpacity=1))
    legend_pick = alt.selection_point(fields=["coloured"], bind="legend", name="legend_pick")

    points = (alt.Chart(alt.NamedData(name="points"))
              .transform_filter(in_view)
              .transform_calculate(y="datum[y_axis]", coloured=coloured, lo=on_axis.format(t="datum.time_to_train_min_low"), hi=on_axis.format(t="datum.time_to_train_min_high"))
              .transform_filter("isValid(datum.y) && datum.y > 0"))
    # the hover for the mouse; for a screen reader (and a test), the same point in one line
    described = "datum.submitter + ' / ' + datum.system + ', ' + datum.round + ', ' + format(datum.accelerators, ',') + ' accelerators, ' + format(datum.time_to_train_min, ',.3f') + ' min'"
    dots = points.transform_calculate(hover=_HOVER, described=described).mark_point(filled=True, size=70).encode(
        x=x, y=y, color=colour, tooltip="hover:N", description="described:N", href="files_url:N",
        stroke=alt.condition("datum.is_pareto", alt.value("black"), alt.value("white")),
        strokeWidth=alt.condition("datum.is_pareto", alt.value(2), alt.value(0.5)),
        opacity=alt.condition(legend_pick, alt.value(0.9), alt.value(0.12)),
    ).add_params(legend_pick, alt.selection_interval(bind="scales", name="zoom"))
    spread = points.transform_filter("isValid(datum.lo) && datum.lo > 0").mark_rule(opacity=0.5).encode(x=x, y=alt.Y("lo:Q", scale=alt.Scale(type="log")), y2="hi:Q", color=colour)
    front = (points.transform_filter("datum.is_pareto").mark_line(color="black", strokeDash=[4, 3], strokeWidth=1)
             .encode(x=x, y=y, detail="round:N", order="accelerators:Q"))

    fits = (alt.Chart(alt.NamedData(name="fits"))
            .transform_filter(f"pick_group != '{ALL_GROUPS}' && colour_by == 'accelerator_group' && {in_view}")
            .transform_calculate(coloured="datum.accelerator_group", y=on_axis.format(t="datum.time_min"), lo=on_axis.format(t="datum.time_min_low"), hi=on_axis.format(t="datum.time_min_high"))
            .transform_filter("isValid(datum.y)"))
    band = fits.mark_area(opacity=0.15).encode(x=x, y=alt.Y("lo:Q", scale=alt.Scale(type="log")), y2="hi:Q", color=colour, detail="round:N")
    curve = fits.mark_line(strokeWidth=1.5).encode(x=x, y=y, color=colour, detail="round:N")

    return (alt.layer(band, curve, spread, front, dots)
            .add_params(*params)
            .properties(width="container", height=560, title=title, autosize=alt.AutoSizeParams(type="fit-x", contains="padding"))
            .configure_view(stroke="#ddd"))


def _bundle_versions() -> str:
    from importlib.metadata import version

    return f"// vega-embed bundle: vl-convert-python {version('vl-convert-python')}, Vega-Lite {alt.SCHEMA_VERSION}\n"


@functools.cache  # a process that publishes several report folders (watch, the tests) bundles once
def bundle_script() -> str:
    """Vega, Vega-Lite (the version Altair writes) and vega-embed in one script, from vl-convert; kept in the user's
    cache folder, so that a new report folder costs a copy, not another bundling."""
    cached = _bundle_cache()
    try:
        with cached.open(encoding="utf-8") as handle:
            if handle.readline() == _bundle_versions():
                return _bundle_versions() + handle.read()
    except OSError:  # none yet, or unreadable: bundled anew
        pass
    import vl_convert

    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    script = _bundle_versions() + vl_convert.javascript_bundle(vl_version=f"v{major}_{minor}")  # type: ignore[call-arg]  # snippet defaults to vega-embed; the stub says otherwise
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        part = cached.with_name(f"{cached.name}.{os.getpid()}.part")  # two commands at once never mix their writes
        part.write_text(script, encoding="utf-8")
        part.replace(cached)
    except OSError:  # a read-only home: the pages need the script, not the cache
        pass
    return script


def _bundle_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mlperf-scaling" / BUNDLE


def write_bundle(reports: Path) -> Path:
    """reports/vega-embed.js, rebuilt only when the versions in its first line are not the installed ones (bundling
    takes vl-convert a second)."""
    path = reports / BUNDLE
    if path.is_file():
        with path.open(encoding="utf-8") as handle:
            if handle.readline() == _bundle_versions():
                return path
    reports.mkdir(parents=True, exist_ok=True)
    part = path.with_suffix(".part")
    part.write_text(bundle_script(), encoding="utf-8")
    part.replace(path)
    return path


def _spec_json(chart: alt.TopLevelMixin, data: dict[str, Any], validate: bool) -> str:
    # the data once, as named datasets every layer reads (inline, each layer would carry its own copy), added after
    # Altair has validated the spec: checking 1,300 rows against the schema took seconds and checks nothing of ours
    spec = chart.to_dict(validate=validate)
    spec["datasets"] = {"points": data["points"], "fits": data["fits"]}
    # inside <script>: a "</" in the data (a system's name, say) must not close the element
    return json.dumps(spec, separators=(",", ":")).replace("</", "<\\/")


def write_explorer(folder: Path, data: dict[str, Any], default_workload: str, title: str, top: str, rounds: Iterable[str], validate: bool = True) -> Path:
    """folder/explore.html showing `data`; `top` is the way from the folder to reports/ ("" or "../")."""
    chart = explorer_chart(data, list(rounds), default_workload)
    folder.mkdir(parents=True, exist_ok=True)
    page = folder / PAGE
    page.write_text(render_explorer(title, _spec_json(chart, data, validate), top, len(data["points"]), data.get("coverage", "")), encoding="utf-8")
    return page


def write_explorers(reports: Path, points: pl.DataFrame, fitted_points: pl.DataFrame, publishing: Iterable[str] = (),
                    backtest: pl.DataFrame | None = None) -> list[Path]:
    """reports/explore.html over every round, and reports/<round>/explore.html for each round with a report, or whose
    report is being written (`publishing`); `backtest`: every round's plan_backtest, for how often the band holds."""
    from mlperf_scaling.tasks.publish.report import coverage_sentence

    if points.height == 0:
        return []
    write_bundle(reports)
    data = explorer_data(points, fit_curves(fitted_points, None if backtest is None else load_calibration().with_backtest(backtest)))
    data["coverage"] = coverage_sentence(backtest, "Over every round's backtest")
    # the data once, for other tools; each page carries its own share, since a page opened from disk may not fetch it
    (reports / DATA).write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
    rounds = sorted_rounds(points["round"].unique().to_list())
    pages = [write_explorer(reports, data, _default_workload(points), "every round", "", rounds)]
    # the round pages are the same chart over less data: checked against the schema once, above (checking each took
    # Altair a third of a second, most of the explorer's time in the main job)
    with debug_mode(False):
        pages += _round_pages(reports, points, data, rounds, set(publishing))
    return pages


def _round_pages(reports: Path, points: pl.DataFrame, data: dict[str, Any], rounds: list[str], publishing: set[str]) -> list[Path]:
    pages = []
    for round_name in rounds:
        if round_name in publishing or (reports / round_name / "index.html").is_file():
            share = {**data, "points": [p for p in data["points"] if p["round"] == round_name], "fits": [f for f in data["fits"] if f["round"] == round_name]}
            share["workloads"] = {k: v for k, v in data["workloads"].items() if any(p["benchmark_canonical"] == k for p in share["points"])}
            pages.append(write_explorer(reports / round_name, share, _default_workload(points.filter(pl.col("round") == round_name)),
                                        f"MLPerf Training {round_name}", "../", [round_name], validate=False))
    return pages
