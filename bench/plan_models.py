"""The planner's models against each other, on the same backtest: every group with four distinct accelerator counts or
more, each count left out in turn (with every system that measured it) and its best time predicted from the others.

    uv run python bench/plan_models.py                      # the warehouse of the main job (data/mlperf.duckdb)
    uv run python bench/plan_models.py --warehouse W --rounds v4.1 v5.1

Prints, per model: the cases it could predict, the median and 90th percentile of |error|, the median of the groups'
median |error| (the issue's two targets: at most 8 % and 20 %), the median signed error (bias), and the 90th percentile
between measured counts and beyond them. `planner` is what the product uses (tasks/planning/predict.py); the others
are what was tried on the way, kept here so the choice can be checked again on new rounds. bench/README.md has the
figures of the nine shipped rounds.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.metrics.fits import amdahl_fit, apart_series
from mlperf_scaling.tasks.planning.calibration import Calibration
from mlperf_scaling.tasks.planning.predict import (
    AMDAHL,
    LOGLOG_SLOPES,
    MIN_BACKTEST_COUNTS,
    TWO_PART,
    GroupModel,
    best_per_count,
    group_model,
    two_part_model,
)
from mlperf_scaling.tasks.score.rules import ruleset_name
from mlperf_scaling.warehouse.read import read_stored_scores

Model = Callable[[pl.DataFrame, float, dict], float | None]


def _amdahl(n: np.ndarray, t: np.ndarray) -> Callable[[float], float]:
    a, b = (float(v[0]) for v in amdahl_fit(n, t))
    return lambda x: a + b / x


def amdahl_on_every_system(rest: pl.DataFrame, count: float, _: dict) -> float:
    """The planner until this change: Amdahl's law on every system's time, unanchored."""
    return _amdahl(rest["accelerators"].to_numpy().astype(float), rest["time_to_train_min"].to_numpy().astype(float))(count)


def amdahl_on_the_frontier(rest: pl.DataFrame, count: float, _: dict) -> float:
    """Amdahl's law on the best time per count only."""
    return _amdahl(*best_per_count(rest))(count)


def two_part_unanchored(rest: pl.DataFrame, count: float, context: dict) -> float | None:
    """The two-part model until this change: samples at the batch N implies x seconds per sample, unanchored."""
    model = two_part_model(rest, context["ruleset"], context["benchmark"])
    return None if model is None else model.minutes(count)


def loglog_interpolation(rest: pl.DataFrame, count: float, _: dict) -> float:
    """The best times joined in log-log, the nearest segment's slope beyond them (clipped as the planner clips it)."""
    n, t = best_per_count(rest)
    x, ln, lt = math.log(count), np.log(n), np.log(t)
    if ln[0] <= x <= ln[-1]:
        return float(np.exp(np.interp(x, ln, lt)))
    i, j = (0, 1) if x < ln[0] else (-2, -1)
    slope = min(max((lt[j] - lt[i]) / (ln[j] - ln[i]), LOGLOG_SLOPES[0]), LOGLOG_SLOPES[1])
    base = i if x < ln[0] else j
    return float(np.exp(lt[base] + slope * (x - ln[base])))


def power_law(rest: pl.DataFrame, count: float, _: dict) -> float:
    """One power law T = c N^-k through the best times."""
    n, t = best_per_count(rest)
    return float(np.exp(np.polyval(np.polyfit(np.log(n), np.log(t), 1), math.log(count))))


def _anchored(weight: float) -> Model:
    def model(rest: pl.DataFrame, count: float, _: dict) -> float | None:
        found = group_model(rest, AMDAHL, calibration=Calibration({}))
        if found is None:
            return None
        return GroupModel(found.model, found.counts, found.best, found.shape, calibration=Calibration({}),
                          beyond_weight=weight).point(count)
    model.__doc__ = f"the Amdahl shape anchored to the best times, blended {weight:.2f} with the last segment's slope beyond"
    return model


def planner(model_name: str) -> Model:
    def model(rest: pl.DataFrame, count: float, context: dict) -> float | None:
        found = group_model(rest, model_name, context["ruleset"], context["benchmark"], calibration=Calibration({}))
        return None if found is None else found.point(count)
    model.__doc__ = f"the planner's {model_name} model, as shipped"
    return model


MODELS: dict[str, Model] = {
    "planner amdahl": planner(AMDAHL),
    "planner two-part": planner(TWO_PART),
    "amdahl, every system (before)": amdahl_on_every_system,
    "two-part, unanchored (before)": two_part_unanchored,
    "amdahl, best per count only": amdahl_on_the_frontier,
    "amdahl anchored, no blend": _anchored(0.0),
    "amdahl anchored, blend 1/2": _anchored(0.5),
    "amdahl anchored, blend 2/3": _anchored(2 / 3),
    "log-log interpolation": loglog_interpolation,
    "one power law": power_law,
}


def cases(efficiency: pl.DataFrame):
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (round_name, benchmark, group), rows in known.group_by(["round", "benchmark", "accelerator_group"], maintain_order=True):
        rows, _ = apart_series(rows)
        counts = sorted(set(rows["accelerators"].to_list()))
        if len(counts) < MIN_BACKTEST_COUNTS:
            continue
        for count in counts:
            rest = rows.filter(pl.col("accelerators") != count)
            yield {"round": round_name, "benchmark": benchmark, "group": group, "count": count, "rest": rest,
                   "measured": float(rows.filter(pl.col("accelerators") == count)["time_to_train_min"].min()),  # type: ignore[arg-type]
                   "beyond": count in (counts[0], counts[-1]),
                   "context": {"ruleset": ruleset_name(str(round_name)), "benchmark": str(benchmark)}}


def compare(efficiency: pl.DataFrame) -> pl.DataFrame:
    rows = []
    for case in cases(efficiency):
        for name, model in MODELS.items():
            predicted = model(case["rest"], float(case["count"]), case["context"])
            if predicted is not None and math.isfinite(predicted) and predicted > 0:
                rows.append({"model": name, "round": case["round"], "benchmark": case["benchmark"], "group": case["group"],
                             "beyond": case["beyond"], "error_pct": 100 * (predicted - case["measured"]) / case["measured"]})
    found = pl.DataFrame(rows)
    groups = found.group_by("model", "round", "benchmark", "group").agg(pl.col("error_pct").abs().median().alias("m"))
    order = {name: i for i, name in enumerate(MODELS)}
    return (found.group_by("model").agg(
        pl.len().alias("cases"), pl.col("error_pct").abs().median().alias("median %"),
        pl.col("error_pct").abs().quantile(0.9, "linear").alias("p90 %"), pl.col("error_pct").median().alias("bias %"),
        pl.col("error_pct").filter(~pl.col("beyond")).abs().quantile(0.9, "linear").alias("p90 between %"),
        pl.col("error_pct").filter(pl.col("beyond")).abs().quantile(0.9, "linear").alias("p90 beyond %"))
        .join(groups.group_by("model").agg(pl.col("m").median().alias("groups' median %"), pl.len().alias("groups")), on="model")
        .sort(pl.col("model").replace_strict(order)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warehouse", default="data/mlperf.duckdb")
    parser.add_argument("--rounds", nargs="+")
    args = parser.parse_args(argv)
    scores = read_stored_scores(args.warehouse)
    if args.rounds:
        scores = scores.filter(pl.col("round").is_in(args.rounds))
    efficiency, _ = efficiency_table(scores)
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, float_precision=1, tbl_hide_dataframe_shape=True,
                   tbl_hide_column_data_types=True):
        print(compare(efficiency))
    return 0


if __name__ == "__main__":
    sys.exit(main())
