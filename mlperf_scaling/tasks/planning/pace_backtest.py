"""The pace's backtest across models: every language-model score predicted with its benchmark left out (and again
with its accelerator left out), at its own count and global batch (`transfer_backtest`), and the interval learnt from
it.

The log ratios ln(measured / predicted utilisation), each benchmark weighing the same, give the 5 % and 95 %
quantiles that make the 90 % interval. In the backtest itself a benchmark's interval is learnt from the others'
backtests without it (nested), so the coverage it records is out of sample. Everything the pace learns (the step
overhead, the utilisation while computing, the changes between precisions) is learnt again without the held-out
group.

Beyond the evidence the answer widens instead of refusing. How far a request lies from what was measured on its
accelerator (its size, its sequence length, a mixture of experts predicted from dense models) is a factor `reach`,
and the backtest records each case's. On the shipped rounds the errors did not grow with it: the cases more than five
times beyond the evidence erred less than the ones within. So the interval is the backtest's within the farthest reach
it saw, and only beyond that are its log bounds multiplied by 1 + ln(reach / the farthest seen), to at most twice. A count beyond the
largest measured on the generation widens it by what the count's own backtest learnt (tasks/planning/scale_backtest.py).
An accelerator with no language model measured is planned from every accelerator, with the interval a second backtest
learns by leaving each accelerator out in turn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from mlperf_scaling.tasks.planning.calibration import LEVEL, conformal_bounds
from mlperf_scaling.tasks.planning.pace import Calibrated, CountBounds, Pace, leaned_on_text, learn, pace
from mlperf_scaling.tasks.planning.work import LORA, LORA_BYTES_PER_PARAMETER, Request

BENCHMARK, ACCELERATOR = "benchmark", "accelerator"  # what a backtest case leaves out: its benchmark, or its accelerator


def request_of(row: dict, accelerators: bool = True) -> Request:
    """A measured score asked for as a request: its size, sequence length, accelerator, precision, count and batch."""
    return Request(row["active_parameters"], row["parameters"], row["seq_len"], row["accelerator_group"], row["precision"],
                   row["accelerators"] if accelerators else None,
                   LORA_BYTES_PER_PARAMETER if row["training"] == LORA else 16, global_batch_tokens=row["global_batch_tokens"])


def predicted_mfu(found: Pace, row: dict) -> float | None:
    """The utilisation a pace predicts for a measured score, at its count and batch (while computing where its batch is
    unknown)."""
    if found.mfu_compute is None:
        return None
    if not row["global_batch_tokens"]:
        return found.mfu_compute
    return found.mfu_at(row["accelerators"], row["global_batch_tokens"])


def _weights(benchmarks: pl.Series) -> np.ndarray:
    """Every benchmark (or accelerator) weighs the same, however many scores it has."""
    counts = benchmarks.value_counts()
    per = dict(zip(counts[benchmarks.name], counts["count"], strict=True))
    return np.array([1.0 / per[b] for b in benchmarks])


def interval_bounds(log_ratios: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """The weighted 5 % and 95 % quantiles of ln(measured / predicted utilisation): the stated interval's ends."""
    order = np.argsort(log_ratios)
    ordered, cumulative = log_ratios[order], np.cumsum(weights[order]) / weights.sum()
    tail = (1 - LEVEL) / 2
    last = len(ordered) - 1
    low = ordered[min(int(np.searchsorted(cumulative, tail)), last)]
    high = ordered[min(int(np.searchsorted(cumulative, 1 - tail)), last)]
    return float(low), float(high)


