"""The contract of every warehouse table, as pandera models: the one definition of its columns in Python."""

from __future__ import annotations

from mlperf_scaling.contracts.clusters import AnalysisExclusionsSchema, ClustersSchema
from mlperf_scaling.contracts.common import Contract
from mlperf_scaling.contracts.efficiency import EfficiencySchema
from mlperf_scaling.contracts.energy import EnergySchema
from mlperf_scaling.contracts.explanations import ExplanationsSchema
from mlperf_scaling.contracts.ingestions import IngestionsSchema
from mlperf_scaling.contracts.paper_claims import PaperClaimsSchema
from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema
from mlperf_scaling.contracts.production_backtest import ProductionBacktestSchema
from mlperf_scaling.contracts.recommendations import RecommendationsSchema
from mlperf_scaling.contracts.rejections import RejectionsSchema
from mlperf_scaling.contracts.result_context import ResultContextSchema
from mlperf_scaling.contracts.runs import RunsSchema
from mlperf_scaling.contracts.scale_backtest import ScaleBacktestSchema
from mlperf_scaling.contracts.scaling_fits import ScalingFitsSchema
from mlperf_scaling.contracts.score_changes import ScoreChangesSchema
from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.contracts.software_gains import SoftwareGainsSchema
from mlperf_scaling.contracts.systems import SystemsSchema
from mlperf_scaling.contracts.transfer_backtest import TransferBacktestSchema
from mlperf_scaling.contracts.trends import CarriedOverSchema, RoundTrendsSchema
from mlperf_scaling.contracts.weak_scaling import WeakScalingSchema
from mlperf_scaling.contracts.workload_ranking import WorkloadRankingSchema

# table -> contract; every table the pipeline loads is here
TABLE_CONTRACTS: dict[str, type[Contract]] = {
    "ingestions": IngestionsSchema,
    "systems": SystemsSchema,
    "runs": RunsSchema,
    "scores": ScoresSchema,
    "energy": EnergySchema,
    "rejections": RejectionsSchema,
    "efficiency": EfficiencySchema,
    "clusters": ClustersSchema,
    "analysis_exclusions": AnalysisExclusionsSchema,
    "scaling_fits": ScalingFitsSchema,
    "recommendations": RecommendationsSchema,
    "plan_backtest": PlanBacktestSchema,
    "result_context": ResultContextSchema,
    "weak_scaling": WeakScalingSchema,
    "carried_over": CarriedOverSchema,
    "round_trends": RoundTrendsSchema,
    "software_gains": SoftwareGainsSchema,
    "explanations": ExplanationsSchema,
    "paper_claims": PaperClaimsSchema,
    "workload_ranking": WorkloadRankingSchema,
    "transfer_backtest": TransferBacktestSchema,
    "scale_backtest": ScaleBacktestSchema,
    "production_backtest": ProductionBacktestSchema,
    "score_changes": ScoreChangesSchema,
}
