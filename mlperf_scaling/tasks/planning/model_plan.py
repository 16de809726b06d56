"""`plan --model-params`: a user's language model (parameters, tokens, accelerator, a count or a deadline) answered
twice: at the pace of MLPerf submissions (tasks/planning/pace.py: the utilisation while computing the measured language
models reached on that accelerator, and the step overhead that grows with the count), and as a production run, that
pace times the factor public production runs took beyond it (tasks/planning/production.py); each with its interval and
the figures of its backtests.

The global batch bounds the count (tasks/planning/batch.py): beyond one sequence per data-parallel replica an
accelerator has nothing to work on, so a count above the largest useful one is refused, and a deadline or a budget is
searched below it. What cannot be planned is refused in one line (PlanError): fewer tokens than one global batch, more
parameters than any model trained (MAX_PARAMETERS), a model whose weights fit in no model-parallel group.

Tables and a request in, a ModelPlan out; printing is the command line's job.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import classify_accelerator
from mlperf_scaling.tasks.metrics.accelerators import group_name
from mlperf_scaling.tasks.planning.batch import MAX_BATCH_TOKENS, NODE, Batch, plan_batch
from mlperf_scaling.tasks.planning.datasheets import datasheet_groups, datasheet_of, does_not_fit, memory_of, smallest_that_fits
from mlperf_scaling.tasks.planning.pace import Calibrated, CountBounds, Pace, pace
from mlperf_scaling.tasks.planning.pace_backtest import ACCELERATOR, BacktestFigures, backtest_figures, calibration, count_bounds, time_bounds
from mlperf_scaling.tasks.planning.production import (
    ORGANISATION,
    ProductionEstimate,
    ProductionFigures,
    estimate_factor,
    production_figures,
    production_learnt,
)
from mlperf_scaling.tasks.planning.requests import PlanError, normal_name
from mlperf_scaling.tasks.planning.work import Request, attention_share, human_count, training_flops

MAX_PARAMETERS = 10e12  # beyond any model trained (the largest public ones have 1-2T): a size nothing here can speak to
MAX_SEQUENCE = 2**20  # tokens: the longest context models are trained at (a long-context phase of about a million tokens)
SEARCH_STEP = 1.01  # a deadline's search steps through whole nodes by at most 1 % of the count


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
    """One count's answer: its utilisation, at the MLPerf pace and as a production run."""

    accelerators: int
    mfu: float  # the pace's utilisation of whole steps at this count, attention counted
    overhead_share: float  # of a step's time, the overhead that does not shrink with the count
    count_beyond: float  # N / the largest count measured on the generation (1 within)
    pace: Estimate
    production: Estimate | None = None
    meets_deadline: bool | None = None  # on the slow end of the production interval (of the pace's where there is none)
    capped: str | None = None  # why an interval's fast end stops at the physical peak
    production_factor: float | None = None  # the production estimate over the pace at this count


