"""Show a round's analysis in the Prefect UI: a markdown summary, a table, and the report and plots linked where the
reports are served over HTTP (`links`). Not served, nothing links a file (a browser refuses file:// from an http page):
the summary says where the report is and how to serve it, and the headline figure comes as an image artifact. Asked
for (`embed_plots`), the scaling and time plots of every benchmark come as image artifacts."""

from __future__ import annotations

import base64
from pathlib import Path

import polars as pl
from prefect.artifacts import create_image_artifact, create_link_artifact, create_markdown_artifact, create_table_artifact

from mlperf_scaling.contracts.enums import RulesCoverage
from mlperf_scaling.rounds import round_title
from mlperf_scaling.runtime.run_context import artifact_key
from mlperf_scaling.tasks.load.outcome import RoundOutcome
from mlperf_scaling.tasks.load.versions import RoundChange
from mlperf_scaling.tasks.publish.labels import NOTE, PLOT_KINDS, workload_label  # the report's order
from mlperf_scaling.tasks.publish.links import ReportLinks
from mlperf_scaling.tasks.score.rules import rules_for_round

_MEDIA_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}
EMBEDDED_KINDS = ("scaling", "time")


def data_uri(image: Path) -> str:
    # A local path renders as a broken image in the UI; a data: URI renders everywhere.
    return f"data:{_MEDIA_TYPES[image.suffix]};base64," + base64.b64encode(image.read_bytes()).decode("ascii")


def _image(paths: list[Path]) -> Path | None:
    return next((p for suffix in (".png", ".svg") for p in paths if p.suffix == suffix), None)  # PNG where drawn: any viewer


