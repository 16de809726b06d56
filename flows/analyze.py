"""Analysis and publishing flows for one round: metrics into the warehouse, then plots, report and artifacts."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from tasks.analysis_steps import (
    compute_round_analysis,
    compute_trends,
    write_trends,
    draw_round_plots,
    publish_round_artifacts,
    read_round_analysis,
    write_round_analysis,
    write_round_report,
)


def _run_name(prefix: str):
    def name() -> str:
        # Flow-run names carry the round (analyze-v4-1); dots are not used in Prefect names here.
        return f"{prefix}-{str(flow_run.parameters.get('round_name', 'round')).replace('.', '-')}"

    return name


@flow(name="analyze-round", flow_run_name=_run_name("analyze"))
def analyze_round(round_name: str, warehouse: str, threshold: float = 0.5) -> dict:
    """Speedup, efficiency, clusters and scaling fits of a round's scores, written to the warehouse.

    `threshold`: the efficiency below which a fitted curve's knee is reported, besides 0.5.
    """
    analysis = compute_round_analysis(warehouse, round_name, threshold)
    write_round_analysis(warehouse, analysis)
    get_run_logger().info(
        "%s: %d systems analysed in %d benchmarks, %d score rows left out",
        round_name, analysis.efficiency.height, analysis.efficiency["benchmark"].n_unique(), analysis.exclusions.height,
    )
    return {"round": round_name, "n_systems": analysis.efficiency.height, "n_excluded": analysis.exclusions.height}


@flow(name="publish-round", flow_run_name=_run_name("publish"))
def publish_round(round_name: str, warehouse: str, reports: str = "reports") -> dict:
    """Plots, CSV tables and index.html under reports/<round>/, and the same in Prefect artifacts."""
    analysis = read_round_analysis(warehouse, round_name)
    plots = draw_round_plots(analysis, reports)
    report = write_round_report(analysis, plots, reports)
    keys = publish_round_artifacts(analysis, plots, report)
    get_run_logger().info("%s: report %s, %d artifacts", round_name, report, len(keys))
    return {"round": round_name, "report": str(report), "artifacts": keys}


@flow(name="analyze-trends")
def analyze_trends(warehouse: str, reports: str = "reports") -> dict:
    """Across every round in the warehouse: carried-over results and time-to-train trends, with reports/trends/."""
    frames = compute_trends(warehouse)
    page = write_trends(warehouse, frames, reports)
    get_run_logger().info("trends: %d series points, %d carried-over results; %s", frames["round_trends"].height,
                          int(frames["carried_over"]["is_carried_over"].sum()), page)
    return {"report": str(page), "n_points": frames["round_trends"].height}