@dataclass(frozen=True)
class ModelPlan:
    request: Request
    tokens: float
    flops: float
    attention_share: float
    pace: Pace
    batch: Batch | None
    mfu_low: float | None  # the utilisation while computing, its interval
    mfu_high: float | None
    mfu_capped: str | None  # why the utilisation's interval stops at 1, where it does
    reach_seen: float | None  # the farthest reach the backtest saw: within it the interval is not widened
    answers: list[Answer]  # the count asked for, the one a deadline needs, or a ladder of counts
    chosen: Answer | None  # the count asked for or the deadline's; None for a ladder
    why_chosen: str | None
    fastest: Answer | None  # the count that trains soonest (production estimate, else pace) within the batch's bound or what you have
    largest: int | None  # the largest count searched: the batch's bound, or --max-accelerators below it
    power: Power | None
    figures: BacktestFigures
    pooled_figures: BacktestFigures  # the backtest that leaves each accelerator out (a pooled pace's)
    scale_figures: BacktestFigures | None  # the count's backtest (the largest counts hidden)
    production: ProductionEstimate | None
    production_figures: ProductionFigures | None
    deadline_min: float | None
    refused: list[str]  # what cannot be stated, whatever the count


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
        group = group_name(known.family, known.form_factor, accelerator)
        # a published name goes on past its group with a generation, memory, power or rack (A100-SXM4-80GB (400W),
        # GB200 NVL72); a letter or two and nothing else is a slip of the keyboard the patterns read past (H100-SXMM)
        rest = wanted.removeprefix(normal_name(group))
        if rest != wanted and re.fullmatch(r"[a-z]{1,2}", rest):
            raise PlanError(f"no accelerator {accelerator!r} with a datasheet; did you mean {group}?")
        return group
    by_plain = {normal_name(g): g for g in groups}
    near = difflib.get_close_matches(wanted, list(by_plain), n=1, cutoff=0.6)
    if near:
        raise PlanError(f"no accelerator {accelerator!r} with a datasheet; did you mean {by_plain[near[0]]}?")
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


@dataclass(frozen=True)
class _Setting:
    """What every count's answer shares."""

    flops: float
    pace: Pace
    batch: Batch
    bounds: Calibrated | None
    count: CountBounds | None
    production: ProductionEstimate | None
    power: Power | None
    price: float | None
    deadline_min: float | None


def _answer(s: _Setting, accelerators: int) -> Answer:
    t = s.pace
    assert t.peak_tflops is not None
    mfu = t.mfu_at(accelerators, s.batch.tokens)
    step = t.step_compute_s(s.batch.tokens, accelerators)
    computing = step / (t.mfu_compute * t.pipeline(accelerators, s.batch.tokens))  # type: ignore[operator]
    share = t.overhead_s(accelerators) / (computing + t.overhead_s(accelerators))
    hours = s.flops / (accelerators * t.peak_tflops * 1e12 * mfu) / 3600
    # no run is faster than every accelerator at its peak: an interval's fast end stops there
    fastest = s.flops / (accelerators * t.peak_tflops * 1e12) / 3600
    capped = None
    low = high = None
    widened = t.widened(s.bounds, s.count, accelerators) if s.bounds is not None else None
    if widened is not None:
        low, high = time_bounds(hours, widened)
        if low < fastest:
            capped = (f"the pace's fast end would pass the {t.precision} peak: the measurements cannot be trusted that far from them, "
                      f"so it stops at the peak ({fastest:,.4g} h)")
            low = fastest
    pace_estimate = _estimate(hours, low, high, accelerators, s.power, s.price)
    made = None
    if s.production is not None:
        made_hours = hours * s.production.factor_at(mfu / t.mfu_compute)  # type: ignore[operator]
        made_low = made_high = None
        if s.production.log_bounds is not None:
            # the public runs' bounds hold for a pace as near its evidence as theirs; what the pace's interval widens
            # beyond its calibrated width (distance, pooling, a change of precision or kind, a count beyond) widens this one too
            extra_low = extra_high = 0.0
            if s.bounds is not None and widened is not None:
                base_low, base_high = time_bounds(hours, (s.bounds.low, s.bounds.high))
                wide_low, wide_high = time_bounds(hours, widened)
                extra_low, extra_high = max(math.log(base_low / wide_low), 0.0), max(math.log(wide_high / base_high), 0.0)
            made_low = made_hours * math.exp(-math.hypot(s.production.log_bounds[0], extra_low))
            made_high = made_hours * math.exp(math.hypot(s.production.log_bounds[1], extra_high))
            if low is not None and high is not None:  # and it is never narrower than the pace's own
                made_low, made_high = min(made_low, made_hours * low / hours), max(made_high, made_hours * high / hours)
            if made_low < fastest:
                made_low = fastest
                capped = (capped + "; " if capped else "") + (f"the production estimate's fast end would pass the {t.precision} peak: "
                                                              f"it stops there ({fastest:,.4g} h)")
        made = _estimate(made_hours, made_low, made_high, accelerators, s.power, s.price)
    slow = made.hours_high if made is not None else pace_estimate.hours_high
    meets = None if s.deadline_min is None or slow is None else slow * 60 <= s.deadline_min
    return Answer(accelerators, mfu, share, t.count_beyond(accelerators), pace_estimate, made, meets, capped,
                  made.hours / hours if made is not None else None)


