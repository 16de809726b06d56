"""The answer to "how many accelerators should I train this on?", per (round, benchmark, comparable accelerator group).

Measured evidence first. At a count somebody measured, the answer quotes the measurement: the best system's official
time, the spread over the systems and over its runs, and the efficiency of the tables (the best time at the group's
smallest count x that count, over the time x N). A model never stands in for a measurement; it chooses between counts
and goes beyond them, and what it gives is said to be predicted, with its calibrated 90 % interval and its group's
backtest error (tasks/planning/predict.py).

- No deadline: the largest measured count whose measured efficiency is still at least the threshold: past it, more
  accelerators mostly buy accelerator-hours.
- A deadline: the smallest count that meets it, searched over every whole number of nodes from four times below the
  smallest measured count to four times above the largest (search_counts): a measured count on its measured time (the
  official score), a count nobody measured on its interval's upper end; the sentence says which. A measured count met
  on its score while one of its systems' slowest runs took longer is named so. When no count meets it, the fastest
  measured count or, when a budget leaves the fastest measured counts out, the fastest count within it on the same
  stated times; the reason says so.
- A budget (`max_accelerators`) below the smallest measured count: the largest count within it whose predicted
  efficiency is at least the threshold, predicted.

Then the next count, twice the answer (measured there, or predicted), stated as a fact with its cost in
accelerator-hours and why it is not the answer (not measured, its efficiency below the threshold, past the budget, or
the deadline met with fewer): never as an argument for it. A group whose backtest median error is over 15 %, or a
prediction beyond twice the largest count measured, gets a warning that says what measurement would settle it.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.recommendations import RecommendationsSchema
from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS, SERIES_APART
from mlperf_scaling.tasks.planning.calibration import LEVEL, load_calibration
from mlperf_scaling.tasks.planning.group_planner import (
    MEASURED,
    PREDICTED,
    REACH_BELOW,
    NoCandidate,
    Planner,
    Step,
    is_budget_count,
    node_size,
    planner,
    search_counts,
)

DEADLINE_FIELDS = ("deadline_min", "deadline_basis", "meets_deadline", "slowest_run_misses_deadline", "slow_runs")


@dataclass(frozen=True)
class Recommendation:
    """One recommendation; `sentence` says it in words, `warning` what to be wary of."""

    accelerator_group: str
    basis: str  # measured or predicted
    threshold: float
    deadline_min: float | None
    n_systems: int
    n_distinct_accelerators: int
    reference_accelerators: int
    reference_time_min: float
    reference_system: str
    max_measured_accelerators: int
    accelerators: int
    time_min: float
    time_min_low: float | None
    time_min_high: float | None
    n_systems_at: int | None
    best_system: str | None
    slowest_system_min: float | None
    fastest_run_min: float | None
    slowest_run_min: float | None
    efficiency: float
    efficiency_low: float | None
    efficiency_high: float | None
    accelerator_hours: float
    next_accelerators: int | None
    next_basis: str | None
    next_time_min: float | None
    next_time_min_low: float | None
    next_time_min_high: float | None
    time_saved_min: float | None
    extra_accelerator_hours_pct: float | None
    next_is_extrapolated: bool | None
    next_not_chosen: str | None  # why the next count is not the answer
    knee: float | None
    knee_low: float | None
    knee_high: float | None
    model: str | None
    backtest_median_error_pct: float | None
    backtest_counts: int | None
    backtest_covered: int | None
    warning: str | None
    reason: str
    sentence: str
    # with a deadline only (DEADLINE_FIELDS; the recommendations table has none)
    deadline_basis: str | None = None  # "measured time" or "interval's upper end": what met the deadline; None if nothing did
    meets_deadline: bool | None = None
    slowest_run_misses_deadline: bool | None = None  # the best system's slowest valid run took longer than the deadline
    slow_runs: str | None = None  # every system at the count that meets the deadline on its score but not on its slowest run


def minutes_text(value: float) -> str:
    # under a minute, the seconds too: a deadline typed as 10s reads as it was typed
    if value < 1:
        return f"{value:,.2f} min ({value * 60:,.0f} s)"
    return f"{value:,.2f} min" if value < 10 else (f"{value:,.1f} min" if value < 600 else f"{value / 60:,.1f} h")


def interval_text(point: float, low: float | None, high: float | None) -> str:
    """The interval's ends in the unit of the time before them: one unit per interval ("12.5 h [8.1, 20.3]", never
    "9.8 min [7.2, 11.0 h]")."""
    def bare(value: float) -> str:
        if point >= 600:
            return f"{value / 60:,.1f}"
        return f"{value:,.2f}" if point < 10 else f"{value:,.1f}"

    return "" if low is None or high is None else f" [{bare(low)}, {bare(high)}]"


def _nothing_within(p: Planner, max_accelerators: int | None) -> str:
    """Why a budget has no answer: it is below every count measured, and too few were measured for a model (with a model
    every budget has one: search_counts)."""
    counts = len(p.counts)
    return (f"no {p.accelerator_group} configuration measured with at most {max_accelerators:,} accelerators (the smallest has "
            f"{p.counts[0]:,}), and with {counts} count{'s' if counts != 1 else ''} measured nothing is predicted (at least "
            f"{MIN_DISTINCT_COUNTS} are needed)")


def stated_time(s: Step) -> float | None:
    """The time a deadline is held to: the measured time, or the upper end of the predicted interval (None without one)."""
    return s.time_min if s.basis == MEASURED else s.time_min_high


def slow_runs(p: Planner, count: int, deadline_min: float) -> list[tuple[str, float]]:
    """(system, its slowest valid run) of every system at a measured count whose score meets the deadline while its
    slowest run, which the olympic mean leaves out, took longer; the fastest score first."""
    if "time_to_train_min_high" not in p.rows.columns:
        return []
    late = p.rows.filter((pl.col("accelerators") == count) & (pl.col("time_to_train_min") <= deadline_min)
                         & (pl.col("time_to_train_min_high") > deadline_min)).sort("time_to_train_min", "submitter", "system")
    return [(f"{row['submitter']}/{row['system']}", float(row["time_to_train_min_high"])) for row in late.iter_rows(named=True)]


def _evidence_text(s: Step, p: Planner) -> str:
    e = s.evidence
    assert e is not None
    runs = f"; its runs {e.fastest_run_min:,.2f}-{e.slowest_run_min:,.2f} min" if e.fastest_run_min is not None and e.slowest_run_min is not None else ""
    if e.n_systems == 1:
        who = f"1 system ({e.best_system}{runs})"
    else:
        who = f"the best of {e.n_systems} systems ({e.best_system}{runs}; the others up to {e.slowest_system_min:,.2f} min)"
    return f"measured {minutes_text(s.time_min)}, {who}"


def _predicted_text(s: Step, p: Planner, level: bool = True) -> str:
    said = f"predicted {minutes_text(s.time_min)}{interval_text(s.time_min, s.time_min_low, s.time_min_high)}"
    if level and s.time_min_low is not None:
        said += f" ({LEVEL * 100:.0f} % interval"
        if p.backtest is not None:
            said += f"; backtest median error {p.backtest.median_error_pct:.0f} %"
        said += ")"
    return said


def _efficiency_text(s: Step, p: Planner) -> str:
    reference = f"against the best at {p.reference_accelerators:,} ({minutes_text(p.reference_time_min)})"
    if s.basis == PREDICTED and s.efficiency_low is not None and s.efficiency_high is not None:
        return f"efficiency {s.efficiency:.2f} [{s.efficiency_low:.2f}, {s.efficiency_high:.2f}] {reference}"
    why = s.evidence.above_one_because if s.evidence is not None else None
    return f"efficiency {s.efficiency:.2f} {reference}" + (f", above 1: {why}" if why else "")


SLOW_RUNS_NAMED = 2  # the sentence names this many systems whose slowest run missed the deadline; the files name all


def _slow_text(late: list[tuple[str, float]]) -> str:
    said = "; ".join(f"{system}'s slowest run took {minutes_text(slowest)}" for system, slowest in late[:SLOW_RUNS_NAMED])
    if rest := late[SLOW_RUNS_NAMED:]:
        said += (f"; the slowest runs of {len(rest)} more system{'s' if len(rest) != 1 else ''} took up to "
                 f"{minutes_text(max(t for _, t in rest))} (--format csv names them)")
    return f", but not on every run: {said}"


def _next_facts(p: Planner, chosen: Step, s: Step) -> str:
    """What the next count takes, measured or predicted, and what it costs beyond the answer, without a verdict."""
    extra = 100 * (s.accelerator_hours / chosen.accelerator_hours - 1)
    if s.basis == MEASURED:
        said = f"measured {minutes_text(s.time_min)}, efficiency {s.efficiency:.2f}"
    else:
        bounds = f" [{s.efficiency_low:.2f}, {s.efficiency_high:.2f}]" if s.efficiency_low is not None and s.efficiency_high is not None else ""
        said = f"{_predicted_text(s, p, level=False)}, efficiency {s.efficiency:.2f}{bounds}"
    return f"{said}, {extra:+.0f} % accelerator-hours"


def not_chosen(p: Planner, chosen: Step, s: Step, threshold: float, deadline_min: float | None, max_accelerators: int | None,
               candidates: list[int]) -> str:
    """Why the next count `s` is not the answer, from the rule that chose `chosen`: the budget, the deadline (met with
    fewer, or missed there too), a count nobody measured, or its efficiency below the threshold."""
    if max_accelerators is not None and s.accelerators > max_accelerators:
        return f"it is past the budget of {max_accelerators:,} accelerators"
    if deadline_min is not None:
        bound = stated_time(chosen)
        if bound is not None and bound <= deadline_min:
            return f"{chosen.accelerators:,} meets the {minutes_text(deadline_min)} deadline already, and the answer is the smallest count that does"
        if s.accelerators not in candidates:
            return f"it lies beyond the counts searched (up to {candidates[-1]:,})"
        if s.basis == PREDICTED:
            high = stated_time(s)
            upper = f", {minutes_text(high)}," if high is not None else ""
            return f"nobody measured it, and its interval's upper end{upper} misses the {minutes_text(deadline_min)} deadline too"
        return f"it misses the {minutes_text(deadline_min)} deadline too"
    below = s.efficiency < threshold
    if s.basis == PREDICTED and chosen.basis == MEASURED:
        return ("nobody measured it, and only a measured count is recommended; a measurement there would show whether it is worth it"
                + (f"; its predicted efficiency is below {threshold:g} too" if below else ""))
    if below:
        return f"its {'measured' if s.basis == MEASURED else 'predicted'} efficiency is below {threshold:g}"
    return f"{chosen.accelerators:,} is what the rule above chooses"


def _sentence(p: Planner, chosen: Step, next_step: Step | None, deadline_min: float | None, warning: str | None,
              late: list[tuple[str, float]], why_not: str | None) -> str:
    group = p.accelerator_group
    if chosen.basis == MEASURED:
        head = f"{chosen.accelerators:,} {group}: {_evidence_text(chosen, p)}"
    else:
        head = f"{chosen.accelerators:,} {group} (not measured): {_predicted_text(chosen, p)}"
    if deadline_min is not None and (bound := stated_time(chosen)) is not None and bound <= deadline_min:
        on = "on the interval's upper end" if chosen.basis == PREDICTED else "on its measured time" + (_slow_text(late) if late else "")
        head += f", meeting the {minutes_text(deadline_min)} deadline {on}"
    if len(p.counts) > 1:
        head += f"; {_efficiency_text(chosen, p)}"
    if next_step is None:
        tail = ("the only accelerator count measured, so nothing here says how it scales" if len(p.counts) == 1
                else "the largest configuration measured; with fewer than 3 counts measured nothing is predicted beyond it"
                if p.model is None else "")
    else:
        # the next count as a fact and why it is not the answer, never as an argument for it
        which = "twice as many" if next_step.accelerators == 2 * chosen.accelerators else "the next count measured"
        tail = f"{next_step.accelerators:,} ({which}: {_next_facts(p, chosen, next_step)}) is not the answer: {why_not}"
    text = f"{head}; {tail}." if tail else f"{head}."
    notes = []
    if p.model is None and len(p.counts) > 1:
        kept = p.rows.filter(~pl.col("submitter").is_in(p.apart))["accelerators"].n_unique() if p.apart else len(p.counts)
        counted = f"{kept} distinct accelerator counts once the series below is left out" if p.apart else f"{kept} distinct accelerator counts"
        notes.append(f"no model: {counted}, at least {MIN_DISTINCT_COUNTS} are needed")
    if p.apart:
        notes.append(f"left out of the model: {', '.join(p.apart)}, whose runs take over {SERIES_APART:g}x the others' at the same counts")
    if notes:
        text += f" ({'; '.join(notes)})"
    if warning:
        text += f" Warning: {warning}."
    return text


def _deadline_choice(p: Planner, candidates: list[int], deadline_min: float, capped: str) -> tuple[Step, str]:
    """The smallest candidate whose stated time meets the deadline; else the fastest measured count or, when a budget
    leaves the fastest measured counts out, the fastest count within it on its stated time; with the reason."""
    reach = math.ceil(p.counts[0] / REACH_BELOW)
    node = node_size(p.rows)
    searched = ("" if p.model is None else
                f"; searched in whole nodes of {node:,} from {candidates[0]:,} to {candidates[-1]:,}" if not is_budget_count(p, candidates)
                else f"; below the search's reach ({reach:,}, {REACH_BELOW}x below the smallest count measured), the one count the budget buys"
                if candidates[0] < reach else f"; less than one node of {node:,}, the one count the budget buys (a power of two)")
    steps = []
    for count in candidates:  # ascending, so the first that meets it is the smallest
        s = p.step(count)
        if s is None:
            continue
        bound = stated_time(s)
        if bound is not None and bound <= deadline_min:
            on = "its measured time" if s.basis == MEASURED else "the upper end of its predicted interval"
            return s, f"the smallest count that meets the {minutes_text(deadline_min)} deadline, on {on}{capped}{searched}"
        steps.append(s)
    missed = f"no count meets the {minutes_text(deadline_min)} deadline, on measured times or predicted upper ends"
    measured = [s for s in steps if s.basis == MEASURED]
    if measured and not capped:
        return min(measured, key=lambda s: s.time_min), f"{missed}: the fastest measured{searched}"
    # a budget that leaves the fastest measured counts out: the fastest count it buys, on the time a deadline is held to
    stated = [s for s in steps if stated_time(s) is not None] or steps
    chosen = min(stated, key=lambda s: (stated_time(s) or s.time_min, s.accelerators))
    on = "its measured time" if chosen.basis == MEASURED else "the upper end of its predicted interval"
    return chosen, f"{missed}: the fastest within the budget, on {on}{capped}{searched}"


def recommend(p: Planner, threshold: float = 0.5, deadline_min: float | None = None, max_accelerators: int | None = None) -> Recommendation:
    """The recommendation of one group's planner. Raises NoCandidate when `max_accelerators` is below every count the
    planner may answer (search_counts)."""
    candidates = search_counts(p, max_accelerators)
    if not candidates:
        raise NoCandidate(_nothing_within(p, max_accelerators))
    measured = [c for c in candidates if c in p.evidence]
    capped = f", at most {max_accelerators:,} accelerators" if max_accelerators is not None and max(p.counts) > max_accelerators else ""
    if deadline_min is not None:
        chosen, reason = _deadline_choice(p, candidates, deadline_min, capped)
    elif measured:
        good = [c for c in measured if p.evidence[c].efficiency >= threshold]
        count = max(good) if good else min(measured)
        chosen = p.step(count)  # type: ignore[assignment]
        reason = (f"the largest measured count whose measured efficiency is at least {threshold:g}{capped}" if good
                  else f"the measured efficiency is below {threshold:g} at every count but the smallest{capped}")
    else:
        # a budget below the smallest measured count: the largest count it holds that is still efficient, predicted
        budgeted = [s for s in (p.step(c) for c in candidates) if s is not None]
        efficient = [s for s in budgeted if s.efficiency >= threshold]
        chosen = efficient[-1] if efficient else budgeted[0]
        node = node_size(p.rows)
        below = f"at most {max_accelerators:,} accelerators, below the smallest count measured ({p.counts[0]:,}): "
        reason = (below + f"less than one node of {node:,}, the one count the budget buys (a power of two)" if chosen.accelerators < node
                  else below + f"the largest count within it, in whole nodes of {node:,}, whose predicted efficiency is at least {threshold:g}"
                  if efficient else below + f"the predicted efficiency is below {threshold:g} at every count within it, so the smallest")
    assert chosen is not None
    next_step = p.step(2 * chosen.accelerators) if p.model is not None or 2 * chosen.accelerators in p.evidence else None
    if next_step is None and p.model is None:
        larger = [c for c in p.counts if c > chosen.accelerators]
        next_step = p.step(larger[0]) if larger else None
    warning = p.warning([s for s in (chosen, next_step) if s is not None])
    knee, knee_low, knee_high = p.knee(threshold)
    bound = stated_time(chosen)
    meets = None if deadline_min is None else bool(bound is not None and bound <= deadline_min)
    late = slow_runs(p, chosen.accelerators, deadline_min) if deadline_min is not None and meets and chosen.basis == MEASURED else []
    why_not = None if next_step is None else not_chosen(p, chosen, next_step, threshold, deadline_min, max_accelerators, candidates)
    sentence = _sentence(p, chosen, next_step, deadline_min, warning, late, why_not)
    e = chosen.evidence
    return Recommendation(
        accelerator_group=p.accelerator_group, basis=chosen.basis, threshold=threshold, deadline_min=deadline_min,
        n_systems=p.rows.height, n_distinct_accelerators=len(p.counts), reference_accelerators=p.reference_accelerators,
        reference_time_min=p.reference_time_min, reference_system=p.reference_system, max_measured_accelerators=p.counts[-1],
        accelerators=chosen.accelerators, time_min=chosen.time_min, time_min_low=chosen.time_min_low, time_min_high=chosen.time_min_high,
        n_systems_at=None if e is None else e.n_systems, best_system=None if e is None else e.best_system,
        slowest_system_min=None if e is None else e.slowest_system_min, fastest_run_min=None if e is None else e.fastest_run_min,
        slowest_run_min=None if e is None else e.slowest_run_min, efficiency=chosen.efficiency, efficiency_low=chosen.efficiency_low,
        efficiency_high=chosen.efficiency_high, accelerator_hours=chosen.accelerator_hours,
        next_accelerators=None if next_step is None else next_step.accelerators, next_basis=None if next_step is None else next_step.basis,
        next_time_min=None if next_step is None else next_step.time_min,
        next_time_min_low=None if next_step is None else next_step.time_min_low,
        next_time_min_high=None if next_step is None else next_step.time_min_high,
        time_saved_min=None if next_step is None else chosen.time_min - next_step.time_min,
        extra_accelerator_hours_pct=None if next_step is None else 100 * (next_step.accelerator_hours / chosen.accelerator_hours - 1),
        next_is_extrapolated=None if next_step is None else next_step.accelerators > p.counts[-1], next_not_chosen=why_not,
        knee=knee, knee_low=knee_low, knee_high=knee_high, model=None if p.model is None else p.model.model,
        backtest_median_error_pct=None if p.backtest is None else p.backtest.median_error_pct,
        backtest_counts=None if p.backtest is None else p.backtest.cases,
        backtest_covered=None if p.backtest is None or not p.backtest.with_interval else p.backtest.covered,
        warning=warning, reason=reason, sentence=sentence,
        deadline_basis=None if not meets else "measured time" if chosen.basis == MEASURED else "interval's upper end",
        meets_deadline=meets,
        slowest_run_misses_deadline=None if deadline_min is None or e is None or e.slowest_run_min is None else bool(e.slowest_run_min > deadline_min),
        slow_runs="; ".join(f"{system} (slowest run {slowest:,.2f} min)" for system, slowest in late) or None,
    )


def recommendation_table(efficiency: pl.DataFrame, backtest: pl.DataFrame | None = None, threshold: float = 0.5) -> pl.DataFrame:
    """One recommendation per (round, benchmark, comparable accelerator group) of `efficiency`, no deadline; `backtest`:
    the same rounds' plan_backtest rows, for each group's backtest error."""
    from mlperf_scaling.tasks.score.rules import ruleset_name

    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    calibration = None if backtest is None else load_calibration().with_backtest(backtest)
    for (round_name, benchmark, group_name), group in known.sort("accelerators").group_by(
        ["round", "benchmark", "accelerator_group"], maintain_order=True
    ):
        name = benchmark_name(str(benchmark), str(round_name))
        tested = None if backtest is None else backtest.filter(
            (pl.col("round") == round_name) & (pl.col("benchmark") == benchmark) & (pl.col("accelerator_group") == group_name))
        p = planner(group, str(group_name), ruleset_name(str(round_name)), str(benchmark), str(round_name), tested, calibration)
        found = recommend(p, threshold)
        row = asdict(found)
        for deadline_field in DEADLINE_FIELDS:
            del row[deadline_field]
        rows.append({"round": round_name, "round_order": round_order(str(round_name)), "benchmark": benchmark,
                     "benchmark_canonical": name.canonical_name, "workload": name.workload, **row})
    return pl.DataFrame(rows, schema=frame_schema(RecommendationsSchema)).sort("round", "benchmark", "accelerator_group")
