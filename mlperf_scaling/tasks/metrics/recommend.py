"""The answer to "how many accelerators should I train this on?", per (round, benchmark, comparable accelerator group).

The candidates are the accelerator counts someone actually measured in the group (real configurations, not the
fit's arithmetic). Where the group has at least three distinct counts, each candidate is judged by the Amdahl fit of
tasks/metrics/fits.py with its bootstrap interval; otherwise by the measured times alone, and the row says so.

- No deadline: the largest candidate whose efficiency (against the group's smallest configuration) is still at least
  the threshold: past it, more accelerators mostly buy accelerator-hours.
- A deadline: the smallest candidate that meets it, as efficiency only falls with N, so it is the cheapest that
  does; when none does, the fastest, and the reason says so.

Then the price of going further: doubling N under the fit (the next measured count without one), the minutes it
saves and the accelerator-hours it adds.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.recommendations import RecommendationsSchema
from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.fits import (
    MIN_DISTINCT_COUNTS,
    MIN_SYSTEMS_FOR_INTERVAL,
    SERIES_APART,
    AmdahlBootstrap,
    apart_series,
    bootstrap_amdahl,
)

BASIS_FIT = "amdahl fit"
BASIS_MEASURED = "measured"


@dataclass(frozen=True)
class Recommendation:
    """One recommendation; `sentence` says it in words."""

    accelerator_group: str
    basis: str
    threshold: float
    n_systems: int
    n_distinct_accelerators: int
    reference_accelerators: int
    max_measured_accelerators: int
    accelerators: int
    time_min: float
    time_min_low: float | None
    time_min_high: float | None
    efficiency: float
    efficiency_low: float | None
    efficiency_high: float | None
    measured_time_min: float
    accelerator_hours: float
    next_accelerators: int | None
    next_time_min: float | None
    time_saved_min: float | None
    extra_accelerator_hours_pct: float | None
    next_is_extrapolated: bool | None
    knee: float | None
    knee_low: float | None
    knee_high: float | None
    reason: str
    sentence: str


class NoCandidate(ValueError):
    """No measured configuration satisfies the user's limits."""


def _minutes(value: float) -> str:
    return f"{value:,.1f} min" if value < 600 else f"{value / 60:,.1f} h"


def _sentence(r: Recommendation, note: str | None) -> str:
    head = f"{r.accelerators:,} {r.accelerator_group}: {_minutes(r.time_min)}"
    if r.basis == BASIS_FIT and r.n_systems < MIN_SYSTEMS_FOR_INTERVAL:
        head += (f", efficiency {r.efficiency:.2f} against {r.reference_accelerators:,} "
                 f"(fitted on {r.n_systems} systems: too few for an interval)")
    elif r.basis == BASIS_FIT:
        head += (f", efficiency {r.efficiency:.2f} [{r.efficiency_low:.2f}, {r.efficiency_high:.2f}]"
                 f" against {r.reference_accelerators:,}")
    elif r.n_distinct_accelerators > 1:
        head += f" measured, efficiency {r.efficiency:.2f} against {r.reference_accelerators:,}"
    else:
        head += " measured"
    if r.next_accelerators is None:
        tail = ("the only accelerator count measured, so nothing here says how it scales" if r.n_distinct_accelerators == 1
                else "the largest configuration measured")
    else:
        step = f"doubling to {r.next_accelerators:,}" if r.basis == BASIS_FIT else f"the next measured, {r.next_accelerators:,},"
        assert r.time_saved_min is not None and r.extra_accelerator_hours_pct is not None
        change = (f"saves {_minutes(r.time_saved_min)}" if r.time_saved_min >= 0 else f"takes {_minutes(-r.time_saved_min)} longer")
        tail = f"{step} {change} for {r.extra_accelerator_hours_pct:+.0f} % accelerator-hours"
        if r.next_is_extrapolated:
            tail += " (beyond the largest count measured: extrapolated)"
    text = f"{head}; {tail}."
    return f"{text} ({note})" if note else text