def _production(cases: pl.DataFrame | None, t: Pace, request: Request, overhead_share: float) -> ProductionEstimate | None:
    spec = datasheet_of(request)
    if cases is None or cases.height < 10 or spec is None or t.precision is None:
        return None
    sixteen = spec.peak_tflops.get("bf16") or spec.peak_tflops.get("fp16")
    if sixteen is None:
        return None
    compute_16bit = t.mfu_compute * t.peak_tflops / sixteen  # type: ignore[operator]
    return estimate_factor(cases, sixteen, t.precision, request.moe, spec.architecture, compute_16bit, overhead_share)


def _ladder(smallest: int, largest: int) -> list[int]:
    """Counts to show when none was asked: powers of two from the fewest whose memory holds the model to the largest the
    batch keeps busy (or you have), and that one."""
    counts, n = [], 2 ** math.ceil(math.log2(max(smallest, 1)))
    while n < largest:
        counts.append(n)
        n *= 2
    return counts + [largest]


def _search_counts(smallest: int, largest: int) -> list[int]:
    """The counts a deadline searches: powers of two below a node from the smallest that fits, then whole nodes to the
    largest, each at most 1 % above the last, and the largest itself."""
    counts = [n for n in (1, 2, 4) if smallest <= n < NODE and n <= largest]
    n = max(NODE * math.ceil(smallest / NODE), NODE)
    while n <= largest:
        counts.append(n)
        n = max(n + NODE, NODE * math.floor(n * SEARCH_STEP / NODE))
    return counts if counts and counts[-1] == largest else [*counts, largest]


def duration_words(hours: float) -> str:
    return f"{hours * 60:,.0f} min" if hours < 1 else f"{hours:,.1f} h" if hours < 48 else f"{hours / 24:,.1f} days"


def _checked(request: Request, tokens: float) -> None:
    """The request's own impossibilities, in one line each."""
    if request.parameters > MAX_PARAMETERS:
        raise PlanError(f"--model-params {human_count(request.parameters)}: beyond any model trained (the largest public ones have 1-2T "
                        f"parameters); the planner speaks to at most {human_count(MAX_PARAMETERS)}")
    if request.seq_len > MAX_SEQUENCE:
        raise PlanError(f"--seq-len {human_count(request.seq_len)}: longer than any model trains at (at most {human_count(MAX_SEQUENCE)} tokens)")
    if request.global_batch_tokens is not None and request.global_batch_tokens < request.seq_len:
        raise PlanError(f"--global-batch-tokens {human_count(request.global_batch_tokens)}: less than one sequence of "
                        f"{request.seq_len:,.0f} tokens (--seq-len)")
    if request.global_batch_tokens is not None and request.global_batch_tokens > MAX_BATCH_TOKENS:
        raise PlanError(f"--global-batch-tokens {human_count(request.global_batch_tokens)}: beyond any step public runs took (the largest, "
                        f"Kimi K2's, was 67M tokens); the planner speaks to at most {human_count(MAX_BATCH_TOKENS)}")
    if tokens < request.seq_len:
        raise PlanError(f"--tokens {human_count(tokens)}: less than one sequence of {request.seq_len:,.0f} tokens")


