"""Learn the planner's interval calibration from a warehouse's rounds and write it to
mlperf_scaling/reference/interval_calibration.tsv and interval_round_prior.tsv (tasks/planning/calibration.py says what
they hold and why).

    python tools/calibrate_intervals.py data/mlperf.duckdb            # write the files, print the coverage they give
    python tools/calibrate_intervals.py data/mlperf.duckdb --check    # exit 1 when a file differs from what it learns

The warehouse's `scores` are analysed again with the code as it is (scores do not depend on the calibration), every
group with four counts or more is backtested without any interval, and per model and stratum the conformal bounds are
learnt over every round and over every round but one, with the rounds' stretches against them (the prior of a round's
level). The coverage printed is out-of-sample, as for a round never seen: each round's cases against the bounds and
prior learnt without that round, at the level its other groups set (nested leave-one-round-out).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.planning.calibration import CALIBRATION_COLUMNS, PRIOR_COLUMNS, Calibration, calibration_rows, prior_rows
from mlperf_scaling.tasks.planning.predict import backtest_table, with_intervals
from mlperf_scaling.warehouse.read import read_stored_scores

REFERENCE = Path(__file__).resolve().parents[1] / "mlperf_scaling" / "reference"
TARGET = REFERENCE / "interval_calibration.tsv"
PRIOR_TARGET = REFERENCE / "interval_round_prior.tsv"
HEADER = ("# The planner's interval calibration (tasks/planning/calibration.py), learnt from the backtests of the rounds listed\n"
          "# as held_out_round by tools/calibrate_intervals.py; an empty held_out_round: learnt from all of them.\n")
PRIOR_HEADER = ("# How far the rounds' backtest cases needed the bounds of interval_calibration.tsv stretched (tasks/planning/calibration.py):\n"
                "# the quantiles a round's level starts from, learnt by tools/calibrate_intervals.py without held_out_round (empty: from all).\n")


def learn(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(the raw backtest, the bounds, the prior) of a set of scores."""
    efficiency, _ = efficiency_table(scores)
    raw = backtest_table(efficiency, Calibration({}))
    bounds = calibration_rows(raw)
    return raw, bounds, prior_rows(raw, bounds)


def render(rows: pl.DataFrame) -> str:
    lines = ["\t".join(CALIBRATION_COLUMNS)]
    for r in rows.iter_rows(named=True):
        lines.append("\t".join([r["model"], r["stratum"], r["held_out_round"], str(r["cases"]), f"{r['z_low']:.6f}", f"{r['z_high']:.6f}"]))
    return HEADER + "\n".join(lines) + "\n"


def render_prior(rows: pl.DataFrame) -> str:
    lines = ["\t".join(PRIOR_COLUMNS)]
    for r in rows.iter_rows(named=True):
        lines.append("\t".join([r["model"], r["held_out_round"], str(r["cases"]), " ".join(f"{v:.4f}" for v in r["stretches"])]))
    return PRIOR_HEADER + "\n".join(lines) + "\n"


def calibration_of(bounds: pl.DataFrame, prior: pl.DataFrame) -> Calibration:
    """The Calibration the two tables make, as load_calibration reads them back from the files."""
    return Calibration({(r["model"], r["stratum"], r["held_out_round"]): (float(f"{r['z_low']:.6f}"), float(f"{r['z_high']:.6f}"), r["cases"])
                        for r in bounds.iter_rows(named=True)},
                       {(r["model"], r["held_out_round"]): tuple(float(f"{v:.4f}") for v in r["stretches"]) for r in prior.iter_rows(named=True)})


def out_of_sample(raw: pl.DataFrame, calibration: Calibration) -> pl.DataFrame:
    """Each case with the interval a round never seen would get: the bounds and prior without its round, at the level of
    its round's other groups."""
    return with_intervals(raw, calibration.with_backtest(raw))


def summary(cases: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """Cases, the share whose interval held, and the 90th percentile of |error| (%), per `by`."""
    return cases.group_by(by).agg(pl.len().alias("cases"), pl.col("covered").mean().round(3).alias("coverage"),
                                  pl.col("error_pct").abs().quantile(0.9, "linear").round(1).alias("p90_abs_error_pct")).sort(by)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    args = parser.parse_args(argv)
    raw, bounds, prior = learn(read_stored_scores(args.warehouse))
    cases = out_of_sample(raw, calibration_of(bounds, prior))
    with pl.Config(tbl_rows=60):
        print(summary(cases, ["model"]))
        print(summary(cases, ["model", "stratum"]))
        per_round = summary(cases, ["model", "round"])
        print(per_round)
    spread = float(np.mean(np.abs(per_round["coverage"].to_numpy() - 0.9)))
    print(f"mean distance of a round's coverage from 90 %: {100 * spread:.1f} points")
    texts = {TARGET: render(bounds), PRIOR_TARGET: render_prior(prior)}
    if args.check:
        stale = [path for path, text in texts.items() if path.read_text(encoding="utf-8") != text]
        print("calibration is current" if not stale else f"calibration differs from {', '.join(map(str, stale))}: run without --check")
        return 1 if stale else 0
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({bounds.height} rows) and {PRIOR_TARGET} ({prior.height} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
