"""`plan --model-params`: a user's language model (parameters, tokens, accelerator, a count or a deadline) answered
from the utilisation the measured language models reached on that accelerator (tasks/metrics/transfer.py), with the
interval and the figures of the cross-benchmark backtest.

Tables and a request in, a ModelPlan out; printing is the command line's job.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.plan import PlanError, normal_name
from mlperf_scaling.tasks.metrics.transfer import (
    BacktestFigures,
    Request,
    Transfer,
    attention_share,
    backtest_figures,
    calibration,
    calibration_pool,
    median_memory_gb,
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
class Answer:
    """One count's answer: hours, accelerator-hours and energy with the interval's ends."""

    accelerators: int
    hours: float | None = None  # None where refused
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
    meets_deadline: bool | None = None  # on the interval's slow end
    refused: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelPlan:
    request: Request
    tokens: float
    flops: float
    attention_share: float
    transfer: Transfer
    mfu_low: float | None
    mfu_high: float | None
    answers: list[Answer]  # the count asked for, the one a deadline needs, or a ladder of counts
    chosen: Answer | None  # the count asked for or the deadline's; None for a ladder
    why_chosen: str | None
    power: Power | None
    figures: BacktestFigures
    deadline_min: float | None
    refused: list[str]  # the request's own, whatever the count


def resolve_group(evidence: pl.DataFrame, accelerator: str) -> str:
    """A comparable group as people type it (H100-SXM, h100 sxm, a family with one group such as B200)."""
    groups = sorted(evidence["accelerator_group"].unique().to_list())
    wanted = normal_name(accelerator)
    exact = [g for g in groups if normal_name(g) == wanted]
    if exact:
        return exact[0]
    family = sorted(evidence.filter(pl.col("accelerator_family").map_elements(normal_name, return_dtype=pl.String) == wanted)
                    ["accelerator_group"].unique().to_list())
    if len(family) == 1:
        return family[0]
    if family:
        raise PlanError(f"{accelerator!r} is more than one comparable group: {', '.join(family)}; name one")
    return accelerator  # not measured: the transfer refuses it and names the groups that are


def _power(evidence: pl.DataFrame, group: str) -> Power | None:
    measured = evidence.filter((pl.col("accelerator_group") == group) & pl.col("w_per_accelerator").is_not_null())
    if measured.is_empty():
        return None
    w = measured["w_per_accelerator"].to_numpy()
    return Power(float(np.median(w)), float(w.min()), float(w.max()), measured.height, ", ".join(sorted(measured["benchmark"].unique().to_list())))


def _answer(plan_flops: float, accelerators: int, t: Transfer, bounds: tuple[float, float] | None, power: Power | None,
            price: float | None, deadline_min: float | None, refused: list[str]) -> Answer:
    assert t.mfu_with_attention is not None and t.peak_tflops is not None
    if refused:
        return Answer(accelerators, refused=tuple(refused))
    hours = plan_flops / (accelerators * t.peak_tflops * 1e12 * t.mfu_with_attention) / 3600
    answer = Answer(accelerators, hours, accelerator_hours=hours * accelerators)
    if power is not None:
        answer = replace(answer, energy_mwh=hours * accelerators * power.w_per_accelerator / 1e6)
    if price is not None:
        answer = replace(answer, cost_usd=hours * accelerators * price)
    if bounds is None:  # no backtest to learn an interval from: the point alone, and no deadline is called met
        return answer
    low, high = time_bounds(hours, bounds)
    answer = replace(answer, hours_low=low, hours_high=high, accelerator_hours_low=low * accelerators, accelerator_hours_high=high * accelerators)
    if power is not None:
        # energy = time x accelerators x measured power per accelerator: the interval's ends take the power's ends too
        answer = replace(answer, energy_mwh_low=low * accelerators * power.low / 1e6, energy_mwh_high=high * accelerators * power.high / 1e6)
    if price is not None:
        answer = replace(answer, cost_usd_low=low * accelerators * price, cost_usd_high=high * accelerators * price)
    if deadline_min is not None:
        answer = replace(answer, meets_deadline=high * 60 <= deadline_min)
    return answer


def _ladder(smallest: int, most_measured: int) -> list[int]:
    """Counts to show when none was asked: powers of two from the fewest whose memory holds the model to the most measured."""
    top = max(most_measured, smallest)
    start = 2 ** math.ceil(math.log2(max(smallest, 1)))
    counts, n = [], start
    while n <= top:
        counts.append(n)
        n *= 2
    return counts or [smallest]


def make_model_plan(evidence: pl.DataFrame, backtest: pl.DataFrame, request: Request, tokens: float, deadline_min: float | None = None,
                    price: float | None = None, max_accelerators: int | None = None) -> ModelPlan:
    """The answer for a user's model: at the count asked for, at the fewest that meet a deadline on the interval's slow
    end, or on a ladder of counts; refused where the measurements do not reach."""
    if evidence.is_empty():
        raise PlanError("the warehouse holds no language-model result with a known utilisation: run `mlperf-scaling run` first")
    # learnt as the backtest's own intervals are: from every benchmark left out, however far (transfer.calibration_pool)
    bounds = calibration(calibration_pool(evidence))
    power = _power(evidence, request.accelerator_group)
    base = transfer(evidence, replace(request, accelerators=None))
    mfu_low = mfu_high = None
    if base.mfu_with_attention is not None and bounds is not None:
        mfu_low, mfu_high = base.mfu_with_attention * math.exp(bounds[0]), base.mfu_with_attention * math.exp(bounds[1])
    flops = training_flops(request.active_parameters, tokens, request.seq_len)
    plan = ModelPlan(request, tokens, flops, attention_share(request.active_parameters, request.seq_len), base, mfu_low, mfu_high,
                     answers=[], chosen=None, why_chosen=None, power=power, figures=backtest_figures(backtest), deadline_min=deadline_min,
                     refused=base.refused)
    if base.refused:
        return plan
    smallest = smallest_that_fits(request, median_memory_gb(evidence.filter(pl.col("accelerator_group") == request.accelerator_group)))

    def at(count: int) -> Answer:
        found = transfer(evidence, replace(request, accelerators=count))
        return _answer(flops, count, base, bounds, power, price, deadline_min, found.refused)

    if request.accelerators is not None:
        chosen = at(request.accelerators)
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen="the count asked for")
    if deadline_min is not None:
        if mfu_low is None:
            raise PlanError("--deadline needs an interval, and no language-model benchmark could be predicted from another yet")
        assert base.peak_tflops is not None
        # the fewest whole nodes whose slow end (the utilisation's low end) meets the deadline
        needed = flops / (deadline_min * 60 * base.peak_tflops * 1e12 * mfu_low)
        count = max(NODE * math.ceil(needed / NODE), NODE * math.ceil(smallest / NODE))
        if max_accelerators is not None and count > max_accelerators:
            chosen = at(max_accelerators)
            why = (f"the deadline needs {count:,} {request.accelerator_group} on the interval's slow end; "
                   f"{max_accelerators:,} (--max-accelerators) is what you have")
        else:
            chosen, why = at(count), "the fewest whole nodes that meet the deadline on the interval's slow end"
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen=why)
    on = evidence.filter(pl.col("accelerator_group") == request.accelerator_group)
    counts = [c for c in _ladder(smallest, int(on["accelerators"].to_numpy().max())) if max_accelerators is None or c <= max_accelerators]
    return replace(plan, answers=[at(c) for c in counts])
