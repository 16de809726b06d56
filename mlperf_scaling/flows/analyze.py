"""Analysis flows: a round's metrics into the warehouse, and the metrics across rounds."""

from __future__ import annotations

from prefect import flow, get_run_logger

from mlperf_scaling.runtime.handoff import untraversed
from mlperf_scaling.runtime.naming import round_run_name, started_run_name
from mlperf_scaling.runtime.run_context import note_flow_run
from mlperf_scaling.tasks.metrics.steps import RoundAnalysis, Trends, compute_round_analysis, compute_trends, write_round_analysis, write_trends
from mlperf_scaling.tasks.planning.steps import plan_models, plan_round
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS
from mlperf_scaling.tasks.publish.stamp import stamp_pages
from mlperf_scaling.tasks.publish.steps import publish_explorer, publish_site_index, publish_trends


@flow(name="analyze-round", flow_run_name=round_run_name("analyze"), on_running=[note_flow_run])
def analyze_round(round_name: str, warehouse: str, threshold: float = 0.5) -> RoundAnalysis:
    """Speedup, efficiency, clusters and scaling fits of a round's scores, written to the warehouse.

    `threshold`: the efficiency below which a fitted curve's knee is reported, besides 0.5.
    """
    return analyze_round_tasks(round_name, warehouse, threshold)


def analyze_round_tasks(round_name: str, warehouse: str, threshold: float = 0.5) -> RoundAnalysis:
    """The tasks of `analyze_round`, run in the calling flow: the main job runs them in its own flow run, where a
    subflow per round cost bookkeeping here and as much CPU again in Prefect's server, for no step of its own.
    Returns the analysis written, for publishing to take as it is."""
    analysis = plan_round(compute_round_analysis(warehouse, round_name, threshold), threshold)
    write_round_analysis(warehouse, untraversed(analysis))
    get_run_logger().info(
        "%s: %d systems analysed in %d benchmarks, %d score rows left out",
        round_name, analysis.efficiency.height, analysis.efficiency["benchmark"].n_unique(), analysis.exclusions.height,
    )
    return analysis


@flow(name="analyze-trends", flow_run_name=started_run_name("trends"), on_running=[note_flow_run])
def analyze_trends(warehouse: str, reports: str = "reports", plot_formats: tuple[str, ...] = DEFAULT_FORMATS,
                   publishing: list[str] | None = None, reports_url: str | None = None) -> Trends:
    """Across every round in the warehouse: carried-over results and time-to-train trends, with reports/trends/, the
    explorer pages (reports/explore.html and one per round with a report), and the front page reports/index.html.

    `publishing`: rounds whose reports are being written beside this flow (the main job runs it while its last rounds'
    plots are drawn). They get their explorer pages too, and the front page, which lists the reports written, is left
    to the caller. `reports_url`: where the reports are served, which the artifacts link."""
    trends = plan_models(compute_trends(warehouse))
    write_trends(warehouse, untraversed(trends))
    publish_explorer(warehouse, reports, publishing, reports_url)  # first: made here, while the drawing workers may be busy
    page = publish_trends(untraversed(trends), reports, plot_formats)
    if publishing is None:
        publish_site_index(warehouse, reports, reports_url)
        stamp_pages(reports, warehouse)  # every page across rounds made from the rounds loaded now
    get_run_logger().info("trends: %d series points, %d carried-over results; %s", trends.round_trends.height,
                          int(trends.carried_over["is_carried_over"].sum()), page)
    return trends
