"""`plan --model-params`: a user's language model (parameters, tokens, accelerator, a count or a deadline) answered
twice: at the pace of MLPerf submissions, from the utilisation the measured language models reached on that
accelerator (tasks/metrics/transfer.py), and as a production run, that pace times the factor public production runs
took beyond it (tasks/metrics/production.py); each with its interval and the figures of its backtest.

Tables and a request in, a ModelPlan out; printing is the command line's job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import classify_accelerator
from mlperf_scaling.tasks.metrics.accelerators import group_name
from mlperf_scaling.tasks.metrics.plan import PlanError, normal_name
from mlperf_scaling.tasks.metrics.production import (
    ORGANISATION,
    ProductionEstimate,
    ProductionFigures,
    estimate_factor,
    production_changes,
    production_figures,
)
from mlperf_scaling.tasks.metrics.transfer import (
    ACCELERATOR,
    BacktestFigures,
    Calibrated,
    Request,
    Transfer,
    attention_share,
    backtest_figures,
    calibration,
    datasheet_groups,
    datasheet_of,
    memory_of,
    smallest_that_fits,
    time_bounds,
    training_flops,
    transfer,
)

NODE = 8  # a count chosen for a deadline is rounded up to whole nodes of this many accelerators


@dataclass(frozen=True)
class Power:
    """Power per accelerator measured on the accelerator's language-model runs (the whole system's, switches included
    where metered, over its accelerators)."""

    w_per_accelerator: float  # the median
    low: float
    high: float
    scores: int
    benchmarks: str


@dataclass(frozen=True)
class Estimate:
    """One way of answering a count: hours, accelerator-hours, energy and cost, each with its interval's ends."""

    hours: float
    hours_low: float | None = None
    hours_high: float | None = None
    accelerator_hours: float | None = None
    accelerator_hours_low: float | None = None
    accelerator_hours_high: float | None = None
    energy_mwh: float | None = None
    energy_mwh_low: float | None = None
    energy_mwh_high: float | None = None
    cost_usd: float | None = None
    cost_usd_low: float | None = None
    cost_usd_high: float | None = None


@dataclass(frozen=True)
class Answer:
    """One count's answer: at the MLPerf pace and as a production run; `refused` names what cannot be stated instead."""

    accelerators: int
    pace: Estimate | None = None
    production: Estimate | None = None
    meets_deadline: bool | None = None  # on the slow end of the production interval (of the pace's where there is none)
    refused: tuple[str, ...] = ()
    capped: str | None = None  # why an interval's fast end stops at the physical peak


@dataclass(frozen=True)
class ModelPlan:
    request: Request
    tokens: float
    flops: float
    attention_share: float
    transfer: Transfer
    mfu_low: float | None
    mfu_high: float | None
    mfu_capped: str | None  # why the utilisation's interval stops at 1, where it does
    reach_seen: float | None  # the farthest reach the backtest saw: within it the interval is not widened
    answers: list[Answer]  # the count asked for, the one a deadline needs, or a ladder of counts
    chosen: Answer | None  # the count asked for or the deadline's; None for a ladder
    why_chosen: str | None
    power: Power | None
    figures: BacktestFigures
    pooled_figures: BacktestFigures  # the backtest that leaves each accelerator out (a pooled pace's)
    production: ProductionEstimate | None
    production_figures: ProductionFigures | None
    deadline_min: float | None
    refused: list[str]  # the request's own, whatever the count


def resolve_group(evidence: pl.DataFrame, accelerator: str) -> str:
    """A comparable group as people type it (H100-SXM, h100 sxm, a family with one group such as B200, a published name
    such as A100-SXM4-80GB): any accelerator with a datasheet, measured or not."""
    groups = sorted(set(evidence["accelerator_group"].unique().to_list()) | set(datasheet_groups()))
    wanted = normal_name(accelerator)
    exact = [g for g in groups if normal_name(g) == wanted]
    if exact:
        return exact[0]
    family = sorted({g for g in groups if normal_name(g.split("-")[0]) == wanted or normal_name(g) == wanted})
    measured = [g for g in family if g in set(evidence["accelerator_group"].to_list())]
    if len(family) == 1:
        return family[0]
    if len(measured) == 1:
        return measured[0]
    if family:
        raise PlanError(f"{accelerator!r} is more than one comparable group: {', '.join(family)}; name one")
    known = classify_accelerator(accelerator)
    if known.family is not None:
        return group_name(known.family, known.form_factor, accelerator)
    return accelerator  # the transfer refuses it and names the groups that have a datasheet


