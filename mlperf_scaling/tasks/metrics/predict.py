"""Time to train at any accelerator count, predicted in two parts, and how well it predicts (leave-one-out backtests).

    predicted minutes at N = samples to converge at the batch N implies  x  seconds per sample at N  / 60

* Throughput: the seconds one training sample costs a group's systems, against N, measured from each system's own
  samples to converge and time (tau = 60 T / S); fitted as Amdahl's law on that per-sample time, tau(N) = a + b / N,
  with the same weighted least squares and seeded bootstrap over systems as the Amdahl fit on time (fits.py).
* Convergence: the samples to converge at a global batch size, from the reference convergence points (RCPs) of the
  ruleset in mlperf-logging (`rcp_checker/training_X.Y.0/rcps_<benchmark>.json`), read by the official RCP checker
  itself (its olympic means and its pruning), and interpolated linearly in batch size as it interpolates. RCPs count
  epochs or samples and a run logs samples or epochs: the curve is scaled to the group's own logs (the median ratio of
  a system's logged count to the RCP at its batch). The measured runs add points where the RCPs have none: at a batch
  between (or beyond) the RCPs' batches, the median of the group's own runs at it, unscaled. A run there may need more
  than the line between two RCPs says (v4.1 Llama 2 LoRA on 512 H100: 8,976 samples at batch 64, the RCPs' line
  7,131). Past the last point the last segment is extended, and said; with no RCPs, the measured points are the curve.
* The batch N implies: the measured global batch (median over a count's systems), interpolated in log batch against
  log N between the counts measured; beyond them the nearest count's batch is kept, since how a submitter would grow
  (or cap) the batch past its largest run is not in the data (`--global-batch` names another). Growing it with N at
  the last batch per accelerator instead predicted worse in the backtest: on v4.1 and v5.1 the two-part model beat
  the Amdahl fit on time in 7 of 15 groups that way, 8 with the batch capped at the RCPs' largest, 10 this way.

The backtest leaves each measured count of a group out in turn (groups with four counts or more), predicts its best
time from the rest with this model and with the Amdahl fit on time, and keeps both errors (`plan_backtest`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.fits import RESAMPLES, AmdahlBootstrap, apart_series, bootstrap_amdahl

MIN_BACKTEST_COUNTS = 4  # distinct counts a group needs before a count can be left out and still leave a fit
# A backtest refits every group once per count left out, twice: fewer resamples keep its bounds' cost small
BACKTEST_RESAMPLES = 200
TWO_PART = "two-part"
AMDAHL_TIME = "amdahl on time"


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
    throughput: AmdahlBootstrap  # on seconds per sample
    convergence: ConvergenceModel
    counts: np.ndarray  # measured distinct accelerator counts
    global_batches: np.ndarray  # their global batch (median over a count's systems)

    def batch(self, n: float) -> float:
        """The global batch N implies: log-log between the measured counts, the nearest count's beyond them."""
        return float(np.exp(np.interp(math.log(n), np.log(self.counts), np.log(self.global_batches))))

    def predict(self, n: float, batch: float | None = None) -> tuple[float, float, float, float]:
        """(minutes, low, high, batch) at N: the throughput interval from the bootstrap, the convergence at the batch."""
        batch = self.batch(n) if batch is None else batch
        samples, _ = self.convergence.at(batch)
        point, low, high = self.throughput.time_interval(n)  # seconds per sample
        return samples * point / 60, samples * low / 60, samples * high / 60, batch


def _unit(rows: pl.DataFrame) -> str | None:
    for column in ("samples_to_converge", "epochs_to_converge"):
        if rows[column].drop_nulls().len() == rows.height and (rows[column] > 0).all():
            return column
    return None


def two_part_model(rows: pl.DataFrame, ruleset: str, benchmark: str, resamples: int = RESAMPLES) -> TwoPartModel | None:
    """The model of one group's systems (efficiency rows), or None where its logs lack samples or batch sizes."""
    unit = _unit(rows)
    if unit is None or rows["global_batch_size"].null_count() or rows.height < 2 or rows["accelerators"].n_unique() < 2:
        return None
    n = rows["accelerators"].to_numpy().astype(float)
    seconds_per_sample = (rows["time_to_train_min"] * 60 / rows[unit]).to_numpy().astype(float)
    throughput = bootstrap_amdahl(n, seconds_per_sample, resamples)
    if not (math.isfinite(throughput.a) and math.isfinite(throughput.b) and throughput.a + throughput.b > 0):
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
    return TwoPartModel(throughput, convergence, per_count["n"].to_numpy(), per_count["batch"].to_numpy())


