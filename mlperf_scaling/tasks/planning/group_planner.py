"""A comparable group as the benchmark planner reads it: the measured evidence at each count (the best system and the
spread), its model where it has three counts or more (tasks/planning/predict.py), the steps an answer speaks of
(measured, or predicted with the calibrated interval), the knee, the warnings, and the counts a deadline or a budget
may choose from. tasks/planning/recommend.py makes the answer from it."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.fits import apart_series
from mlperf_scaling.tasks.planning.calibration import Calibration
from mlperf_scaling.tasks.planning.predict import AMDAHL, BacktestSummary, GroupModel, Prediction, backtest_summary, group_model
from mlperf_scaling.tasks.planning.reach import FAR_BEYOND, WARN_BEYOND, distance_words

MEASURED, PREDICTED = "measured", "predicted"
ROUGH_BACKTEST_PCT = 15.0  # a group whose counts were predicted worse than this (median) gets a warning
KNEE_REACH = 16  # the knee is looked for up to this many times the largest measured count
# How far a deadline or a budget may choose a count nobody measured: as far below the smallest measured count as above
# the largest (two doublings, as the curve). The calibrated interval widens with the distance (calibration.scale), but
# its backtest saw few cases past 4x below, and below the measured counts lies what no submitter tried: a model that may
# not fit in the accelerators' memory, a batch per accelerator larger than any measured.
REACH_BELOW = 4
REACH_ABOVE = 4


class NoCandidate(ValueError):
    """No configuration satisfies the user's limits."""


@dataclass(frozen=True)
class CountEvidence:
    """What was measured at one count of a group: the best system and the spread."""

    accelerators: int
    time_min: float  # the best system's official time
    best_system: str
    n_systems: int
    slowest_system_min: float
    fastest_run_min: float | None  # the best system's fastest and slowest valid runs
    slowest_run_min: float | None
    efficiency: float  # the best system's, against the group's reference
    efficiency_note: str | None = None  # why that efficiency is above 1 (the efficiency table's efficiency_note)

    @property
    def above_one_because(self) -> str | None:
        """The reason an efficiency above 1 has, without the reference it is against: `2.19x the reference's ...`."""
        return above_one_because(self.efficiency_note)


def above_one_because(note: str | None) -> str | None:
    """efficiency_note without its `super-linear against S (N accelerators): ` head: what a sentence quotes."""
    return None if note is None else note.split("): ", 1)[-1]


def measured_evidence(rows: pl.DataFrame) -> dict[int, CountEvidence]:
    """Per measured count of a group's efficiency rows, the evidence there."""
    found = {}
    for (count,), at in rows.sort("accelerators", "time_to_train_min", "submitter", "system").group_by(["accelerators"], maintain_order=True):
        best = at.row(0, named=True)
        found[int(count)] = CountEvidence(
            int(count), float(best["time_to_train_min"]), f"{best['submitter']}/{best['system']}", at.height,
            float(at["time_to_train_min"].max()), best.get("time_to_train_min_low"), best.get("time_to_train_min_high"),  # type: ignore[arg-type]
            float(best["efficiency"]), best.get("efficiency_note"),
        )
    return found


@dataclass(frozen=True)
class Step:
    """One count the answer speaks of: measured (evidence) or predicted (prediction)."""

    accelerators: int
    basis: str
    time_min: float
    time_min_low: float | None
    time_min_high: float | None
    efficiency: float
    efficiency_low: float | None
    efficiency_high: float | None
    evidence: CountEvidence | None = None
    prediction: Prediction | None = None

    @property
    def accelerator_hours(self) -> float:
        return self.accelerators * self.time_min / 60