def _bounded(request: Request, batch: Batch, tokens: float, smallest: int, max_accelerators: int | None, fastest_words: str) -> None:
    """What the batch and the memory leave no count for, in one line each."""
    group = request.accelerator_group
    if batch.model_parallel > batch.largest_model_parallel:
        raise PlanError(f"{human_count(request.parameters)} parameters do not fit even at the largest model-parallel degree: "
                        f"{batch.model_parallel:,} {group} would hold one copy's weights and gradients, "
                        f"more than tensor parallelism of 8 x one pipeline stage per layer ({batch.largest_model_parallel:,})")
    if batch.tokens < request.seq_len:
        raise PlanError(f"--seq-len {request.seq_len:,.0f}: longer than the global batch ({human_count(batch.tokens)} tokens, {batch.basis}); "
                        f"give --global-batch-tokens")
    if tokens < batch.tokens:
        raise PlanError(f"--tokens {human_count(tokens)}: fewer than one global batch ({human_count(batch.tokens)} tokens, {batch.basis}): "
                        f"not one optimiser step; give --global-batch-tokens for a smaller batch")
    if smallest > batch.largest_useful:
        raise PlanError(f"{human_count(request.parameters)} parameters need at least {smallest:,} {group} to hold their weights and optimiser "
                        f"state, more than the global batch keeps busy ({batch.largest_useful:,}: {batch.sequences:,} sequences of "
                        f"{request.seq_len:,.0f}); give --global-batch-tokens for a larger batch")
    if max_accelerators is not None and max_accelerators < smallest:
        raise PlanError(f"--max-accelerators {max_accelerators:,}: fewer than the {smallest:,} {group} that hold "
                        f"{human_count(request.parameters)} parameters' weights and optimiser state")
    if request.accelerators is not None and request.accelerators > batch.largest_useful:
        raise PlanError(f"{request.accelerators:,} {group} is more than the global batch keeps busy: {batch.sequences:,} sequences of "
                        f"{request.seq_len:,.0f} ({human_count(batch.tokens)} tokens, {batch.basis}) at one per replica x model "
                        f"parallelism {max(batch.model_parallel, NODE)} = at most {batch.largest_useful:,}; {fastest_words}; "
                        f"give --global-batch-tokens for a larger batch")