def time_bounds(predicted: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """A predicted time's interval: time goes as 1 / utilisation, so the measured time is predicted x exp(-log ratio),
    and the log ratio's high end is the time's low end."""
    return predicted * math.exp(-bounds[1]), predicted * math.exp(-bounds[0])


def calibration(backtest: pl.DataFrame, left_out: str = BENCHMARK) -> Calibrated | None:
    """The interval's ends learnt from a backtest's predicted cases (those of one way of leaving out); None where it has
    none."""
    cases = backtest.filter(pl.col("log_ratio").is_not_null() & (pl.col("left_out") == left_out))
    if cases.is_empty():
        return None
    low, high = interval_bounds(cases["log_ratio"].to_numpy(), _weights(cases["held_out"]))
    return Calibrated(low, high, float(cases["reach"].max()))  # type: ignore[arg-type]


def count_bounds(cases: pl.DataFrame) -> CountBounds | None:
    """The count's part of an interval from the count's backtest (scale_backtest): the conformal quantiles of each case's
    log ratio over 1 + ln(its distance beyond the largest count left); None with fewer than ten cases."""
    predicted = cases.filter(pl.col("log_ratio").is_not_null())
    if predicted.height < 10:
        return None
    low, high = conformal_bounds((predicted["log_ratio"] / (1.0 + predicted["count_beyond"].log())).to_numpy())
    return CountBounds(low, high, predicted.height)


_BACKTEST_SCHEMA = {
    "left_out": pl.String, "held_out": pl.String, "benchmark": pl.String, "round": pl.String, "submitter": pl.String, "system": pl.String, "accelerator_group": pl.String,
    "accelerators": pl.Int64, "active_parameters": pl.Float64, "seq_len": pl.Float64, "precision": pl.String,
    "measured_time_min": pl.Float64, "measured_mfu_with_attention": pl.Float64, "predicted_mfu_with_attention": pl.Float64,
    "log_ratio": pl.Float64, "reach": pl.Float64, "count_beyond": pl.Float64, "precision_change": pl.String, "predicted_time_min": pl.Float64,
    "predicted_time_min_low": pl.Float64, "predicted_time_min_high": pl.Float64, "leaned_on": pl.String, "refused": pl.String,
}


def _leave_each_out(evidence: pl.DataFrame, nested: bool, by: str = BENCHMARK, pool: pl.DataFrame | None = None,
                    scale: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every score predicted with its benchmark (or its accelerator) left out. Nested: each case's interval learnt without
    its group too: for a held-out benchmark from the other benchmarks' own backtest; for a held-out accelerator from the
    errors of the other accelerators in `pool` (each predicted without itself, as a jackknife: leaving two out at every
    level would cost the main job seconds for the same figures). `scale`: the count's backtest, whose other benchmarks'
    cases widen a case beyond the counts its fold measured."""
    column = "benchmark" if by == BENCHMARK else "accelerator_group"
    rows = []
    for held_out in sorted(evidence[column].unique().to_list()):
        others = evidence.filter(pl.col(column) != held_out)
        learnt = learn(others)  # the overhead and the factor between precisions learnt without the held-out group too
        count = count_bounds(scale.filter(pl.col(column) != held_out)) if nested and scale is not None and not scale.is_empty() else None
        pools: dict[str, pl.DataFrame] = {}  # the fold's calibration pools, made when a case needs one
        paces: dict[Request, Pace] = {}  # a pace does not depend on the count or the batch: one per model, accelerator and precision
        for row in evidence.filter(pl.col(column) == held_out).iter_rows(named=True):
            model = replace(request_of(row), accelerators=None, global_batch_tokens=None)
            if model not in paces:
                paces[model] = pace(learnt, model)
            found = paces[model]
            predicted = predicted_mfu(found, row)
            bounds = None
            if nested and predicted is not None:
                way = ACCELERATOR if found.pooled else BENCHMARK
                if way not in pools:
                    jackknife = way == ACCELERATOR and by == ACCELERATOR and pool is not None
                    pools[way] = pool.filter(pl.col("held_out") != held_out) if jackknife else _leave_each_out(others, nested=False, by=way)  # type: ignore[union-attr]
                bounds = calibration(pools[way], way)
            case = dict.fromkeys(_BACKTEST_SCHEMA) | {
                "left_out": by, "held_out": held_out, "benchmark": row["benchmark"], "round": row["round"], "submitter": row["submitter"], "system": row["system"],
                "accelerator_group": row["accelerator_group"], "accelerators": row["accelerators"],
                "active_parameters": row["active_parameters"], "seq_len": row["seq_len"], "precision": row["precision"],
                "measured_time_min": row["time_to_train_min"], "measured_mfu_with_attention": row["mfu_with_attention"],
                "predicted_mfu_with_attention": predicted, "leaned_on": leaned_on_text(found.cells) or None,
                "refused": "; ".join(found.refused) or None, "reach": found.reach,
                "count_beyond": found.count_beyond(row["accelerators"]) if not found.refused else None,
                "precision_change": found.change.text if found.change else None,
            }
            if predicted is not None:
                ratio = row["mfu_with_attention"] / predicted
                predicted_time = row["time_to_train_min"] * ratio
                case.update(log_ratio=math.log(ratio), predicted_time_min=predicted_time)
                if bounds is not None:
                    low, high = time_bounds(predicted_time, found.widened(bounds, count, row["accelerators"]))
                    case.update(predicted_time_min_low=low, predicted_time_min_high=high)
            rows.append(case)
    return pl.DataFrame(rows, schema=_BACKTEST_SCHEMA)


def backtest_part(evidence: pl.DataFrame, by: str, scale: pl.DataFrame | None = None) -> pl.DataFrame:
    """One way of leaving out (BENCHMARK or ACCELERATOR), nested: the two are independent, so they can run on two cores."""
    pool = _leave_each_out(evidence, nested=False, by=ACCELERATOR) if by == ACCELERATOR else None
    return _leave_each_out(evidence, nested=True, by=by, pool=pool, scale=scale)


def transfer_backtest(evidence: pl.DataFrame, parts: list[pl.DataFrame] | None = None, scale: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every language-model score predicted with its benchmark left out, and again with its accelerator left out, its 90 %
    interval learnt without it too (nested). `parts`: the two halves as backtest_part made them, elsewhere."""
    both = pl.concat(parts if parts is not None else [backtest_part(evidence, by, scale) for by in (BENCHMARK, ACCELERATOR)])
    return both.with_columns(
        (100 * (pl.col("predicted_time_min") / pl.col("measured_time_min") - 1)).alias("error_pct"),
        pl.col("measured_time_min").is_between(pl.col("predicted_time_min_low"), pl.col("predicted_time_min_high")).alias("covered"),
    )


@dataclass(frozen=True)
class BacktestFigures:
    """What a backtest says, printed beside every answer."""

    cases: int
    refused: int
    median_abs_error_pct: float | None
    covered: int
    with_interval: int
    per_benchmark: dict[str, tuple[int, float, int, int]]  # held out -> (cases, median |error| %, covered, with interval)
    beyond: tuple[int, int] = (0, 0)  # cases beyond the evidence (reach > 1): (covered, with interval)

    @property
    def coverage(self) -> float | None:
        return self.covered / self.with_interval if self.with_interval else None


def _median_abs(values: pl.Series) -> float:
    return float(np.median(np.abs(values.to_numpy())))


def backtest_figures(backtest: pl.DataFrame, left_out: str = BENCHMARK, held_out: str = "held_out") -> BacktestFigures:
    """The figures of one way of leaving out (`left_out`: none where the table has no such column, as scale_backtest),
    per `held_out` column."""
    if "left_out" in backtest.columns:
        backtest = backtest.filter(pl.col("left_out") == left_out)
    predicted = backtest.filter(pl.col("predicted_time_min").is_not_null())
    per = {}
    for (key,), rows in predicted.group_by(held_out):
        with_interval = rows.filter(pl.col("covered").is_not_null())
        per[str(key)] = (rows.height, _median_abs(rows["error_pct"]), int(with_interval["covered"].sum()), with_interval.height)
    with_interval = predicted.filter(pl.col("covered").is_not_null())
    far = with_interval.filter(pl.col("reach") > 1) if "reach" in with_interval.columns else with_interval.filter(pl.col("count_beyond") > 1)
    return BacktestFigures(predicted.height, backtest.height - predicted.height, _median_abs(predicted["error_pct"]) if predicted.height else None,
                           int(with_interval["covered"].sum()), with_interval.height, dict(sorted(per.items())),
                           (int(far["covered"].sum()), far.height))