@dataclass(frozen=True)
class Planner:
    """A group's measured evidence and, with three counts or more, its model: what every answer is made from."""

    accelerator_group: str
    rows: pl.DataFrame  # every system of the group
    evidence: dict[int, CountEvidence]
    model: GroupModel | None
    apart: list[str]  # submitters whose series is left out of the model
    reference_accelerators: int
    reference_time_min: float
    reference_system: str
    backtest: BacktestSummary | None  # of the model, over the group's counts left out in turn

    @property
    def counts(self) -> list[int]:
        return sorted(self.evidence)

    def efficiency(self, time_min: float, n: float) -> float:
        return self.reference_time_min * self.reference_accelerators / (time_min * n)

    def evidence_step(self, n: int) -> Step:
        e = self.evidence[n]
        return Step(n, MEASURED, e.time_min, None, None, e.efficiency, None, None, evidence=e)

    def step(self, n: int, batch: float | None = None) -> Step | None:
        """The count as measured (the evidence) or, where nobody measured it, as predicted; None when neither."""
        if n in self.evidence and batch is None:
            return self.evidence_step(n)
        if self.model is None:
            return None
        return self.predicted_step(self.model.predict(float(n), batch))

    def predicted_step(self, p: Prediction) -> Step:
        """A prediction as a step: its efficiency from the same reference, the interval's slow end the low one."""
        n = p.accelerators
        low_e = None if p.time_min_high is None else self.efficiency(p.time_min_high, n)
        high_e = None if p.time_min_low is None else self.efficiency(p.time_min_low, n)
        return Step(n, PREDICTED, p.time_min, p.time_min_low, p.time_min_high, self.efficiency(p.time_min, n), low_e, high_e, prediction=p)

    def knee(self, threshold: float) -> tuple[float | None, float | None, float | None]:
        """(point, low, high): where the efficiency falls below the threshold for good: the first count past the largest
        measured count still at least that efficient where the best time (predicted between measured counts and beyond
        them) makes it lower; the bounds from the interval's ends. None: not within KNEE_REACH x the largest count
        measured (or no model)."""
        if self.model is None:
            return None, None, None
        efficient = [c for c in self.counts if self.evidence[c].efficiency >= threshold]
        if not efficient:
            return float(self.counts[0]), float(self.counts[0]), float(self.counts[0])
        grid = np.geomspace(max(efficient), self.counts[-1] * KNEE_REACH, 300)
        predictions = [self.model.predict(float(n)) for n in grid]

        def first_below(times: list[float | None]) -> float | None:
            for n, t in zip(grid, times, strict=True):
                if t is not None and self.efficiency(t, n) < threshold:
                    return float(n)
            return None

        return (first_below([p.time_min for p in predictions]), first_below([p.time_min_high for p in predictions]),
                first_below([p.time_min_low for p in predictions]))

    def warning(self, steps: list[Step]) -> str | None:
        """What to be wary of in an answer that quotes these steps, and what would settle it."""
        said = []
        predicted = [s for s in steps if s.basis == PREDICTED]
        if self.backtest is not None and self.backtest.median_error_pct > ROUGH_BACKTEST_PCT:
            settle = f"; a measurement at {predicted[0].accelerators:,} would settle it" if predicted else ""
            said.append(f"this group's measured counts, each left out and predicted from the others, were off by "
                        f"{self.backtest.median_error_pct:.0f} % (median): its predictions are rough{settle}")
        for s in predicted:
            assert s.prediction is not None
            ratio = s.prediction.beyond_ratio
            if ratio >= FAR_BEYOND:
                said.append(distance_words(ratio, f"{s.accelerators:,}", "the counts measured")
                            + f"; only a measurement near {s.accelerators:,} would settle it")
            elif ratio > WARN_BEYOND:
                side = f"the largest count measured ({self.counts[-1]:,})" if s.accelerators > self.counts[-1] else f"the smallest ({self.counts[0]:,})"
                said.append(distance_words(ratio, f"{s.accelerators:,}", side) + f"; a measurement at or near {s.accelerators:,} would settle it")
        return "; ".join(said) or None