def backtest_group(rows: pl.DataFrame, ruleset: str, benchmark: str) -> list[dict]:
    """Leave each measured count out, predict its best time from the others with both models: one row per count and
    model (predicted null where a model cannot be made from the rest)."""
    rows, _ = apart_series(rows)
    counts = sorted(set(rows["accelerators"].to_list()))
    if len(counts) < MIN_BACKTEST_COUNTS:
        return []
    found = []
    for count in counts:
        held = rows.filter(pl.col("accelerators") == count)
        rest = rows.filter(pl.col("accelerators") != count)
        measured = float(held["time_to_train_min"].to_numpy().min())
        predictions: dict[str, tuple[float, float, float] | None] = {}
        model = two_part_model(rest, ruleset, benchmark, BACKTEST_RESAMPLES)
        predictions[TWO_PART] = model.predict(float(count))[:3] if model is not None else None
        amdahl = bootstrap_amdahl(rest["accelerators"].to_numpy().astype(float), rest["time_to_train_min"].to_numpy().astype(float),
                                  BACKTEST_RESAMPLES)
        predictions[AMDAHL_TIME] = amdahl.time_interval(float(count)) if math.isfinite(amdahl.a) and math.isfinite(amdahl.b) else None
        for name, predicted in predictions.items():
            found.append({
                "accelerators": int(count), "model": name, "measured_min": measured,
                "predicted_min": None if predicted is None else predicted[0],
                "predicted_low_min": None if predicted is None else predicted[1],
                "predicted_high_min": None if predicted is None else predicted[2],
                "error_pct": None if predicted is None else 100 * (predicted[0] - measured) / measured,
                "extrapolated": count in (counts[0], counts[-1]),  # left out at an end: predicted beyond the others
            })
    return found


def backtest_table(efficiency: pl.DataFrame) -> pl.DataFrame:
    """`plan_backtest` rows for every (round, benchmark, comparable group) of `efficiency` with four counts or more."""
    from mlperf_scaling.contracts.common import frame_schema
    from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema
    from mlperf_scaling.tasks.score.rules import ruleset_name

    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (round_name, benchmark, group_name), group in known.group_by(["round", "benchmark", "accelerator_group"], maintain_order=True):
        for row in backtest_group(group, ruleset_name(str(round_name)), str(benchmark)):
            rows.append({"round": round_name, "benchmark": benchmark, "accelerator_group": group_name, **row})
    schema = frame_schema(PlanBacktestSchema)
    return pl.DataFrame(rows, schema=schema).sort("round", "benchmark", "accelerator_group", "accelerators", "model")


def backtest_summary(backtest: pl.DataFrame) -> dict[str, tuple[float, int]]:
    """model -> (median absolute percentage error, counts predicted) of one group's backtest rows."""
    found = {}
    for model in (TWO_PART, AMDAHL_TIME):
        errors = backtest.filter((pl.col("model") == model) & pl.col("error_pct").is_not_null())["error_pct"].abs()
        if errors.len():
            found[model] = (float(np.median(errors.to_numpy())), errors.len())
    return found


def software_gains(efficiency: pl.DataFrame) -> pl.DataFrame:
    """Each round's systems against the previous round's model of the same workload and comparable group: the time
    the Amdahl fit on time of the previous round that measured the group predicts at their N, and measured ÷
    predicted (below 1: faster than last round's systems at that size, the software and system gain). Only where the
    previous round measured the group at three counts or more (a fit)."""
    from mlperf_scaling.contracts.common import frame_schema
    from mlperf_scaling.contracts.software_gains import SoftwareGainsSchema
    from mlperf_scaling.rounds import round_order
    from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS

    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (workload, group_name), group in known.group_by(["benchmark_canonical", "accelerator_group"], maintain_order=True):
        rounds = sorted(set(group["round"].to_list()), key=round_order)
        for earlier, later in zip(rounds, rounds[1:], strict=False):
            fitted, _ = apart_series(group.filter(pl.col("round") == earlier))
            counts = fitted["accelerators"].to_numpy().astype(float)
            if len(np.unique(counts)) < MIN_DISTINCT_COUNTS:
                continue
            model = bootstrap_amdahl(counts, fitted["time_to_train_min"].to_numpy().astype(float), BACKTEST_RESAMPLES)
            if not (math.isfinite(model.a) and math.isfinite(model.b) and model.a + model.b > 0):
                continue
            for row in group.filter(pl.col("round") == later).iter_rows(named=True):
                predicted = model.time(float(row["accelerators"]))
                rows.append({
                    "round": later, "previous_round": earlier, "benchmark_canonical": workload, "accelerator_group": group_name,
                    "benchmark": row["benchmark"], "submitter": row["submitter"], "system": row["system"],
                    "accelerators": row["accelerators"], "measured_min": row["time_to_train_min"], "predicted_min": predicted,
                    "time_ratio": row["time_to_train_min"] / predicted,
                    "extrapolated": not (counts.min() <= row["accelerators"] <= counts.max()),
                })
    return pl.DataFrame(rows, schema=frame_schema(SoftwareGainsSchema)).sort("benchmark_canonical", "accelerator_group", "round",
                                                                             "accelerators", "submitter", "system")
