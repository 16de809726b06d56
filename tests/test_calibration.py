"""The planner's intervals and errors on the nine shipped rounds: the calibration kept in reference/ is the one the
rounds give, its stated 90 % holds 85-95 % of the cases it never saw, and the derived numbers that cannot be right are
left out with the reason."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from conftest import ROUNDS, read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.tasks.metrics.calibration import BEYOND, WITHIN, Calibration, calibration_rows, conformal_bounds, load_calibration
from mlperf_scaling.tasks.metrics.efficiency import PLAUSIBLE_PART, efficiency_table
from mlperf_scaling.tasks.metrics.predict import AMDAHL, TWO_PART, backtest_table


@pytest.fixture(scope="module")
def shipped():
    scores = pl.concat([read_shipped_round(r)[0].scores for r in ROUNDS], how="diagonal_relaxed")
    efficiency, exclusions = efficiency_table(scores)
    return efficiency, exclusions, backtest_table(efficiency)


def test_the_kept_calibration_is_the_one_the_shipped_rounds_give(shipped):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from calibrate_intervals import TARGET, render

    efficiency, _, _ = shipped
    raw = backtest_table(efficiency, Calibration({}))
    assert raw["predicted_low_min"].is_null().all()  # learnt from predictions that carry no interval yet
    assert render(calibration_rows(raw)) == TARGET.read_text(encoding="utf-8"), "stale: python tools/calibrate_intervals.py data/mlperf.duckdb"
    calibration = load_calibration()
    assert calibration.rounds == set(ROUNDS)
    assert {(model, stratum) for model, stratum, held in calibration.quantiles if not held} == {
        (m, s) for m in (AMDAHL, TWO_PART) for s in (WITHIN, BEYOND)}


def test_the_stated_interval_holds_85_to_95_percent_of_the_cases_it_never_saw(shipped):
    _, _, backtest = shipped
    # every case has an interval, learnt without the case's own round
    assert backtest["covered"].null_count() == 0 and backtest.height == 329 + 268
    for model, cases in ((AMDAHL, 329), (TWO_PART, 268)):
        rows = backtest.filter(pl.col("model") == model)
        coverage = rows["covered"].mean()
        assert rows.height == cases and 0.85 <= coverage <= 0.95, f"{model}: {coverage:.3f}"
        # and on both sides of the measured range alike
        for beyond in (False, True):
            part = rows.filter(pl.col("extrapolated") == beyond)["covered"].mean()
            assert 0.85 <= part <= 0.95, f"{model}, extrapolated={beyond}: {part:.3f}"


def test_the_planners_errors_on_the_shipped_rounds(shipped):
    _, _, backtest = shipped
    amdahl = backtest.filter(pl.col("model") == AMDAHL)
    group_medians = amdahl.group_by("round", "benchmark", "accelerator_group").agg(pl.col("error_pct").abs().median())
    # the issue's targets: median of the 67 groups' medians at most 8 % (was 10.8 %), 90th percentile at most 20 % (was 29 %)
    assert group_medians.height == 67 and group_medians["error_pct"].median() <= 8.0
    p90 = float(np.percentile(amdahl["error_pct"].abs().to_numpy(), 90))
    assert p90 == pytest.approx(22.1, abs=0.1)  # not met: extrapolations past the largest count (bench/plan_models.py)
    inside = amdahl.filter(~pl.col("extrapolated"))
    assert float(np.percentile(inside["error_pct"].abs().to_numpy(), 90)) <= 20.0  # between measured counts it is


def test_no_part_is_outside_its_plausible_range_without_being_empty_and_explained(shipped):
    efficiency, _, _ = shipped
    low, high = PLAUSIBLE_PART
    split = efficiency.filter(pl.col("throughput_part").is_not_null())
    assert split["throughput_part"].is_between(low, high).all() and split["convergence_part"].is_between(low, high).all()
    empty = efficiency.filter(pl.col("throughput_part").is_null())
    assert empty["parts_note"].is_not_null().all()
    baidu = efficiency.filter((pl.col("round") == "v2.1") & (pl.col("submitter") == "Baidu")).row(0, named=True)
    assert baidu["convergence_part"] is None and "outside [0.05, 20.0]" in baidu["parts_note"]
    quanta = efficiency.filter((pl.col("round") == "v3.1") & (pl.col("benchmark") == "unet3d") & (pl.col("system") == "D74H-7U")).row(0, named=True)
    assert quanta["convergence_part"] is None and "convergence part of 154" in quanta["parts_note"]
    tpu = efficiency.filter((pl.col("round") == "v0.7") & (pl.col("benchmark") == "bert") & (pl.col("system") == "tpu-v3-8192-TF")).row(0, named=True)
    assert tpu["throughput_part"] is None and "throughput part of 32.3" in tpu["parts_note"]


def test_tpu_slices_are_counted_in_chips_and_analysed(shipped):
    efficiency, exclusions, _ = shipped
    # v0.5's entry.json gives hosts x the slice's TensorCores (64 x 512 for a tpuv2-512): read as chips, none is left out
    assert exclusions.filter(pl.col("reason").str.starts_with("accelerator count known to be wrong")).height == 0
    v05 = efficiency.filter(pl.col("round") == "v0.5", pl.col("system").str.contains("tpu"))
    counts = dict(zip(v05["system"], v05["accelerators"], strict=True))
    assert counts["resnet-tpuv2-512/tpu"] == 256 and counts["gnmt-tpuv3-32/tpu"] == 16 and counts["ssd-tpuv3-8/tpu"] == 4


@given(st.lists(st.floats(-3, 3), min_size=2, max_size=300))
def test_conformal_bounds_hold_at_least_the_stated_share_of_their_own_cases(z):
    low, high = conformal_bounds(np.array(z))
    inside = sum(low <= value <= high for value in z)
    assert low <= high and inside >= math.floor(0.9 * len(z)) - 1  # the conformal order statistics keep 90 % or more