def make_model_plan(evidence: pl.DataFrame, backtest: pl.DataFrame, request: Request, tokens: float, deadline_min: float | None = None,
                    price: float | None = None, max_accelerators: int | None = None, production: pl.DataFrame | None = None,
                    scale: pl.DataFrame | None = None) -> ModelPlan:
    """The answer for a user's model: at the count asked for, at the fewest that meet a deadline on the interval's slow
    end, or on a ladder of counts up to the largest the batch keeps busy. `backtest` is transfer_backtest, `production`
    production_backtest, `scale` scale_backtest. Raises PlanError for what cannot be planned."""
    if evidence.is_empty():
        raise PlanError("the warehouse holds no language-model result with a known utilisation: run `mlperf-scaling run` first")
    memory = memory_of(request, evidence)
    _checked(request, tokens)
    cases = production.filter(pl.col("left_out") == ORGANISATION) if production is not None and not production.is_empty() else None
    learnt = production_learnt(evidence)
    found = pace(learnt, replace(request, accelerators=None))
    figures, pooled_figures = backtest_figures(backtest), backtest_figures(backtest, ACCELERATOR)
    scale_figures = backtest_figures(scale, held_out="benchmark") if scale is not None and not scale.is_empty() else None
    flops = training_flops(request.active_parameters, tokens, request.seq_len)
    empty = ModelPlan(request=request, tokens=tokens, flops=flops, attention_share=attention_share(request.active_parameters, request.seq_len),
                      pace=found, batch=None, mfu_low=None, mfu_high=None, mfu_capped=None, reach_seen=None, answers=[], chosen=None,
                      why_chosen=None, fastest=None, largest=None, power=None, figures=figures, pooled_figures=pooled_figures, scale_figures=scale_figures,
                      production=None, deadline_min=deadline_min, refused=found.refused,
                      production_figures=production_figures(production) if production is not None and not production.is_empty() else None)
    if found.refused:
        return empty
    batch = plan_batch(request, memory)
    smallest = smallest_that_fits(request, memory)
    bounds = calibration(backtest, ACCELERATOR if found.pooled else "benchmark")
    count = count_bounds(scale) if scale is not None else None
    reference = min(request.accelerators or smallest, batch.largest_useful)  # the count the factor is said at
    made = _production(cases, found, request, found.mfu_at(reference, batch.tokens) / found.mfu_compute)  # type: ignore[operator]
    setting = _Setting(flops, found, batch, bounds, count, made, _power(evidence, request.accelerator_group), price, deadline_min)
    largest = batch.largest_useful if max_accelerators is None else min(batch.largest_useful, max_accelerators)
    within = [_answer(setting, n) for n in _search_counts(smallest, largest)] if smallest <= largest else []
    fastest = min(within, key=lambda a: ((a.production or a.pace).hours, a.accelerators)) if within else None
    _bounded(request, batch, tokens, smallest, max_accelerators,
             f"the fastest within it is {fastest.accelerators:,}, about {duration_words((fastest.production or fastest.pace).hours)}"
             if fastest is not None else "no count fits")
    assert fastest is not None
    mfu_low = mfu_high = capped = None
    if found.mfu_compute is not None and bounds is not None:
        low, high = found.widened(bounds)
        mfu_low, mfu_high = found.mfu_compute * math.exp(low), found.mfu_compute * math.exp(high)
        if mfu_high > 1:
            capped = (f"the interval's upper end would pass the physical peak ({mfu_high:.3f}): the evidence cannot be trusted "
                      f"that far ({'; '.join(found.far) or 'its spread'}), so it stops at 1")
            mfu_high = 1.0
    plan = replace(empty, batch=batch, mfu_low=mfu_low, mfu_high=mfu_high, mfu_capped=capped,
                   reach_seen=bounds.reach_seen if bounds is not None else None, fastest=fastest, largest=largest, production=made,
                   power=setting.power)
    if request.accelerators is not None:
        if (too_small := does_not_fit(request, request.accelerators, memory)) is not None:
            raise PlanError(too_small)
        chosen = _answer(setting, request.accelerators)
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen="the count asked for")
    if deadline_min is not None:
        if bounds is None:
            raise PlanError("--deadline needs an interval, and no language-model benchmark could be predicted from another yet")
        basis = "the production estimate's" if made is not None else "the MLPerf pace's"
        meeting = [a for a in within if a.meets_deadline]
        if meeting:
            chosen, why = meeting[0], f"the fewest that meet the deadline on {basis} slow end"
        elif largest < batch.largest_useful and (needed := _first_meeting(setting, largest, batch.largest_useful)) is not None:
            chosen = within[-1]
            why = (f"the deadline needs more than {largest:,} {request.accelerator_group} on {basis} slow end (at least "
                   f"{needed:,}); {largest:,} (--max-accelerators) is what you have")
        else:
            chosen = fastest
            bound = f"the {largest:,} you have" if largest < batch.largest_useful else f"the batch's bound of {batch.largest_useful:,}"
            why = (f"no count meets the deadline: the fastest within {bound} is {chosen.accelerators:,}, and even its slow end is "
                   f"{duration_words((chosen.production or chosen.pace).hours_high or math.nan)}; nothing is promised")
        return replace(plan, answers=[chosen], chosen=chosen, why_chosen=why)
    return replace(plan, answers=[_answer(setting, n) for n in _ladder(smallest, largest)])


def _first_meeting(setting: _Setting, above: int, largest: int) -> int | None:
    """The fewest accelerators above `above` (and within the batch's bound) that meet the deadline; None where none does."""
    return next((n for n in _search_counts(above + 1, largest) if _answer(setting, n).meets_deadline), None)