def _fmt(value, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return str(value)


def headline_benchmark(summary: pl.DataFrame, plots: dict[str, dict[str, list[Path]]]) -> str | None:
    """The benchmark with the most systems that has a scaling plot: the round's figure shown when nothing is linked."""
    for row in summary.sort("n_systems", "benchmark", descending=[True, False]).iter_rows(named=True):
        if _image(plots.get(row["benchmark"], {}).get("scaling", [])) is not None:
            return row["benchmark"]
    return None


def summary_markdown(round_name: str, summary: pl.DataFrame, plots: dict[str, dict[str, list[Path]]], report: Path | None,
                     recommendations: pl.DataFrame | None = None, embed_plots: bool = False, links: ReportLinks | None = None,
                     weak: pl.DataFrame | None = None) -> str:
    lines = [
        f"# {round_title(round_name)}: scaling summary",
        "",
        f"_{NOTE}_",
        "",
    ]
    scaled = (recommendations.filter(pl.col("n_distinct_accelerators") >= 2).sort("benchmark", "n_systems", descending=[False, True])
              if recommendations is not None else None)
    # lists, not tables: a table of system names and sentences is wider than the UI's pane (about 830 px) and scrolls
    if scaled is not None and scaled.height:
        lines += ["## How many accelerators?", ""]
        lines += [f"- **{workload_label(r['benchmark'], round_name)}** on {r['accelerator_group']}: {r['sentence']}"
                  for r in scaled.iter_rows(named=True)]
        lines.append("")
    if weak is not None and weak.height:  # MLPerf HPC: many models at once
        lines += ["## Weak scaling: many models at once", "", *(f"- {r['sentence']}" for r in weak.iter_rows(named=True)), ""]
    if (scaled is not None and scaled.height) or (weak is not None and weak.height):
        lines += ["## Per benchmark", ""]
    for row in summary.iter_rows(named=True):
        best = (
            f" Most efficient scale-out within its group: {row['best_scale_out_system']} ({row['best_scale_out_accelerators']} "
            f"{row['best_scale_out_group']}, efficiency {_fmt(row['best_scale_out_efficiency'])})."
            if row["best_scale_out_system"] else ""
        )
        lines.append(
            f"- **{workload_label(row['benchmark'], round_name)}**, {row['n_systems']} systems. The paper's reference: {row['paper_reference_system']} "
            f"({row['paper_reference_accelerators']}, {_fmt(row['paper_reference_time_min'])} min). Fastest: {row['fastest_system']} "
            f"({row['fastest_accelerators']}, {_fmt(row['fastest_time_min'], 3)} min).{best}"
        )
    if report is not None and links is not None and (url := links.to(report)) is not None:
        lines += ["", f"[The report, with every plot and table]({url})"]
    elif report is not None:
        lines += ["", f"The report, with every plot and table, is on the machine that ran the job: `{report.resolve()}`. To open it from "
                  "here, serve the reports there (`mlperf-scaling reports`, or `mlperf-scaling serve`) and set MLPERF_REPORTS_URL to "
                  "their address: then this links to it."]
    lines += _plots_section(round_name, summary, plots, embed_plots, links)
    return "\n".join(lines)


def _shown_images(round_name: str, summary: pl.DataFrame, plots: dict[str, dict[str, list[Path]]], embed_plots: bool,
                  links: ReportLinks | None) -> list[tuple[str, str, Path]]:
    """(benchmark, kind, file) of the plots sent as image artifacts: asked for, the scaling and time plots of every
    benchmark; with nothing linked, the headline figure; else none."""
    if embed_plots:
        return [(benchmark, kind, image) for benchmark, kinds in plots.items() for kind in EMBEDDED_KINDS
                if (image := _image(kinds.get(kind, []))) is not None]
    if links is None and (headline := headline_benchmark(summary, plots)) is not None:
        image = _image(plots[headline]["scaling"])
        assert image is not None
        return [(headline, "scaling", image)]
    return []


def _plots_section(round_name: str, summary: pl.DataFrame, plots: dict[str, dict[str, list[Path]]], embed_plots: bool,
                   links: ReportLinks | None) -> list[str]:
    # Never embedded here: a round's dozen images would make this one event megabytes long, which the server refuses
    # (and a run stalled on it once). Embedded, each is an image artifact of its own, well under that limit.
    lines = []
    if links is not None:
        rows = []
        for benchmark, kinds in plots.items():
            linked = [f"[{kind}]({url})" for kind in PLOT_KINDS if (image := _image(kinds.get(kind, []))) is not None
                      and (url := links.to(image)) is not None]
            if linked:
                rows.append(f"| {workload_label(benchmark, round_name)} | {' · '.join(linked)} |")
        if rows:
            lines += ["", "## Plots", "", "| workload | plots |", "|---|---|", *rows]
    shown = _shown_images(round_name, summary, plots, embed_plots, links)
    if shown:
        lines += ["", "## Plots as images" if links is not None else "## Plots", "", "Image artifacts of this run: " + ", ".join(
            f"`{artifact_key('plot', round_name, benchmark, kind)}`" for benchmark, kind, _ in shown) + "."]
    return lines


def publish_artifacts(
    round_name: str,
    summary: pl.DataFrame,
    efficiency: pl.DataFrame,
    plots: dict[str, dict[str, list[Path]]],
    report: Path | None,
    recommendations: pl.DataFrame | None = None,
    embed_plots: bool = False,
    links: ReportLinks | None = None,
    weak: pl.DataFrame | None = None,
) -> list[str]:
    """Create the round's artifacts (inside a flow or task run) and return their keys: the summary, the efficiency
    table, a link to the served report, and the plots `_shown_images` picks as images."""
    keys = []
    key = artifact_key("scaling-summary", round_name)
    create_markdown_artifact(markdown=summary_markdown(round_name, summary, plots, report, recommendations, embed_plots, links, weak), key=key,
                             description=f"{round_title(round_name)}: reference, fastest and most efficient systems per benchmark")
    keys.append(key)
    key = artifact_key("efficiency", round_name)
    columns = ["submitter", "system", "accelerator_group", "accelerators", "time_to_train_min",
               "efficiency", "throughput_part", "convergence_part", "paper_e_prime", "is_reference", "is_pareto"]
    rows = [{"workload": workload_label(row["benchmark"], round_name), **{c: row[c] for c in columns}}
            for row in efficiency.with_columns(pl.col(pl.Float64).round(4)).iter_rows(named=True)]
    create_table_artifact(table=rows, key=key, description=f"{round_title(round_name)}: efficiency table (derived, not official)")
    keys.append(key)
    if report is not None and links is not None and (url := links.to(report)) is not None:
        key = artifact_key("report", round_name)
        create_link_artifact(key=key, link=url, link_text=f"{round_title(round_name)}: report",
                             description=f"{round_title(round_name)}: the report with every plot and table")
        keys.append(key)
    for benchmark, kind, image in _shown_images(round_name, summary, plots, embed_plots, links):
        key = artifact_key("plot", round_name, benchmark, kind)
        create_image_artifact(image_url=data_uri(image), key=key, description=f"{round_name} {workload_label(benchmark, round_name)}: {kind}")
        keys.append(key)
    return keys


def rejections_markdown(round_name: str, rejections: pl.DataFrame, examples: int = 25) -> str:
    """Counts of rejected files and rows by stage and reason, with one example path each."""
    # Reasons quoting a file's own error are grouped by their general part, before the first parenthesis.
    general = pl.col("reason").str.split(" (").list.first()
    grouped = (
        rejections.group_by("stage", general.alias("reason"))
        .agg(pl.len().alias("n"), pl.col("path").min().alias("example"))
        .sort(["n", "stage", "reason"], descending=[True, False, False])
    )
    lines = [
        f"# {round_title(round_name)}: {rejections.height} rejections",
        "",
        "Files and rows that could not be used, by stage and reason, with an example each (a list: paths are wider than "
        "the UI's pane). The warehouse table `rejections` has every one.",
        "",
    ]
    for row in grouped.head(examples).iter_rows(named=True):
        lines.append(f"- **{row['stage']}**, {row['n']}: {row['reason']}. Example: `{row['example']}`")
    if grouped.height > examples:
        lines.append(f"- {grouped.height - examples} more kinds")
    return "\n".join(lines)


def watch_markdown(remote_base: str, changes: list[RoundChange], started: list[str], outcomes: list[RoundOutcome] | None = None) -> str:
    lines = [
        "# MLPerf release watch",
        "",
        f"Remote: `{remote_base}training_results_vX.Y`. {len(changes)} rounds found; pipeline started for "
        f"{', '.join(started) if started else 'none'}.",
        "",
        "| round | remote head | loaded commit | action | rules |",
        "|---|---|---|---|---|",
    ]
    notes = []
    for change in changes:
        rules = rules_for_round(change.round)
        lines.append(
            f"| {change.round} | `{change.head[:12]}` | {f'`{change.loaded_commit[:12]}`' if change.loaded_commit else '-'} "
            f"| {change.action} | {rules.ruleset} {rules.coverage.value} |"
        )
        if rules.coverage is RulesCoverage.NEWER:
            notes.append(f"- **{change.round}**: {rules.note}")
    if notes:
        lines += ["", "Rounds newer than the rules installed (never silent):", "", *notes]
    failed = [o for o in outcomes or [] if o.failed]
    if failed:
        lines += ["", f"**{len(failed)} of {len(outcomes or [])} rounds failed:**", ""]
        lines += [f"- **{o.round}**: {str(o.message or 'failed').replace('|', '/')}" for o in failed]
    return "\n".join(lines)
