"""How wide a predicted time's interval must be to hold the truth as often as it says: split-conformal calibration on
the planner's own backtest, learnt from the shipped rounds and set to each round's level by that round's other benchmarks.

Every backtest case (a measured count left out and predicted from the others, tasks/planning/predict.py) gives a log
ratio r = log(measured / predicted). Three strata err differently: a count between measured ones (`within`), one below
the smallest (`below`) and one above the largest (`above`: the largest systems are the best tuned, which nothing
smaller shows, so its errors are about twice those below). Beyond the measured counts the error grows with the
distance, about as log(beyond_ratio) (beyond_ratio = N / the largest measured count, or the smallest / N): a case is
scaled to z = r / scale, scale = BEYOND_OFFSET + log(beyond_ratio) beyond them and 1 within. Per model and stratum,
z_low and z_high are the conformal 5 % and 95 % order statistics of the shipped rounds' cases.

Rounds differ (v2.0's OEM submissions at counts nobody else measured err twice as widely as v3.1's), so those bounds
alone hold the share they state on the rounds they were learnt from, not on a new one. A round's interval is therefore
stretched by lambda: each of the round's backtest cases says how much the bounds must stretch to hold it
(`stretch`), and lambda is the weighted conformal 90 % quantile of the stretches of the round's cases in *other*
groups (never the group predicted, so a case's interval never saw the case), with the shipped rounds' own stretches
(kept at PRIOR_LEVELS quantiles) weighing as much as PRIOR_CASES cases of the round. A round with little evidence is
told by the shipped rounds, one with much by itself.

Both parts are learnt from the shipped rounds and kept in reference/interval_calibration.tsv and
reference/interval_round_prior.tsv (made by `python tools/calibrate_intervals.py WAREHOUSE`; tests/test_calibration.py
checks they are current). A shipped round gets the bounds and the prior learnt without it (its own rows
`held_out_round`), so the coverage the warehouse records for it is out-of-sample too; the coverage on rounds that are
not shipped is measured by tools/out_of_sample_round.py.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from importlib import resources

import numpy as np
import polars as pl

LEVEL = 0.90  # the stated interval
TAIL = (1 - LEVEL) / 2
WITHIN, BELOW, ABOVE = "within", "below", "above"
STRATA = (WITHIN, BELOW, ABOVE)
# Beyond the measured counts, scale = BEYOND_OFFSET + log(beyond_ratio): on the shipped rounds (each left out in turn)
# the interval then holds as often within twice the counts as farther out (with 1 + log it held 98 % near, 88 % far)
BEYOND_OFFSET = 0.5
# What the shipped rounds weigh against a round's own cases in its lambda: chosen on the shipped rounds, each left out
# in turn, as the weight that keeps every round's coverage closest to the level (0: a round with few cases is noisy;
# 40 and more: a round unlike the others keeps the others' width)
PRIOR_CASES = 10.0
PRIOR_LEVELS = 20  # the shipped rounds' stretches kept at the 2.5 %, 7.5 %, ..., 97.5 % quantiles
CALIBRATION_FILE = "interval_calibration.tsv"
CALIBRATION_COLUMNS = ("model", "stratum", "held_out_round", "cases", "z_low", "z_high")
PRIOR_FILE = "interval_round_prior.tsv"
PRIOR_COLUMNS = ("model", "held_out_round", "cases", "stretches")

Group = tuple[str, str]  # (benchmark, accelerator group): a round's cases in other groups set its lambda


def stratum(n: float, counts: np.ndarray) -> str:
    """Where N lies against the measured counts (sorted): within them, below the smallest or above the largest."""
    if n > counts[-1]:
        return ABOVE
    if n < counts[0]:
        return BELOW
    return WITHIN


def scale(beyond_ratio: float) -> float:
    """How much wider the interval is beyond the measured counts: BEYOND_OFFSET + log of how far beyond; 1 within."""
    return 1.0 if beyond_ratio <= 1 else BEYOND_OFFSET + math.log(beyond_ratio)


def conformal_bounds(z: np.ndarray) -> tuple[float, float]:
    """The split-conformal lower and upper order statistics for a two-sided LEVEL interval over n cases: the
    floor(TAIL (n + 1))-th and ceil((1 - TAIL) (n + 1))-th smallest, clipped to the sample."""
    ordered = np.sort(z)
    n = len(ordered)
    low = max(math.floor(TAIL * (n + 1)), 1)
    high = min(math.ceil((1 - TAIL) * (n + 1)), n)
    return float(ordered[low - 1]), float(ordered[high - 1])


def stretch(z: float, z_low: float, z_high: float) -> float:
    """How much [z_low, z_high] (z_low <= 0 <= z_high) must be stretched to hold z: at most 1 when it holds it."""
    if z == 0:
        return 0.0
    bound = z_high if z > 0 else z_low
    return z / bound if bound != 0 else math.inf


def weighted_level(own: np.ndarray, prior: np.ndarray, prior_cases: float = PRIOR_CASES) -> float:
    """The weighted split-conformal LEVEL quantile of the round's own stretches (each weighing 1) and the prior's
    (together weighing `prior_cases`), the case predicted weighing 1 as a case of the round: the smallest stretch with
    LEVEL of the total weight at or below it, clipped to the largest stretch known."""
    values = np.concatenate([own, prior])
    if len(values) == 0:
        return 1.0
    weights = np.concatenate([np.ones(len(own)), np.full(len(prior), prior_cases / len(prior) if len(prior) else 0.0)])
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weights[order])
    at = int(np.searchsorted(cumulative, LEVEL * (cumulative[-1] + 1) - 1e-9))
    return float(values[order][min(at, len(values) - 1)])


@dataclass(frozen=True)
class Calibration:
    """The shipped rounds' bounds, (model, stratum, held-out round or "") -> (z_low, z_high, cases); their stretches,
    (model, held-out round or "") -> the PRIOR_LEVELS quantiles; and the evidence of the rounds being predicted,
    (round, model) -> ((group, stretch), ...) of their backtest cases (with_backtest)."""

    quantiles: dict[tuple[str, str, str], tuple[float, float, int]]
    prior: dict[tuple[str, str], tuple[float, ...]] = field(default_factory=dict)
    evidence: dict[tuple[str, str], tuple[tuple[Group, float], ...]] = field(default_factory=dict)
    _levels: dict[tuple[str, str | None, Group | None], float] = field(default_factory=dict, compare=False, repr=False)

    @functools.cached_property
    def rounds(self) -> frozenset[str]:
        return frozenset(held for _, _, held in self.quantiles if held)

    def held(self, round_name: str | None) -> str:
        """The held-out round whose rows a round is predicted with: itself if shipped, else "" (every shipped round)."""
        return round_name if round_name is not None and round_name in self.rounds else ""

    def z_bounds(self, model: str, stratum_name: str, round_name: str | None = None) -> tuple[float, float] | None:
        found = self.quantiles.get((model, stratum_name, self.held(round_name)))
        return None if found is None else (found[0], found[1])

    def level(self, model: str, round_name: str | None = None, group: Group | None = None) -> float:
        """lambda: the stretch of the bounds for a prediction in `group` of `round_name`, from the round's cases in the
        other groups and the shipped rounds' stretches; 1 where neither is known."""
        key = (model, round_name, group)
        if key not in self._levels:
            own = np.array([s for g, s in self.evidence.get((round_name or "", model), ()) if g != group], dtype=float)
            prior = np.array(self.prior.get((model, self.held(round_name)), ()), dtype=float)
            self._levels[key] = weighted_level(own, prior)
        return self._levels[key]

    def bounds(self, model: str, beyond_ratio: float, stratum_name: str, round_name: str | None = None,
               group: Group | None = None) -> tuple[float, float] | None:
        """(low, high) multipliers of a predicted time; None where the model was never calibrated."""
        found = self.z_bounds(model, stratum_name, round_name)
        if found is None:
            return None
        s = scale(beyond_ratio) * self.level(model, round_name, group)
        return math.exp(found[0] * s), math.exp(found[1] * s)

    def with_backtest(self, backtest: pl.DataFrame) -> Calibration:
        """This calibration with the evidence of the rounds in `backtest` (plan_backtest rows, with or without
        intervals): each case's stretch against its round's bounds."""
        evidence: dict[tuple[str, str], list[tuple[Group, float]]] = {}
        if backtest.height:
            for r in scaled_errors(backtest).iter_rows(named=True):
                found = self.z_bounds(r["model"], r["stratum"], r["round"])
                if found is not None:
                    evidence.setdefault((r["round"], r["model"]), []).append(((r["benchmark"], r["accelerator_group"]), stretch(r["z"], *found)))
        return replace(self, evidence={key: tuple(cases) for key, cases in evidence.items()}, _levels={})


