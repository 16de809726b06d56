"""The best time a system of a group reaches at any accelerator count: measured where someone measured it, predicted
elsewhere, and how well the prediction holds (leave-one-count-out backtests).

The predicted quantity is always the same: the best official time to train a system of the comparable group reaches
at N accelerators. Two models predict it, each a *shape* anchored to what was measured:

* `amdahl`: the shape of Amdahl's law, T(N) = A + B / N, fitted by weighted least squares to every system of the group
  (fits.amdahl_fit).
* `two-part`: samples to converge at the batch N implies (the ruleset's RCPs and the group's runs) x seconds per sample
  at N (Amdahl's law on the per-sample time); the one model that can answer for another global batch.

A shape says how time changes between counts; the level comes from the measurements. Between two measured counts the
prediction is the shape scaled to pass through both neighbours' best times (the log ratio interpolated in log N), so
at a measured count it *is* the measured best. Below the smallest count it is scaled to the smallest. Above the largest
it is scaled to the largest and blended, one third in log space, with the last measured segment's own log-log slope:
alone, Amdahl's law extrapolated upwards was 16 % too slow in the median (the largest systems are the best tuned), the
log-log slope 20 % too fast (bench/plan_models.py has every model tried, with its figures).

The interval is calibrated on the backtest (tasks/planning/calibration.py), so a stated 90 % holds about 90 % of the time.

The backtest leaves each measured count of a group out in turn (groups with four counts or more, so that three remain),
predicts the best time there from the others with each model, and records the error, the interval and whether it held
(`plan_backtest`). A count left out takes every system that measured it: a prediction at a measured count is never
made (the planner quotes the measurement there).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS, amdahl_fit, apart_series
from mlperf_scaling.tasks.planning.calibration import Calibration, Group, load_calibration, stratum
from mlperf_scaling.tasks.planning.reach import beyond

MIN_BACKTEST_COUNTS = 4  # distinct counts a group needs before a count can be left out and still leave a model
AMDAHL = "amdahl"
TWO_PART = "two-part"
MODELS = (AMDAHL, TWO_PART)
# Above the largest measured count: the weight of the last segment's log-log slope against the anchored shape
BEYOND_LOGLOG_WEIGHT = 1 / 3
LOGLOG_SLOPES = (-1.2, 0.0)  # the last segment's slope, clipped: time never rises with N, nor falls much faster than 1/N


@functools.cache
def rcp_curve(ruleset: str, benchmark: str) -> tuple[tuple[float, float], ...]:
    """(batch, mean samples or epochs to converge) of the ruleset's pruned RCPs, by batch; empty when it has none."""
    from mlperf_logging.rcp_checker import rcp_checker

    try:
        checker = rcp_checker.RCP_Checker("training", ruleset, benchmark, verbose=False)
    except Exception:  # noqa: BLE001 - no RCPs for this ruleset or benchmark (older rounds, new benchmarks): measured points instead
        return ()
    records = checker.pruned_rcp_data or checker.rcp_data
    return tuple(sorted((float(r["BS"]), float(r["RCP Mean"])) for r in records.values() if r["RCP Mean"] > 0))


def _interpolate(x: float, xs: np.ndarray, ys: np.ndarray) -> tuple[float, bool]:
    """y at x, linear between the points and on the nearest segment beyond them; True when beyond them."""
    if len(xs) == 1:
        return float(ys[0]), x != xs[0]
    if xs[0] <= x <= xs[-1]:
        return float(np.interp(x, xs, ys)), False
    i, j = (0, 1) if x < xs[0] else (-2, -1)
    slope = (ys[j] - ys[i]) / (xs[j] - xs[i])
    return float(max(ys[i] + slope * (x - xs[i]), ys.min() * 0.5)), True


@dataclass(frozen=True)
class ConvergenceModel:
    """Samples (or epochs: the group's own unit) to converge against global batch size."""

    batches: np.ndarray
    samples: np.ndarray
    source: str  # "RCPs of training_X.Y.0" or "measured runs"

    def at(self, batch: float) -> tuple[float, bool]:
        return _interpolate(batch, self.batches, self.samples)


