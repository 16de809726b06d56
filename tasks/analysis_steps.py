"""The analysis and publishing steps as Prefect tasks; each is a plain function underneath (`.fn`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from schemas.clusters import AnalysisExclusionsSchema, ClustersSchema
from schemas.efficiency import EfficiencySchema
from schemas.scaling_fits import ScalingFitsSchema
from tasks.artifacts import publish_artifacts
from tasks.clusters import cluster_table
from tasks.fits import FIT_SCHEMA, fit_table
from tasks.metrics import efficiency_table, summarize_benchmarks
from tasks.plots import plot_benchmark
from tasks.publish import render_index, render_trends, write_index, write_tables
from tasks.trends import carried_over_groups, plot_trends, trend_table
from warehouse.connection import connect, open_writer, writer_lock
from warehouse.load import replace_round_analysis, replace_trends
from warehouse.read import read_query


@dataclass
class RoundAnalysis:
    round: str
    efficiency: pl.DataFrame
    clusters: pl.DataFrame
    exclusions: pl.DataFrame
    fits: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=FIT_SCHEMA))
    source: dict | None = None

    def frames(self) -> dict[str, pl.DataFrame]:
        return {"efficiency": self.efficiency, "clusters": self.clusters, "analysis_exclusions": self.exclusions,
                "scaling_fits": self.fits}


def _read(warehouse: str, round_name: str, *queries: str) -> list[pl.DataFrame]:
    # Under the writer lock, so a read never meets a load half-way; read-only all the same.
    with writer_lock(warehouse):
        connection = connect(warehouse, read_only=True)
        try:
            return [read_query(connection, name, round=round_name) for name in queries]
        finally:
            connection.close()


@task(name="compute-metrics", cache_policy=NO_CACHE)
def compute_round_analysis(warehouse: str, round_name: str, threshold: float = 0.5) -> RoundAnalysis:
    """Efficiency, clusters, scaling fits and exclusions of one round, from its `scores` rows."""
    (scores,) = _read(warehouse, round_name, "round_scores")
    if scores.height == 0:
        raise ValueError(f"no scores for {round_name} in {warehouse}: ingest the round first")
    efficiency, exclusions = efficiency_table(scores)
    clusters = cluster_table(efficiency)
    return RoundAnalysis(
        round_name,
        EfficiencySchema.validate(efficiency, lazy=True),
        ClustersSchema.validate(clusters, lazy=True),
        AnalysisExclusionsSchema.validate(exclusions, lazy=True),
        ScalingFitsSchema.validate(fit_table(efficiency, threshold), lazy=True),
    )


@task(name="write-metrics", cache_policy=NO_CACHE)
def write_round_analysis(warehouse: str, analysis: RoundAnalysis) -> None:
    with open_writer(warehouse) as connection:
        replace_round_analysis(connection, analysis.round, analysis.frames())


@task(name="read-metrics", cache_policy=NO_CACHE)
def read_round_analysis(warehouse: str, round_name: str) -> RoundAnalysis:
    efficiency, clusters, exclusions, fits, sources = _read(
        warehouse, round_name, "round_efficiency", "round_clusters", "round_exclusions", "round_fits", "round_sources"
    )
    source = sources.to_dicts()[0] if sources.height else None
    return RoundAnalysis(round_name, efficiency, clusters, exclusions, fits, source)


@task(name="draw-plots", cache_policy=NO_CACHE)
def draw_round_plots(analysis: RoundAnalysis, reports: str) -> dict[str, dict[str, list[Path]]]:
    folder = Path(reports) / analysis.round / "plots"
    plots = {}
    for benchmark in sorted(analysis.efficiency["benchmark"].unique().to_list()):
        group = analysis.efficiency.filter(pl.col("benchmark") == benchmark)
        plots[benchmark] = plot_benchmark(group, analysis.clusters.filter(pl.col("benchmark") == benchmark), folder,
                                          analysis.fits.filter(pl.col("benchmark") == benchmark))
    return plots


@task(name="write-report", cache_policy=NO_CACHE)
def write_round_report(analysis: RoundAnalysis, plots: dict[str, dict[str, list[Path]]], reports: str) -> Path:
    folder = Path(reports) / analysis.round
    summary = summarize_benchmarks(analysis.efficiency)
    write_tables(folder, {"efficiency": analysis.efficiency, "clusters": analysis.clusters,
                          "exclusions": analysis.exclusions, "scaling_fits": analysis.fits, "summary": summary})
    page = render_index(analysis.round, summary, analysis.efficiency, analysis.clusters, analysis.exclusions, plots,
                        analysis.source, analysis.fits)
    return write_index(folder, page)


@task(name="publish-artifacts", cache_policy=NO_CACHE)
def publish_round_artifacts(analysis: RoundAnalysis, plots: dict[str, dict[str, list[Path]]], report: Path) -> list[str]:
    return publish_artifacts(analysis.round, summarize_benchmarks(analysis.efficiency), analysis.efficiency, plots, report)


@task(name="compute-trends", cache_policy=NO_CACHE)
def compute_trends(warehouse: str) -> dict[str, pl.DataFrame]:
    """Carried-over results and time-to-train trends across every round in the warehouse."""
    with writer_lock(warehouse):
        connection = connect(warehouse, read_only=True)
        try:
            scores = read_query(connection, "all_scores")
            runs = read_query(connection, "all_run_identities")
        finally:
            connection.close()
    return {"carried_over": carried_over_groups(runs), "round_trends": trend_table(scores, runs)}


@task(name="write-trends", cache_policy=NO_CACHE)
def write_trends(warehouse: str, frames: dict[str, pl.DataFrame], reports: str) -> Path:
    with open_writer(warehouse) as connection:
        replace_trends(connection, frames)
    folder = Path(reports) / "trends"
    plots = plot_trends(frames["round_trends"], folder / "plots")
    write_tables(folder, frames)
    return write_index(folder, render_trends(frames["round_trends"], frames["carried_over"], plots))
