"""The publishing flow of one round: plots, CSV tables and index.html under reports/<round>/, and Prefect artifacts."""

from __future__ import annotations

from prefect import flow

from mlperf_scaling.runtime.handoff import untraversed
from mlperf_scaling.runtime.naming import round_run_name
from mlperf_scaling.runtime.run_context import note_flow_run
from mlperf_scaling.tasks.metrics.steps import read_round_analysis
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS
from mlperf_scaling.tasks.publish.steps import PublishedRound, publish_round_outputs


@flow(name="publish-round", flow_run_name=round_run_name("publish"), on_running=[note_flow_run])
def publish_round(round_name: str, warehouse: str, reports: str = "reports", plot_formats: tuple[str, ...] = DEFAULT_FORMATS,
                  embed_plots: bool = False, reports_url: str | None = None) -> PublishedRound:
    """Plots, CSV tables and index.html under reports/<round>/, and the same in Prefect artifacts (the plots linked, or
    with `embed_plots` embedded as images; linked where the reports are served, at `reports_url`)."""
    analysis = read_round_analysis(warehouse, round_name)
    return publish_round_outputs(round_name, untraversed(analysis), reports, plot_formats, embed_plots, reports_url)