def _power(evidence: pl.DataFrame, group: str) -> Power | None:
    measured = evidence.filter((pl.col("accelerator_group") == group) & pl.col("w_per_accelerator").is_not_null())
    if measured.is_empty():
        return None
    w = measured["w_per_accelerator"].to_numpy()
    return Power(float(np.median(w)), float(w.min()), float(w.max()), measured.height, ", ".join(sorted(measured["benchmark"].unique().to_list())))


def _estimate(hours: float, low: float | None, high: float | None, accelerators: int, power: Power | None, price: float | None) -> Estimate:
    """Hours and their interval at a count, with the accelerator-hours, energy and cost they imply."""
    def per(value: float | None, factor: float | None) -> float | None:
        return None if value is None or factor is None else value * accelerators * factor

    watts = power.w_per_accelerator if power else None
    return Estimate(hours, low, high, hours * accelerators, per(low, 1.0), per(high, 1.0),
                    per(hours, watts / 1e6 if watts else None), per(low, power.low / 1e6 if power else None), per(high, power.high / 1e6 if power else None),
                    per(hours, price), per(low, price), per(high, price))


def _answer(plan_flops: float, accelerators: int, t: Transfer, bounds: Calibrated | None, production: ProductionEstimate | None,
            power: Power | None, price: float | None, deadline_min: float | None) -> Answer:
    if t.refused:
        return Answer(accelerators, refused=tuple(t.refused))
    assert t.mfu_with_attention is not None and t.peak_tflops is not None
    hours = plan_flops / (accelerators * t.peak_tflops * 1e12 * t.mfu_with_attention) / 3600
    # no run is faster than every accelerator at its peak: an interval's fast end stops there
    fastest = plan_flops / (accelerators * t.peak_tflops * 1e12) / 3600
    capped = None
    low = high = None
    if bounds is not None:
        low, high = time_bounds(hours, t.widened(bounds))
        if low < fastest:
            capped = (f"the pace's fast end would pass the {t.precision} peak: the measurements cannot be trusted that far from them, "
                      f"so it stops at the peak ({fastest:,.4g} h)")
            low = fastest
    pace = _estimate(hours, low, high, accelerators, power, price)
    made = None
    if production is not None:
        made_hours = hours * production.factor
        made_low = made_high = None
        if production.log_bounds is not None:
            # the public runs' bounds hold for a pace as near its evidence as theirs; what the pace's interval widens
            # beyond its calibrated width (distance, pooling, a change of precision) widens this one too
            extra_low = extra_high = 0.0
            if bounds is not None:
                base_low, base_high = time_bounds(hours, (bounds.low, bounds.high))
                wide_low, wide_high = time_bounds(hours, t.widened(bounds))
                extra_low, extra_high = max(math.log(base_low / wide_low), 0.0), max(math.log(wide_high / base_high), 0.0)
            made_low = made_hours * math.exp(-math.hypot(production.log_bounds[0], extra_low))
            made_high = made_hours * math.exp(math.hypot(production.log_bounds[1], extra_high))
            if low is not None and high is not None:  # and it is never narrower than the pace's own
                made_low, made_high = min(made_low, made_hours * low / hours), max(made_high, made_hours * high / hours)
            if made_low < fastest:
                made_low = fastest
                capped = (capped + "; " if capped else "") + (f"the production estimate's fast end would pass the {t.precision} peak: "
                                                              f"it stops there ({fastest:,.4g} h)")
        made = _estimate(made_hours, made_low, made_high, accelerators, power, price)
    slow = made.hours_high if made is not None else pace.hours_high
    meets = None if deadline_min is None or slow is None else slow * 60 <= deadline_min
    return Answer(accelerators, pace, made, meets, capped=capped)


def _ladder(smallest: int, most_measured: int) -> list[int]:
    """Counts to show when none was asked: powers of two from the fewest whose memory holds the model to the most measured."""
    top = max(most_measured, smallest)
    start = 2 ** math.ceil(math.log2(max(smallest, 1)))
    counts, n = [], start
    while n <= top:
        counts.append(n)
        n *= 2
    return counts or [smallest]


def _production(production_cases: pl.DataFrame | None, t: Transfer, request: Request) -> ProductionEstimate | None:
    spec = datasheet_of(request)
    if production_cases is None or production_cases.height < 10 or spec is None or t.precision is None:
        return None
    sixteen = spec.peak_tflops.get("bf16") or spec.peak_tflops.get("fp16")
    if sixteen is None:
        return None
    return estimate_factor(production_cases, sixteen, t.precision, request.moe, spec.architecture)


