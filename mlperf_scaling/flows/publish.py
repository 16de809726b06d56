"""The publishing flow of one round: plots, CSV tables and index.html under reports/<round>/, and Prefect artifacts."""

from __future__ import annotations

from prefect import flow, get_run_logger

from mlperf_scaling.flows.handoff import opaque
from mlperf_scaling.flows.naming import round_run_name
from mlperf_scaling.tasks.metrics.steps import read_round_analysis
from mlperf_scaling.tasks.publish.steps import draw_round_plots, publish_round_artifacts, write_round_report


@flow(name="publish-round", flow_run_name=round_run_name("publish"))
def publish_round(round_name: str, warehouse: str, reports: str = "reports", plot_formats: tuple[str, ...] = ("png",)) -> dict:
    """Plots, CSV tables and index.html under reports/<round>/, and the same in Prefect artifacts."""
    analysis = read_round_analysis(warehouse, round_name)
    plots = draw_round_plots(opaque(analysis), reports, plot_formats)
    report = write_round_report(opaque(analysis), plots, reports)
    keys = publish_round_artifacts(opaque(analysis), plots, report)
    get_run_logger().info("%s: report %s, %d artifacts", round_name, report, len(keys))
    return {"round": round_name, "report": str(report), "artifacts": keys}