def recommend(points: pl.DataFrame, accelerator_group: str, threshold: float = 0.5, deadline_min: float | None = None,
              max_accelerators: int | None = None, fit: AmdahlBootstrap | None = None) -> Recommendation:
    """The recommendation for one group from its systems (columns accelerators, time_to_train_min).

    `fit`: the group's bootstrap, when already computed; fitted here otherwise (when there are enough counts).
    Raises NoCandidate when `max_accelerators` is below every measured count. A submitter's series clearly apart
    from the rest (fits.apart_series) is left out, and the sentence says so.
    """
    points, apart = apart_series(points)
    n = points["accelerators"].to_numpy().astype(float)
    t = points["time_to_train_min"].to_numpy().astype(float)
    distinct = np.unique(n)
    if fit is None and len(distinct) >= MIN_DISTINCT_COUNTS:
        fit = bootstrap_amdahl(n, t)
    if fit is not None and not (math.isfinite(fit.a) and math.isfinite(fit.b) and fit.a + fit.b > 0):
        fit = None
    candidates = distinct if max_accelerators is None else distinct[distinct <= max_accelerators]
    if candidates.size == 0:
        raise NoCandidate(f"no {accelerator_group} configuration measured with at most {max_accelerators:,} accelerators "
                          f"(the smallest has {int(distinct.min()):,})")
    n_ref = float(distinct.min())
    best_at = {float(k): float(t[n == k].min()) for k in distinct}

    if fit is not None:
        def time_of(k: float) -> float:
            return fit.time(k)

        def efficiency_of(k: float) -> float:
            return fit.efficiency(k)[0]
    else:
        def time_of(k: float) -> float:
            return best_at[k]

        def efficiency_of(k: float) -> float:
            # best against best: a planner buys the best software measured at each count
            return (best_at[n_ref] * n_ref) / (best_at[k] * k)

    if deadline_min is not None:
        meeting = [k for k in candidates if time_of(k) <= deadline_min]
        if meeting:
            chosen, reason = float(min(meeting)), f"the smallest measured count that meets the {_minutes(deadline_min)} deadline"
        else:
            chosen = float(min(candidates, key=time_of))
            reason = f"no measured count meets the {_minutes(deadline_min)} deadline: the fastest"
    else:
        good = [k for k in candidates if efficiency_of(k) >= threshold]
        chosen = float(max(good)) if good else float(candidates.min())
        reason = (f"the largest measured count whose efficiency is at least {threshold:g}" if good
                  else f"efficiency is below {threshold:g} at every count but the smallest")
    if max_accelerators is not None and candidates.size < distinct.size:
        reason += f", at most {max_accelerators:,} accelerators"

    time_min = time_of(chosen)
    time_low: float | None = None
    time_high = efficiency_low = efficiency_high = knee = knee_low = knee_high = time_low
    note = None
    if fit is not None:
        basis = BASIS_FIT
        efficiency, efficiency_low, efficiency_high = fit.efficiency(chosen)
        _, time_low, time_high = fit.time_interval(chosen)
        knee, knee_low, knee_high = fit.knee(threshold)
        next_n: float | None = 2 * chosen
        extrapolated: bool | None = 2 * chosen > distinct.max()
        next_time: float | None = fit.time(2 * chosen)
    else:
        basis = BASIS_MEASURED
        efficiency = efficiency_of(chosen)
        larger = distinct[distinct > chosen]
        next_n = float(larger.min()) if larger.size else None
        extrapolated = False if next_n is not None else None
        next_time = best_at[next_n] if next_n is not None else None
        if len(distinct) > 1:
            note = f"no fit: {len(distinct)} distinct accelerator counts, at least {MIN_DISTINCT_COUNTS} are needed"
    saved = extra = None
    if next_n is not None and next_time is not None:
        saved = time_min - next_time
        extra = 100 * ((next_n * next_time) / (chosen * time_min) - 1)
    draft = Recommendation(
        accelerator_group=accelerator_group, basis=basis, threshold=threshold, n_systems=len(n),
        n_distinct_accelerators=len(distinct), reference_accelerators=int(n_ref), max_measured_accelerators=int(distinct.max()),
        accelerators=int(chosen), time_min=time_min, time_min_low=time_low, time_min_high=time_high,
        efficiency=efficiency, efficiency_low=efficiency_low, efficiency_high=efficiency_high,
        measured_time_min=best_at[chosen], accelerator_hours=chosen * time_min / 60,
        next_accelerators=None if next_n is None else int(next_n), next_time_min=next_time, time_saved_min=saved,
        extra_accelerator_hours_pct=extra, next_is_extrapolated=extrapolated, knee=knee, knee_low=knee_low,
        knee_high=knee_high, reason=reason, sentence="",
    )
    if apart:
        left_out = f"left out: {', '.join(apart)}, whose runs take over {SERIES_APART:g}x the others' at the same counts"
        note = f"{note}; {left_out}" if note else left_out
    return Recommendation(**{**asdict(draft), "sentence": _sentence(draft, note)})


def recommendation_table(efficiency: pl.DataFrame, threshold: float = 0.5) -> pl.DataFrame:
    """One recommendation per (round, benchmark, comparable accelerator group) of `efficiency`, no deadline."""
    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (round_name, benchmark, group_name), group in known.sort("accelerators").group_by(
        ["round", "benchmark", "accelerator_group"], maintain_order=True
    ):
        name = benchmark_name(str(benchmark), str(round_name))
        found = recommend(group, str(group_name), threshold)
        rows.append({"round": round_name, "round_order": round_order(str(round_name)), "benchmark": benchmark,
                     "benchmark_canonical": name.canonical_name, "workload": name.workload, **asdict(found)})
    return pl.DataFrame(rows, schema=frame_schema(RecommendationsSchema)).sort("round", "benchmark", "accelerator_group")