@dataclass(frozen=True)
class TwoPartModel:
    throughput: tuple[float, float]  # (A, B) of Amdahl's law on seconds per sample
    convergence: ConvergenceModel
    counts: np.ndarray  # measured distinct accelerator counts
    global_batches: np.ndarray  # their global batch (median over a count's systems)

    def batch(self, n: float) -> float:
        """The global batch N implies: log-log between the measured counts, the nearest count's beyond them."""
        return float(np.exp(np.interp(math.log(n), np.log(self.counts), np.log(self.global_batches))))

    def minutes(self, n: float, batch: float | None = None) -> float:
        """The shape: minutes at N for the batch N implies (or `batch`)."""
        samples, _ = self.convergence.at(self.batch(n) if batch is None else batch)
        a, b = self.throughput
        return samples * (a + b / n) / 60


def _unit(rows: pl.DataFrame) -> str | None:
    for column in ("samples_to_converge", "epochs_to_converge"):
        if rows[column].drop_nulls().len() == rows.height and (rows[column] > 0).all():
            return column
    return None


def two_part_model(rows: pl.DataFrame, ruleset: str, benchmark: str) -> TwoPartModel | None:
    """The two-part shape of one group's systems (efficiency rows), or None where its logs lack samples or batch sizes."""
    unit = _unit(rows)
    if unit is None or rows["global_batch_size"].null_count() or rows.height < 2 or rows["accelerators"].n_unique() < 2:
        return None
    n = rows["accelerators"].to_numpy().astype(float)
    seconds_per_sample = (rows["time_to_train_min"] * 60 / rows[unit]).to_numpy().astype(float)
    a, b = (float(v[0]) for v in amdahl_fit(n, seconds_per_sample))
    if not (math.isfinite(a) and math.isfinite(b) and a + b > 0):
        return None
    batches = rows["global_batch_size"].to_numpy().astype(float)
    measured = rows[unit].to_numpy().astype(float)
    curve = rcp_curve(ruleset, benchmark)
    by_batch = pl.DataFrame({"b": batches, "s": measured}).group_by("b").agg(pl.col("s").median()).sort("b")
    if len(curve) >= 2:
        xs, ys = np.array([c[0] for c in curve]), np.array([c[1] for c in curve])
        scale = float(np.median([m / _interpolate(b, xs, ys)[0] for b, m in zip(batches, measured, strict=True)]))
        added = by_batch.filter(~pl.col("b").is_in(xs.tolist()))
        points = pl.concat([pl.DataFrame({"b": xs, "s": ys * scale}), added]).sort("b")
        source = f"RCPs of training_{ruleset}" + (f" and the runs at {added.height} more batch size(s)" if added.height else "")
        convergence = ConvergenceModel(points["b"].to_numpy(), points["s"].to_numpy(), source)
    else:
        convergence = ConvergenceModel(by_batch["b"].to_numpy(), by_batch["s"].to_numpy(), "measured runs")
    per_count = pl.DataFrame({"n": n, "batch": batches}).group_by("n").agg(pl.col("batch").median()).sort("n")
    return TwoPartModel((a, b), convergence, per_count["n"].to_numpy(), per_count["batch"].to_numpy())