def planner(points: pl.DataFrame, accelerator_group: str, ruleset: str | None = None, benchmark: str | None = None,
            round_name: str | None = None, backtest: pl.DataFrame | None = None, calibration: Calibration | None = None) -> Planner:
    """The planner of one group from its efficiency rows; `backtest`: its plan_backtest rows, when known; `calibration`:
    its intervals' (load_calibration().with_backtest of the round's backtest, which sets their level)."""
    if points.height == 0:
        raise NoCandidate(f"no {accelerator_group} configuration measured")
    kept, apart = apart_series(points)
    model = group_model(kept, AMDAHL, ruleset, benchmark, round_name, calibration)
    summary = backtest_summary(backtest).get(AMDAHL) if backtest is not None and backtest.height else None
    first = points.sort("accelerators", "time_to_train_min").row(0, named=True)
    # efficiency rows carry their reference; a bare frame of counts and times (tests, bench) is its own
    reference_time = float(first["reference_time_min"]) if "reference_time_min" in points.columns else float(first["time_to_train_min"])
    reference_system = str(first["reference_system"]) if "reference_system" in points.columns else f"{first['submitter']}/{first['system']}"
    evidence = measured_evidence(points if "efficiency" in points.columns else points.with_columns(
        (reference_time * first["accelerators"] / (pl.col("time_to_train_min") * pl.col("accelerators"))).alias("efficiency")))
    return Planner(accelerator_group, points, evidence, model, apart, int(first["accelerators"]), reference_time, reference_system, summary)


def node_size(rows: pl.DataFrame) -> int:
    """The accelerators in one node of a group's systems: the smallest any of them was built of (its accelerators over
    its nodes); where the rows do not say, the greatest common divisor of the counts measured."""
    if "number_of_nodes" in rows.columns:
        whole = rows.filter((pl.col("number_of_nodes") > 0) & (pl.col("accelerators") % pl.col("number_of_nodes") == 0))
        if whole.height:
            return int((whole["accelerators"] // whole["number_of_nodes"]).min())  # type: ignore[arg-type]
    return math.gcd(*(int(c) for c in rows["accelerators"].unique()))


def search_counts(p: Planner, max_accelerators: int | None = None) -> list[int]:
    """The counts a deadline or a budget chooses from, ascending: every measured count and, with a model, every whole
    number of nodes from REACH_BELOW times below the smallest measured count (but never less than one node) to
    REACH_ABOVE times above the largest; at most `max_accelerators`. A budget below all of them, with a model: the one
    count it buys (budget_count)."""
    counts = set(p.counts)
    if p.model is not None:
        # Whole nodes, not every integer: a count that is not a whole number of nodes is no system anyone buys or rents,
        # and two neighbouring node counts differ by far less than the interval. Not powers of two alone: between 256
        # and 512 lies a factor of two, what a buyer told 512 when 300 would do over-buys. Not a part of a node either:
        # the smallest system of nodes of 4 is 4, and the search says it searched whole nodes.
        node = node_size(p.rows)
        low, high = math.ceil(p.counts[0] / REACH_BELOW), p.counts[-1] * REACH_ABOVE
        counts.update(range(max(node, -(-low // node) * node), high + 1, node))
    within = sorted(c for c in counts if max_accelerators is None or c <= max_accelerators)
    if not within and p.model is not None and max_accelerators is not None:
        within = [budget_count(p, max_accelerators)]
    return within


def budget_count(p: Planner, max_accelerators: int) -> int:
    """What a budget below every count searched buys: whole nodes where it holds one, else the largest power of two
    within it (part of one node); far outside the evidence and warned so (Planner.warning), rather than no answer."""
    node = node_size(p.rows)
    return max_accelerators // node * node if max_accelerators >= node else 2 ** (max_accelerators.bit_length() - 1)


def is_budget_count(p: Planner, candidates: list[int]) -> bool:
    """Whether search_counts gave only the one count a budget below the search buys (budget_count)."""
    return len(candidates) == 1 and candidates[0] not in p.evidence and p.model is not None and (
        candidates[0] < math.ceil(p.counts[0] / REACH_BELOW) or candidates[0] < node_size(p.rows))
