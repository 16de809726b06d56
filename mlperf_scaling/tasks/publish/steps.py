"""The publish stage as Prefect tasks: plots, the round's report and CSV tables, the cross-round report, and the
Prefect artifacts. Each is a plain function underneath (`.fn`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl
from prefect import task
from prefect.artifacts import create_link_artifact, create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.failures import names_faults
from mlperf_scaling.rounds import sorted_rounds
from mlperf_scaling.runtime.dispatch import map_on_cores
from mlperf_scaling.runtime.pools import DRAW
from mlperf_scaling.runtime.run_context import artifact_key, round_task_run_name, run_logger
from mlperf_scaling.tasks.metrics.efficiency import summarize_benchmarks
from mlperf_scaling.tasks.metrics.steps import RoundAnalysis, Trends
from mlperf_scaling.tasks.planning.calibration import load_calibration
from mlperf_scaling.tasks.publish.artifacts import publish_artifacts, rejections_markdown
from mlperf_scaling.tasks.publish.drawn import DrawnPlots, plot_fingerprint
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS
from mlperf_scaling.tasks.publish.links import ReportLinks
from mlperf_scaling.tasks.publish.report import missing_links, render_index, render_site_index, render_trends, write_index
from mlperf_scaling.tasks.publish.tables import write_tables
from mlperf_scaling.tasks.publish.why import write_why_pages
from mlperf_scaling.tasks.score.rules import rounds_of_installed_rules
from mlperf_scaling.warehouse.read import read_queries


@dataclass(frozen=True)
class PublishedRound:
    round: str
    report: str  # reports/<round>/index.html
    artifacts: list[str]  # the Prefect artifacts' keys


@task(name="publish-round", task_run_name=round_task_run_name("publish"), cache_policy=NO_CACHE)
@names_faults("the reports", "reports", "--reports (MLPERF_REPORTS)")
def publish_round_outputs(round_name: str, analysis: RoundAnalysis, reports: str, formats: tuple[str, ...] = DEFAULT_FORMATS,
                          embed_plots: bool = False, reports_url: str | None = None) -> PublishedRound:
    """A round's plots, CSV tables, index.html and Prefect artifacts, from its analysis (handed over: this task may
    run beside the next round's load, and never opens the warehouse). `embed_plots`: the scaling and time plots as
    image artifacts too; `reports_url`: where the reports are served, which the artifacts link."""
    plots = draw_round_plots(analysis, reports, formats)
    report = write_round_report(analysis, plots, reports)
    keys = publish_round_artifacts(analysis, plots, report, embed_plots, ReportLinks.served(reports_url, reports))
    run_logger().info("%s: report %s, %d artifacts", round_name, report, len(keys))
    return PublishedRound(round_name, str(report), keys)


def draw_round_plots(analysis: RoundAnalysis, reports: str, formats: tuple[str, ...] = DEFAULT_FORMATS) -> dict[str, dict[str, list[Path]]]:
    """Each benchmark's plots, drawn on every core; a benchmark whose inputs and plotting code are unchanged since
    its plots were drawn (a stored content hash) is not drawn again."""
    from mlperf_scaling.tasks.publish.plots import plot_benchmark  # matplotlib: imported where drawn, not by every command

    # absolute: the pages and the record of drawn plots name it the same from any folder (on Dask the figures come back
    # as bytes and are written here: mlperf_scaling.runtime.files_back)
    folder = (Path(reports) / analysis.round / "plots").resolve()
    drawn = DrawnPlots(folder)
    plots: dict[str, dict[str, list[Path]]] = {}
    todo = []
    # the intervals' level comes from the whole round's backtest: part of every benchmark's fingerprint
    calibration = load_calibration().with_backtest(analysis.backtest)
    for benchmark in sorted(analysis.efficiency["benchmark"].unique().to_list()):
        inputs = (analysis.efficiency.filter(pl.col("benchmark") == benchmark), analysis.clusters.filter(pl.col("benchmark") == benchmark),
                  folder, analysis.recommendations.filter(pl.col("benchmark") == benchmark), formats, calibration)
        fingerprint = plot_fingerprint(formats, inputs[0], inputs[1], inputs[3], analysis.backtest)
        kept = drawn.unchanged(benchmark, fingerprint)
        if kept is not None:
            plots[benchmark] = kept
        else:
            todo.append((benchmark, fingerprint, inputs))
    for (benchmark, fingerprint, _), paths in zip(todo, map_on_cores(plot_benchmark, [inputs for _, _, inputs in todo], DRAW, writes_into=2), strict=True):
        plots[benchmark] = paths
        drawn.record(benchmark, fingerprint, paths)
    drawn.save()
    run_logger().info("%s: plots of %d benchmarks drawn, %d unchanged", analysis.round, len(todo), len(plots) - len(todo))
    return dict(sorted(plots.items()))


def draw_why_plots(context: pl.DataFrame, folder: Path, formats: tuple[str, ...]) -> dict[str, dict[str, list[Path]]]:
    """Each workload's accelerator-minutes by scale-up fabric, and its power where measured, drawn on every core,
    unless unchanged since last drawn: workload -> {"why": files, "power": files}."""
    from mlperf_scaling.tasks.publish.trend_plots import plot_power, plot_why

    drawn = DrawnPlots(folder)
    plots: dict[str, dict[str, list[Path]]] = {}
    todo = []
    for workload in sorted(context["benchmark_canonical"].unique().to_list()):
        results = context.filter(pl.col("benchmark_canonical") == workload)
        fingerprint = plot_fingerprint(formats, results)
        kept = drawn.unchanged(workload, fingerprint)
        if kept is not None:
            plots[workload] = kept
            continue
        todo.append((workload, fingerprint, "why", plot_why, (workload, results, folder, formats)))
        if results["w_per_accelerator"].is_not_null().any():
            todo.append((workload, fingerprint, "power", plot_power, (workload, results, folder, formats)))
    drawn_now = [map_on_cores(function, [inputs for _, _, k, f, inputs in todo if f is function], DRAW, writes_into=2) for function in (plot_why, plot_power)]
    by_function = {plot_why: iter(drawn_now[0]), plot_power: iter(drawn_now[1])}
    for workload, fingerprint, kind, function, _ in todo:
        plots.setdefault(workload, {})[kind] = next(by_function[function])
        drawn.record(workload, fingerprint, plots[workload])
    drawn.save()
    return plots


def write_round_report(analysis: RoundAnalysis, plots: dict[str, dict[str, list[Path]]], reports: str) -> Path:
    folder = Path(reports) / analysis.round
    summary = summarize_benchmarks(analysis.efficiency)
    tables = {"recommendations": analysis.recommendations, "efficiency": analysis.efficiency, "clusters": analysis.clusters,
              "exclusions": analysis.exclusions, "scaling_fits": analysis.fits, "summary": summary, "plan_backtest": analysis.backtest}
    if analysis.weak.height:  # MLPerf HPC weak scaling; a Training round has none, and its folder keeps its files
        tables["weak_scaling"] = analysis.weak
    write_tables(folder, tables)
    page = render_index(analysis.round, summary, analysis.efficiency, analysis.clusters, analysis.exclusions, plots,
                        analysis.source, analysis.fits, analysis.recommendations, analysis.backtest, analysis.weak)
    return write_index(folder, page)


def publish_round_artifacts(analysis: RoundAnalysis, plots: dict[str, dict[str, list[Path]]], report: Path, embed_plots: bool = False,
                            links: ReportLinks | None = None) -> list[str]:
    return publish_artifacts(analysis.round, summarize_benchmarks(analysis.efficiency), analysis.efficiency, plots, report,
                             analysis.recommendations, embed_plots, links, analysis.weak)


@task(name="publish-trends", cache_policy=NO_CACHE)
@names_faults("the reports", "reports", "--reports (MLPERF_REPORTS)")
def publish_trends(trends: Trends, reports: str, formats: tuple[str, ...] = DEFAULT_FORMATS) -> Path:
    """reports/trends/: a plot per workload, the CSV tables and index.html; reports/why/: why results scale differently."""
    from mlperf_scaling.tasks.publish.trend_plots import plot_trends

    folder = Path(reports) / "trends"
    # every round published between the first and the last, so a round this warehouse lacks shows as a gap
    seen = trends.round_trends["round"].unique().to_list()
    plots = plot_trends(trends.round_trends, (folder / "plots").resolve(), sorted_rounds({*seen, *rounds_of_installed_rules()}), formats)
    write_tables(folder, trends.tables())
    why = Path(reports) / "why"
    write_tables(why, {"explanations": trends.explanations, "paper_claims": trends.claims, "workload_ranking": trends.ranking})
    results = trends.context.filter(pl.col("accelerators") > 0)
    write_why_pages(why, trends.explanations, trends.claims, trends.ranking, results, draw_why_plots(results, (why / "plots").resolve(), formats),
                    frozenset(trends.round_trends["benchmark_canonical"].unique().to_list()))
    return write_index(folder, render_trends(trends.round_trends, trends.carried_over, plots, trends.software_gains))


@task(name="publish-index", cache_policy=NO_CACHE)
@names_faults("the reports", "reports", "--reports (MLPERF_REPORTS)")
def publish_site_index(warehouse: str, reports: str, reports_url: str | None = None) -> Path:
    """reports/index.html and best_recommendations.csv: every round, the trends page, the answer per group from the
    round that measured it best; where the reports are served, a link artifact to it, the page to open first."""
    rounds, best, backtest, weak = read_queries(warehouse, "round_overview", "best_recommendations", "all_backtest", "best_weak_scaling")
    folder = Path(reports)
    published = {r for r in rounds["round"].to_list() if (folder / r / "index.html").is_file()}
    write_tables(folder, {"best_recommendations": best})
    page = write_index(folder, render_site_index(rounds, best, published, backtest, weak))
    if (links := ReportLinks.served(reports_url, reports)) is not None and (url := links.to(page)) is not None:
        create_link_artifact(key="reports", link=url, link_text="MLPerf Training and HPC: every report (the answer per workload first)",
                             description="The front page: the answer per workload, and a link to every round's report, the trends and the explorer")
    return page


@task(name="check-reports", cache_policy=NO_CACHE)
def check_reports(reports: str, rounds: list[str]) -> dict[str, list[str]]:
    """Per round (and "" for every page across rounds: the front page, trends, why, the explorer), the files and
    anchors its pages link to that are not there."""
    folder = Path(reports)
    pages = {round_name: [folder / round_name / "index.html", folder / round_name / "explore.html"] for round_name in rounds}
    pages[""] = [folder / "index.html", folder / "trends" / "index.html", folder / "explore.html", *sorted((folder / "why").glob("*.html"))]
    found = {}
    for round_name, round_pages in pages.items():
        missing = [f"{page.relative_to(folder)}: {link}" for page in round_pages if page.is_file() for link in missing_links(page)]
        if missing:
            found[round_name] = missing
    return found


def write_explorer_pages(warehouse: str, reports: str, publishing: list[str] | None = None) -> list[Path]:
    """reports/explore.html (every round), reports/<round>/explore.html (for each round with a report, or in
    `publishing`: its report being written), explore.json and the Vega bundle, from the warehouse alone."""
    from mlperf_scaling.tasks.publish.explorer import write_explorers

    points, fitted = read_queries(warehouse, "explorer_points", "explorer_fits", round=None)
    (backtest,) = read_queries(warehouse, "all_backtest")
    return write_explorers(Path(reports), points, fitted, publishing or [], backtest)


@task(name="publish-explorer", cache_policy=NO_CACHE)
@names_faults("the reports", "reports", "--reports (MLPERF_REPORTS)")
def publish_explorer(warehouse: str, reports: str, publishing: list[str] | None = None, reports_url: str | None = None) -> list[str]:
    """The interactive explorer pages, and where the reports are served a link artifact to the one over every round."""
    pages = write_explorer_pages(warehouse, reports, publishing)
    if pages and (links := ReportLinks.served(reports_url, reports)) is not None and (url := links.to(pages[0])) is not None:
        create_link_artifact(key="explorer", link=url, link_text="MLPerf Training explorer (every round)",
                             description="Time to train against accelerators per workload, round and group: hover, filter, fits")
    run_logger().info("explorer: %d pages, %s", len(pages), pages[0] if pages else "nothing loaded")
    return [str(page) for page in pages]


@task(name="publish-rejections", cache_policy=NO_CACHE)
def publish_rejections(round_name: str, rejections: pl.DataFrame) -> str:
    key = artifact_key("rejections", round_name)
    create_markdown_artifact(markdown=rejections_markdown(round_name, rejections), key=key,
                             description=f"MLPerf Training {round_name}: rejected files and rows by reason")
    return key