def _read_reference(name: str) -> Iterable[dict[str, str]]:
    text = resources.files("mlperf_scaling.reference").joinpath(name).read_text(encoding="utf-8")
    return csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t")


@functools.cache
def load_calibration() -> Calibration:
    quantiles = {(r["model"], r["stratum"], r["held_out_round"]): (float(r["z_low"]), float(r["z_high"]), int(r["cases"]))
                 for r in _read_reference(CALIBRATION_FILE)}
    prior = {(r["model"], r["held_out_round"]): tuple(float(v) for v in r["stretches"].split()) for r in _read_reference(PRIOR_FILE)}
    return Calibration(quantiles, prior)


def scaled_errors(backtest: pl.DataFrame) -> pl.DataFrame:
    """The backtest's cases with a prediction, each with z (the log ratio over the scale)."""
    cases = backtest.filter(pl.col("predicted_min").is_not_null() & (pl.col("predicted_min") > 0))
    distance = pl.when(pl.col("beyond_ratio") <= 1).then(pl.lit(1.0)).otherwise(BEYOND_OFFSET + pl.col("beyond_ratio").log())
    return cases.with_columns(((pl.col("measured_min") / pl.col("predicted_min")).log() / distance).alias("z"))


def calibration_rows(backtest: pl.DataFrame) -> pl.DataFrame:
    """The bounds from backtest cases of several rounds: per model and stratum, over every round (held_out_round empty)
    and over every round but one, for each round."""
    cases = scaled_errors(backtest)
    rounds = sorted(set(cases["round"].to_list()))
    rows = []
    for (model, stratum_name), group in cases.group_by(["model", "stratum"], maintain_order=True):
        for held in ["", *rounds]:
            z = group.filter(pl.col("round") != held)["z"].to_numpy() if held else group["z"].to_numpy()
            if len(z) < 2:
                continue
            low, high = conformal_bounds(z)
            # an interval holds its own prediction, whatever the sample's signs
            rows.append({"model": model, "stratum": stratum_name, "held_out_round": held, "cases": len(z),
                         "z_low": min(low, 0.0), "z_high": max(high, 0.0)})
    schema = {"model": pl.String, "stratum": pl.String, "held_out_round": pl.String, "cases": pl.Int64, "z_low": pl.Float64, "z_high": pl.Float64}
    return pl.DataFrame(rows, schema=schema).sort("model", "stratum", "held_out_round")


