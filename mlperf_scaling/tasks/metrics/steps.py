"""The metrics stage as Prefect tasks: a round's scores into efficiency, clusters and fits, and the cross-round
tables, each read from and written to the warehouse. Each is a plain function underneath (`.fn`). The planning stage
(tasks/planning/steps.py) adds the plans and their backtests to what these compute, before it is written."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl
from prefect import task
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.contracts.clusters import AnalysisExclusionsSchema, ClustersSchema
from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.efficiency import EfficiencySchema
from mlperf_scaling.contracts.explanations import ExplanationsSchema
from mlperf_scaling.contracts.paper_claims import PaperClaimsSchema
from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema
from mlperf_scaling.contracts.production_backtest import ProductionBacktestSchema
from mlperf_scaling.contracts.recommendations import RecommendationsSchema
from mlperf_scaling.contracts.result_context import ResultContextSchema
from mlperf_scaling.contracts.scale_backtest import ScaleBacktestSchema
from mlperf_scaling.contracts.scaling_fits import ScalingFitsSchema
from mlperf_scaling.contracts.software_gains import SoftwareGainsSchema
from mlperf_scaling.contracts.transfer_backtest import TransferBacktestSchema
from mlperf_scaling.contracts.trends import CarriedOverSchema, RoundTrendsSchema
from mlperf_scaling.contracts.weak_scaling import WeakScalingSchema
from mlperf_scaling.contracts.workload_ranking import WorkloadRankingSchema
from mlperf_scaling.rounds import HPC_ROUND_PREFIX
from mlperf_scaling.runtime.dispatch import map_on_cores
from mlperf_scaling.runtime.pools import PARSE
from mlperf_scaling.runtime.run_context import round_task_run_name
from mlperf_scaling.tasks.metrics.claims import claims_table, workload_ranking
from mlperf_scaling.tasks.metrics.clusters import cluster_table
from mlperf_scaling.tasks.metrics.context import result_context
from mlperf_scaling.tasks.metrics.efficiency import by_workload, efficiency_table
from mlperf_scaling.tasks.metrics.explain import explain_workload, explanation_table, workload_results
from mlperf_scaling.tasks.metrics.fits import FIT_SCHEMA, fit_table
from mlperf_scaling.tasks.metrics.software_gains import software_gains
from mlperf_scaling.tasks.metrics.trends import carried_over_groups, trend_table
from mlperf_scaling.tasks.metrics.weak_scaling import weak_scaling_table
from mlperf_scaling.warehouse.connection import open_writer
from mlperf_scaling.warehouse.load import replace_round_analysis, replace_trends
from mlperf_scaling.warehouse.read import read_queries


@dataclass
class RoundAnalysis:
    round: str
    efficiency: pl.DataFrame
    clusters: pl.DataFrame
    exclusions: pl.DataFrame
    fits: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=FIT_SCHEMA))
    recommendations: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(RecommendationsSchema)))
    source: dict | None = None
    backtest: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(PlanBacktestSchema)))
    context: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(ResultContextSchema)))
    weak: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(WeakScalingSchema)))  # MLPerf HPC only

    def frames(self) -> dict[str, pl.DataFrame]:
        return {"efficiency": self.efficiency, "clusters": self.clusters, "analysis_exclusions": self.exclusions,
                "scaling_fits": self.fits, "recommendations": self.recommendations, "plan_backtest": self.backtest,
                "result_context": self.context, "weak_scaling": self.weak}


@task(name="compute-metrics", task_run_name=round_task_run_name("compute-metrics"), cache_policy=NO_CACHE)
def compute_round_analysis(warehouse: str, round_name: str, threshold: float = 0.5) -> RoundAnalysis:
    """Efficiency, clusters, scaling fits, recommendations and exclusions of one round, from its `scores` rows, with the
    source it was loaded from: everything its publishing needs, handed on rather than read back."""
    scores, sources, systems, energy, weak = read_queries(warehouse, "round_scores", "round_sources", "round_systems", "round_energy",
                                                          "round_weak_scores", round=round_name)
    if scores.height == 0 and weak.height == 0:
        raise ValueError(f"no scores for {round_name} in {warehouse}: ingest the round first")
    scores, energy = by_workload(scores), by_workload(energy)  # one benchmark per workload and round
    efficiency, exclusions = efficiency_table(scores)
    clusters = cluster_table(efficiency)
    return RoundAnalysis(
        round_name,
        EfficiencySchema.validate(efficiency, lazy=True),
        ClustersSchema.validate(clusters, lazy=True),
        AnalysisExclusionsSchema.validate(exclusions, lazy=True),
        ScalingFitsSchema.validate(fit_table(efficiency, threshold), lazy=True),
        source=sources.to_dicts()[0] if sources.height else None,
        context=ResultContextSchema.validate(result_context(scores, systems, energy, efficiency), lazy=True),
        weak=WeakScalingSchema.validate(weak_scaling_table(weak, efficiency, systems), lazy=True),
    )


@task(name="write-metrics", cache_policy=NO_CACHE)
def write_round_analysis(warehouse: str, analysis: RoundAnalysis) -> None:
    with open_writer(warehouse) as connection:
        replace_round_analysis(connection, analysis.round, analysis.frames())


@task(name="read-metrics", task_run_name=round_task_run_name("read-metrics"), cache_policy=NO_CACHE)
def read_round_analysis(warehouse: str, round_name: str) -> RoundAnalysis:
    efficiency, clusters, exclusions, fits, recommendations, sources, backtest, context, weak = read_queries(
        warehouse, "round_efficiency", "round_clusters", "round_exclusions", "round_fits", "round_recommendations",
        "round_sources", "round_backtest", "round_context", "round_weak_scaling", round=round_name,
    )
    source = sources.to_dicts()[0] if sources.height else None
    return RoundAnalysis(round_name, efficiency, clusters, exclusions, fits, recommendations, source, backtest, context, weak)


@dataclass
class Trends:
    """The tables across every round, validated."""

    carried_over: pl.DataFrame
    round_trends: pl.DataFrame
    software_gains: pl.DataFrame
    explanations: pl.DataFrame
    claims: pl.DataFrame
    ranking: pl.DataFrame
    context: pl.DataFrame  # every round's result_context, read for the pages; not a trend table
    # the model planner's backtests, added by the planning stage (tasks/planning/steps.py)
    transfer: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(TransferBacktestSchema)))
    production: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(ProductionBacktestSchema)))
    scale: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=frame_schema(ScaleBacktestSchema)))

    def tables(self) -> dict[str, pl.DataFrame]:
        return {"carried_over": self.carried_over, "round_trends": self.round_trends, "software_gains": self.software_gains,
                "explanations": self.explanations, "paper_claims": self.claims, "workload_ranking": self.ranking,
                "transfer_backtest": self.transfer, "production_backtest": self.production, "scale_backtest": self.scale}


@task(name="compute-trends", cache_policy=NO_CACHE)
def compute_trends(warehouse: str) -> Trends:
    """Carried-over results and time-to-train trends across every round in the warehouse."""
    scores, runs, efficiency, context, exclusions, fits = read_queries(
        warehouse, "all_scores", "all_run_identities", "all_efficiency", "all_context", "all_exclusions", "all_fits")
    return Trends(
        CarriedOverSchema.validate(carried_over_groups(runs), lazy=True),
        RoundTrendsSchema.validate(trend_table(scores, runs), lazy=True),
        SoftwareGainsSchema.validate(software_gains(efficiency), lazy=True),
        # the models of the workloads are independent: fitted on every core
        ExplanationsSchema.validate(explanation_table(context, map_on_cores(explain_workload, workload_results(context), PARSE)), lazy=True),
        # the papers speak of MLPerf Training: their claims are tested on its rounds only
        PaperClaimsSchema.validate(claims_table(*(training_only(frame) for frame in (efficiency, context, exclusions, scores))), lazy=True),
        WorkloadRankingSchema.validate(workload_ranking(fits), lazy=True),
        context,
    )


def training_only(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows of MLPerf Training rounds (an HPC round is named hpc-vX.Y)."""
    return frame.filter(~pl.col("round").str.starts_with(HPC_ROUND_PREFIX)) if "round" in frame.columns else frame


@task(name="write-trends", cache_policy=NO_CACHE)
def write_trends(warehouse: str, trends: Trends) -> None:
    with open_writer(warehouse) as connection:
        replace_trends(connection, trends.tables())
