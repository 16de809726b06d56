"""The planning stage as Prefect tasks: what the metrics stage computed, with the plans and their backtests added
before it is written. A round gets its recommendations and the backtest of its benchmark plans; the rounds together
get the model planner's backtests. Each is a plain function underneath (`.fn`)."""

from __future__ import annotations

from dataclasses import replace

from prefect import task
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema
from mlperf_scaling.contracts.production_backtest import ProductionBacktestSchema
from mlperf_scaling.contracts.recommendations import RecommendationsSchema
from mlperf_scaling.contracts.scale_backtest import ScaleBacktestSchema
from mlperf_scaling.contracts.transfer_backtest import TransferBacktestSchema
from mlperf_scaling.runtime.dispatch import map_on_cores
from mlperf_scaling.runtime.pools import PARSE
from mlperf_scaling.runtime.run_context import round_task_run_name
from mlperf_scaling.tasks.metrics.steps import RoundAnalysis, Trends
from mlperf_scaling.tasks.planning.evidence import language_model_evidence
from mlperf_scaling.tasks.planning.pace_backtest import ACCELERATOR, BENCHMARK, backtest_part, transfer_backtest
from mlperf_scaling.tasks.planning.predict import backtest_table
from mlperf_scaling.tasks.planning.production import production_backtest, production_cases, production_learnt
from mlperf_scaling.tasks.planning.recommend import recommendation_table
from mlperf_scaling.tasks.planning.scale_backtest import scale_backtest


@task(name="plan-round", task_run_name=round_task_run_name("plan-round"), cache_policy=NO_CACHE)
def plan_round(analysis: RoundAnalysis, threshold: float = 0.5) -> RoundAnalysis:
    """A round's analysis with its recommendations and the leave-one-count-out backtest of its benchmark plans."""
    backtest = backtest_table(analysis.efficiency)
    return replace(analysis,
                   recommendations=RecommendationsSchema.validate(recommendation_table(analysis.efficiency, backtest, threshold), lazy=True),
                   backtest=PlanBacktestSchema.validate(backtest, lazy=True))


@task(name="plan-models", cache_policy=NO_CACHE)
def plan_models(trends: Trends) -> Trends:
    """The tables across rounds with the model planner's backtests: at counts never seen, across benchmarks and
    accelerators, and on public production runs at their own counts."""
    evidence = language_model_evidence(trends.context)
    scale = scale_backtest(evidence)  # first: a count beyond the evidence widens the others' intervals by what it learns
    # the two ways of leaving out are independent: one on each core
    transfer = transfer_backtest(evidence, map_on_cores(backtest_part, [(evidence, BENCHMARK, scale), (evidence, ACCELERATOR, scale)], PARSE))
    learnt = production_learnt(evidence)
    return replace(trends,
                   transfer=TransferBacktestSchema.validate(transfer, lazy=True),
                   production=ProductionBacktestSchema.validate(production_backtest(production_cases(learnt), learnt), lazy=True),
                   scale=ScaleBacktestSchema.validate(scale, lazy=True))
