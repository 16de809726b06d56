"""Learn the planner's interval calibration from a warehouse's rounds and write it to
mlperf_scaling/reference/interval_calibration.tsv (tasks/metrics/calibration.py says what it holds and why).

    python tools/calibrate_intervals.py data/mlperf.duckdb            # write the file, print the coverage it gives
    python tools/calibrate_intervals.py data/mlperf.duckdb --check    # exit 1 when the file differs from what it learns

The warehouse's `scores` are analysed again with the code as it is (scores do not depend on the calibration), every
group with four counts or more is backtested without any interval, and per model and stratum the conformal bounds are
learnt over every round and over every round but one. The coverage printed is out-of-sample: each round's cases against
the bounds learnt without that round.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import polars as pl

from mlperf_scaling.tasks.metrics.calibration import CALIBRATION_COLUMNS, Calibration, calibration_rows
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.metrics.predict import backtest_table
from mlperf_scaling.warehouse.read import read_stored_scores

TARGET = Path(__file__).resolve().parents[1] / "mlperf_scaling" / "reference" / "interval_calibration.tsv"
HEADER = ("# The planner's interval calibration (tasks/metrics/calibration.py), learnt from the backtests of the rounds listed\n"
          "# as held_out_round by tools/calibrate_intervals.py; an empty held_out_round: learnt from all of them.\n")


def learn(scores: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the raw backtest, the calibration rows) of a set of scores."""
    efficiency, _ = efficiency_table(scores)
    raw = backtest_table(efficiency, Calibration({}))
    return raw, calibration_rows(raw)


def render(rows: pl.DataFrame) -> str:
    lines = ["\t".join(CALIBRATION_COLUMNS)]
    for r in rows.iter_rows(named=True):
        lines.append("\t".join([r["model"], r["stratum"], r["held_out_round"], str(r["cases"]), f"{r['z_low']:.6f}", f"{r['z_high']:.6f}"]))
    return HEADER + "\n".join(lines) + "\n"


def out_of_sample_coverage(raw: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    calibration = Calibration({(r["model"], r["stratum"], r["held_out_round"]): (r["z_low"], r["z_high"], r["cases"]) for r in rows.iter_rows(named=True)})
    covered = []
    for r in raw.iter_rows(named=True):
        bounds = calibration.bounds(r["model"], r["beyond_ratio"], r["round"])
        if bounds is not None:
            covered.append({"model": r["model"], "within": r["beyond_ratio"] <= 1,
                            "covered": r["predicted_min"] * bounds[0] <= r["measured_min"] <= r["predicted_min"] * bounds[1]})
    return pl.DataFrame(covered).group_by("model", "within").agg(pl.len().alias("cases"), pl.col("covered").mean().alias("coverage")).sort("model", "within")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse")
    parser.add_argument("--check", action="store_true", help="compare with the file instead of writing it")
    args = parser.parse_args(argv)
    raw, rows = learn(read_stored_scores(args.warehouse))
    text = render(rows)
    print(out_of_sample_coverage(raw, rows))
    if args.check:
        same = TARGET.read_text(encoding="utf-8") == text
        print("calibration is current" if same else f"calibration differs from {TARGET}: run without --check")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET} ({rows.height} rows)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