def best_per_count(rows: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """The measured frontier: each distinct count and the best official time measured there, by count."""
    best = rows.group_by("accelerators").agg(pl.col("time_to_train_min").min()).sort("accelerators")
    return best["accelerators"].to_numpy().astype(float), best["time_to_train_min"].to_numpy().astype(float)


def beyond_ratio(n: float, counts: np.ndarray) -> float:
    """How far outside the measured counts N lies: N / the largest, or the smallest / N; 1 between them."""
    return beyond(n, counts[0], counts[-1])


@dataclass(frozen=True)
class Prediction:
    """The predicted best time at a count, with its stated interval (None where the model was never calibrated)."""

    accelerators: int
    model: str
    time_min: float
    time_min_low: float | None
    time_min_high: float | None
    beyond_ratio: float  # 1: between measured counts
    global_batch: float | None  # the batch the two-part model assumed


@dataclass(frozen=True)
class GroupModel:
    """One group's model: a shape anchored to the measured frontier, and the calibration of its interval."""

    model: str
    counts: np.ndarray  # distinct measured counts the model was made from
    best: np.ndarray  # the best time at each
    shape: Callable[[float], float]
    round: str | None = None  # the round it predicts for (its interval is calibrated without that round)
    calibration: Calibration | None = None
    two_part: TwoPartModel | None = None
    beyond_weight: float = BEYOND_LOGLOG_WEIGHT
    group: Group | None = None  # (benchmark, accelerator group): the round's other groups set its interval's level

    def point(self, n: float) -> float:
        """The predicted best time at N (the measured best at a measured count)."""
        counts, best = self.counts, self.best
        log_n = math.log(n)
        if n <= counts[0]:
            return self.shape(n) * best[0] / self.shape(counts[0])
        if n <= counts[-1]:
            i = int(np.searchsorted(counts, n)) - 1
            i = min(max(i, 0), len(counts) - 2)
            weight = (log_n - math.log(counts[i])) / (math.log(counts[i + 1]) - math.log(counts[i]))
            ratio = (1 - weight) * math.log(best[i] / self.shape(counts[i])) + weight * math.log(best[i + 1] / self.shape(counts[i + 1]))
            return self.shape(n) * math.exp(ratio)
        anchored = self.shape(n) * best[-1] / self.shape(counts[-1])
        slope = (math.log(best[-1]) - math.log(best[-2])) / (math.log(counts[-1]) - math.log(counts[-2]))
        slope = min(max(slope, LOGLOG_SLOPES[0]), LOGLOG_SLOPES[1])
        loglog = best[-1] * (n / counts[-1]) ** slope
        return math.exp((1 - self.beyond_weight) * math.log(anchored) + self.beyond_weight * math.log(loglog))

    def predict(self, n: float, batch: float | None = None) -> Prediction:
        """The prediction at N with its interval; `batch` (two-part only) for another global batch than N implies."""
        point = self.point(n)
        used_batch = None
        if self.two_part is not None:
            used_batch = self.two_part.batch(n) if batch is None else batch
            if batch is not None:
                point *= self.two_part.convergence.at(batch)[0] / self.two_part.convergence.at(self.two_part.batch(n))[0]
        ratio = beyond_ratio(n, self.counts)
        bounds = (self.calibration or load_calibration()).bounds(self.model, ratio, stratum(n, self.counts), self.round, self.group)
        low, high = (None, None) if bounds is None else (point * bounds[0], point * bounds[1])
        return Prediction(int(n), self.model, point, low, high, ratio, used_batch)


    def curve(self, points: int = 16, doublings: int = 2) -> pl.DataFrame:
        """The best time along the measured counts and `doublings` past the largest: each measured count (its measured
        best, no interval) and `points` counts spread evenly in log N between (predicted, with the interval)."""
        grid = np.geomspace(self.counts[0], self.counts[-1] * 2**doublings, points)
        counts = sorted({*self.counts.tolist(), *grid.tolist()})
        rows = []
        for n in counts:
            measured = bool(np.isclose(self.counts, n).any())
            p = self.predict(n)
            rows.append({"accelerators": float(n), "time_min": p.time_min, "time_min_low": None if measured else p.time_min_low,
                         "time_min_high": None if measured else p.time_min_high, "measured": measured, "beyond_ratio": p.beyond_ratio})
        return pl.DataFrame(rows, schema={"accelerators": pl.Float64, "time_min": pl.Float64, "time_min_low": pl.Float64,
                                          "time_min_high": pl.Float64, "measured": pl.Boolean, "beyond_ratio": pl.Float64})


def group_of(rows: pl.DataFrame) -> Group | None:
    """(benchmark, accelerator group) of efficiency rows of one group; None for a bare frame of counts and times."""
    if rows.height and "benchmark" in rows.columns and "accelerator_group" in rows.columns:
        return str(rows["benchmark"][0]), str(rows["accelerator_group"][0])
    return None


def group_model(rows: pl.DataFrame, model: str = AMDAHL, ruleset: str | None = None, benchmark: str | None = None,
                round_name: str | None = None, calibration: Calibration | None = None) -> GroupModel | None:
    """The model of one group's systems (efficiency rows, series apart already left out), or None where it cannot be
    made: fewer than three distinct counts, or (two-part) no samples or batch sizes in the logs."""
    counts, best = best_per_count(rows)
    if len(counts) < MIN_DISTINCT_COUNTS:
        return None
    group = group_of(rows)
    if model == AMDAHL:
        a, b = (float(v[0]) for v in amdahl_fit(rows["accelerators"].to_numpy().astype(float),
                                                 rows["time_to_train_min"].to_numpy().astype(float)))
        if not (math.isfinite(a) and math.isfinite(b) and a + b > 0):
            return None
        return GroupModel(AMDAHL, counts, best, lambda n: a + b / n if a > 0 or b > 0 else 1.0, round_name, calibration, group=group)
    if ruleset is None or benchmark is None:
        raise ValueError("the two-part model needs the ruleset and the benchmark (for its RCPs)")
    two_part = two_part_model(rows, ruleset, benchmark)
    if two_part is None:
        return None
    return GroupModel(TWO_PART, counts, best, two_part.minutes, round_name, calibration, two_part, group=group)


def backtest_group(rows: pl.DataFrame, ruleset: str, benchmark: str, round_name: str | None = None,
                   calibration: Calibration | None = None) -> list[dict]:
    """Leave each measured count out, predict its best time from the others with each model: one row per count and
    model that could be made from the rest."""
    rows, _ = apart_series(rows)
    counts = sorted(set(rows["accelerators"].to_list()))
    if len(counts) < MIN_BACKTEST_COUNTS:
        return []
    found = []
    for count in counts:
        rest = rows.filter(pl.col("accelerators") != count)
        measured = float(rows.filter(pl.col("accelerators") == count)["time_to_train_min"].min())  # type: ignore[arg-type]
        for name in MODELS:
            model = group_model(rest, name, ruleset, benchmark, round_name, calibration)
            if model is None:
                continue
            p = model.predict(float(count))
            covered = None if p.time_min_low is None or p.time_min_high is None else bool(p.time_min_low <= measured <= p.time_min_high)
            found.append({
                "accelerators": int(count), "model": name, "measured_min": measured, "predicted_min": p.time_min,
                "predicted_low_min": p.time_min_low, "predicted_high_min": p.time_min_high,
                "error_pct": 100 * (p.time_min - measured) / measured, "beyond_ratio": p.beyond_ratio,
                "stratum": stratum(float(count), model.counts), "extrapolated": p.beyond_ratio > 1, "covered": covered,
            })
    return found


def backtest_table(efficiency: pl.DataFrame, calibration: Calibration | None = None) -> pl.DataFrame:
    """`plan_backtest` rows for every (round, benchmark, comparable group) of `efficiency` with four counts or more."""
    from mlperf_scaling.contracts.common import frame_schema
    from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema
    from mlperf_scaling.tasks.score.rules import ruleset_name

    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    # every case predicted first: the intervals' level comes from the round's cases in the other groups
    uncalibrated = Calibration({})
    for (round_name, benchmark, group_name), group in known.group_by(["round", "benchmark", "accelerator_group"], maintain_order=True):
        for row in backtest_group(group, ruleset_name(str(round_name)), str(benchmark), str(round_name), uncalibrated):
            rows.append({"round": round_name, "benchmark": benchmark, "accelerator_group": group_name, **row})
    raw = pl.DataFrame(rows, schema=frame_schema(PlanBacktestSchema))
    calibrated = (load_calibration() if calibration is None else calibration).with_backtest(raw)
    return with_intervals(raw, calibrated).sort("round", "benchmark", "accelerator_group", "accelerators", "model")


def with_intervals(backtest: pl.DataFrame, calibration: Calibration) -> pl.DataFrame:
    """Backtest rows with the stated interval of each prediction, and whether it held."""
    low: list[float | None] = []
    high: list[float | None] = []
    for round_name, benchmark, group_name, model, ratio, stratum_name, predicted in backtest.select(
            "round", "benchmark", "accelerator_group", "model", "beyond_ratio", "stratum", "predicted_min").iter_rows():
        bounds = calibration.bounds(model, ratio, stratum_name, round_name, (benchmark, group_name))
        low.append(None if bounds is None else predicted * bounds[0])
        high.append(None if bounds is None else predicted * bounds[1])
    return backtest.with_columns(pl.Series("predicted_low_min", low, pl.Float64), pl.Series("predicted_high_min", high, pl.Float64)).with_columns(
        pl.when(pl.col("predicted_low_min").is_null()).then(None)
        .otherwise(pl.col("measured_min").is_between(pl.col("predicted_low_min"), pl.col("predicted_high_min"))).alias("covered"))


@dataclass(frozen=True)
class BacktestSummary:
    """How one model predicted a group's (or several groups') measured counts, each left out in turn."""

    median_error_pct: float
    cases: int
    covered: int  # cases whose stated interval held the measured time
    with_interval: int


def backtest_summary(backtest: pl.DataFrame) -> dict[str, BacktestSummary]:
    """model -> its summary over backtest rows."""
    found = {}
    for model in MODELS:
        rows = backtest.filter((pl.col("model") == model) & pl.col("error_pct").is_not_null())
        if rows.height:
            held = rows.filter(pl.col("covered").is_not_null())
            found[model] = BacktestSummary(float(np.median(rows["error_pct"].abs().to_numpy())), rows.height,
                                           int(held["covered"].sum()), held.height)
    return found