def make_model_plan(evidence: pl.DataFrame, backtest: pl.DataFrame, request: Request, tokens: float, deadline_min: float | None = None,
                    price: float | None = None, max_accelerators: int | None = None, production: pl.DataFrame | None = None) -> ModelPlan:
    """The answer for a user's model: at the count asked for, at the fewest that meet a deadline on the interval's slow
    end, or on a ladder of counts; refused only where nothing can be stated. `backtest` is transfer_backtest,
    `production` production_backtest."""
    if evidence.is_empty():
        raise PlanError("the warehouse holds no language-model result with a known utilisation: run `mlperf-scaling run` first")
    cases = production.filter(pl.col("left_out") == ORGANISATION) if production is not None and not production.is_empty() else None
    changes = production_changes(evidence)
    base = transfer(evidence, replace(request, accelerators=None), changes)
    bounds = calibration(backtest, ACCELERATOR if base.pooled else "benchmark")
    power = _power(evidence, request.accelerator_group)
    mfu_low = mfu_high = capped = None
    if base.mfu_with_attention is not None and bounds is not None:
        low, high = base.widened(bounds)
        mfu_low, mfu_high = base.mfu_with_attention * math.exp(low), base.mfu_with_attention * math.exp(high)
        if mfu_high > 1:
            capped = (f"the interval's upper end would pass the physical peak ({mfu_high:.3f}): the evidence cannot be trusted "
                      f"that far ({'; '.join(base.far) or 'its spread'}), so it stops at 1")
            mfu_high = 1.0
    flops = training_flops(request.active_parameters, tokens, request.seq_len)
    made = _production(cases, base, request) if not base.refused else None
    plan = ModelPlan(request, tokens, flops, attention_share(request.active_parameters, request.seq_len), base, mfu_low, mfu_high, capped,
                     bounds.reach_seen if bounds is not None else None,
                     answers=[], chosen=None, why_chosen=None, power=power, figures=backtest_figures(backtest),
                     pooled_figures=backtest_figures(backtest, ACCELERATOR), production=made,
                     production_figures=production_figures(production) if production is not None and not production.is_empty() else None,
                     deadline_min=deadline_min, refused=base.refused)
    if base.refused:
        return plan
    smallest = smallest_that_fits(request, memory_of(request, evidence))

    def at(count: int) -> Answer:
        found = transfer(evidence, replace(request, accelerators=count), changes)
        return _answer(flops, count, found, bounds, made, power, price, deadline_min)

    if request.accelerators is not None:
        chosen = at(request.accelerators)
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen="the count asked for")
    if deadline_min is not None:
        if bounds is None:
            raise PlanError("--deadline needs an interval, and no language-model benchmark could be predicted from another yet")
        basis = "the production estimate's" if made is not None else "the MLPerf pace's"
        count = NODE * math.ceil(smallest / NODE)
        # accelerator-hours do not change with the count, but the interval widens beyond the counts measured: step up
        # from the count the slow end needs at the measured counts until the answer there meets the deadline
        first = at(count)
        slow = (first.production or first.pace)
        if slow is not None and slow.accelerator_hours_high is not None:
            count = max(count, NODE * math.ceil(slow.accelerator_hours_high / (deadline_min / 60) / NODE))
        chosen = at(count)
        for _ in range(200):
            if chosen.meets_deadline or chosen.refused or (max_accelerators is not None and count > max_accelerators):
                break
            count = NODE * math.ceil(count * 1.05 / NODE)
            chosen = at(count)
        if max_accelerators is not None and count > max_accelerators:
            needed = count
            chosen = at(max_accelerators)
            why = (f"the deadline needs more than {max_accelerators:,} {request.accelerator_group} on {basis} slow end (at least "
                   f"{needed:,} by the search); {max_accelerators:,} (--max-accelerators) is what you have")
        elif chosen.meets_deadline:
            why = f"the fewest whole nodes that meet the deadline on {basis} slow end"
        else:  # refused there (memory), or the interval widened faster than the count grew
            why = f"no count up to {count:,} was found to meet the deadline on {basis} slow end: the largest tried"
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen=why)
    on = evidence.filter(pl.col("accelerator_group") == request.accelerator_group)
    top = int(on["accelerators"].to_numpy().max()) if on.height else int(evidence["accelerators"].to_numpy().max())
    counts = [c for c in _ladder(smallest, top) if max_accelerators is None or c <= max_accelerators]
    return replace(plan, answers=[at(c) for c in counts])