def prior_rows(backtest: pl.DataFrame, bounds: pl.DataFrame) -> pl.DataFrame:
    """The shipped rounds' stretches against the bounds learnt from them (calibration_rows), per model, over every
    round and over every round but one: the PRIOR_LEVELS quantiles a new round's lambda starts from."""
    calibration = Calibration({(r["model"], r["stratum"], r["held_out_round"]): (r["z_low"], r["z_high"], r["cases"])
                               for r in bounds.iter_rows(named=True)})
    cases = scaled_errors(backtest)
    rounds = sorted(set(cases["round"].to_list()))
    levels = (np.arange(PRIOR_LEVELS) + 0.5) / PRIOR_LEVELS
    rows = []
    for (model,), group in cases.group_by(["model"], maintain_order=True):
        for held in ["", *rounds]:
            stretches = []
            for r in group.filter(pl.col("round") != held).iter_rows(named=True):
                found = calibration.quantiles.get((model, r["stratum"], held))
                if found is not None:
                    stretches.append(stretch(r["z"], found[0], found[1]))
            if stretches:
                rows.append({"model": model, "held_out_round": held, "cases": len(stretches),
                             "stretches": tuple(float(v) for v in np.quantile(stretches, levels))})
    return pl.DataFrame(rows, schema={"model": pl.String, "held_out_round": pl.String, "cases": pl.Int64,
                                      "stretches": pl.List(pl.Float64)}).sort("model", "held_out_round")


def coverage(backtest: pl.DataFrame) -> dict[str, tuple[int, int]]:
    """model -> (cases whose stated interval held the measured time, cases with an interval)."""
    with_interval = backtest.filter(pl.col("covered").is_not_null())
    return {str(model): (int(group["covered"].sum()), group.height)
            for (model,), group in with_interval.group_by(["model"], maintain_order=True)}
