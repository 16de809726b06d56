"""The planner's intervals and errors on the nine shipped rounds: the calibration kept in reference/ is the one the
rounds give and sees nothing of a round it is used for, its stated 90 % holds 85-95 % of the cases it never saw (nested
leave-one-round-out: each round as a round never seen), the interval's invariants hold whatever the evidence, and the
derived numbers that cannot be right are left out with the reason."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from conftest import ROUNDS, read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.tasks.metrics.efficiency import PLAUSIBLE_PART, efficiency_table
from mlperf_scaling.tasks.planning.calibration import (
    ABOVE,
    BELOW,
    STRATA,
    WITHIN,
    Calibration,
    calibration_rows,
    conformal_bounds,
    load_calibration,
    prior_rows,
    weighted_level,
)
from mlperf_scaling.tasks.planning.predict import AMDAHL, TWO_PART, backtest_table, group_model


@pytest.fixture(scope="module")
def shipped():
    scores = pl.concat([read_shipped_round(r)[0].scores for r in ROUNDS], how="diagonal_relaxed")
    efficiency, exclusions = efficiency_table(scores)
    raw = backtest_table(efficiency, Calibration({}))
    return efficiency, exclusions, backtest_table(efficiency), raw


def _calibration_tool():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    import calibrate_intervals

    return calibrate_intervals


def test_the_kept_calibration_is_the_one_the_shipped_rounds_give(shipped):
    tool = _calibration_tool()
    _, _, _, raw = shipped
    assert raw["predicted_low_min"].is_null().all()  # learnt from predictions that carry no interval yet
    bounds = calibration_rows(raw)
    stale = "stale: python tools/calibrate_intervals.py data/mlperf.duckdb"
    assert tool.render(bounds) == tool.TARGET.read_text(encoding="utf-8"), stale
    assert tool.render_prior(prior_rows(raw, bounds)) == tool.PRIOR_TARGET.read_text(encoding="utf-8"), stale
    calibration = load_calibration()
    assert calibration.rounds == set(ROUNDS)
    assert {(model, stratum) for model, stratum, held in calibration.quantiles if not held} == {(m, s) for m in (AMDAHL, TWO_PART) for s in STRATA}
    # every interval holds its own prediction on both sides of it (so any case's stretch is finite), and the largest
    # systems beat an extrapolation upwards more than they lose to it
    assert all(low < 0 < high for low, high, _ in calibration.quantiles.values())
    assert calibration.z_bounds(AMDAHL, ABOVE)[0] < calibration.z_bounds(AMDAHL, BELOW)[0]


def test_a_held_out_round_is_seen_by_nothing_it_is_calibrated_with(shipped):
    """The rows a shipped round is predicted with are exactly what the other rounds alone give: no case of the round
    (nor any stretch of it) is in its bounds or its prior."""
    _, _, _, raw = shipped
    bounds = calibration_rows(raw)
    for held in ("v2.1", "v4.0"):
        others = raw.filter(pl.col("round") != held)
        learnt = calibration_rows(others).filter(pl.col("held_out_round") == "").drop("held_out_round")
        kept = bounds.filter(pl.col("held_out_round") == held).drop("held_out_round")
        assert kept.sort("model", "stratum").equals(learnt.sort("model", "stratum"))
        prior = prior_rows(raw, bounds).filter(pl.col("held_out_round") == held)
        assert prior["stretches"].to_list() == prior_rows(others, calibration_rows(others)).filter(pl.col("held_out_round") == "")["stretches"].to_list()


def test_the_stated_interval_holds_85_to_95_percent_of_the_cases_it_never_saw(shipped):
    """Nested leave-one-round-out: each shipped round predicted as a round never seen (the bounds and prior learnt
    without it, its level from its other groups only)."""
    _, _, backtest, _ = shipped
    # every case has an interval, learnt without the case's own round or group
    assert backtest["covered"].null_count() == 0 and backtest.height == 329 + 268
    for model, cases in ((AMDAHL, 329), (TWO_PART, 268)):
        rows = backtest.filter(pl.col("model") == model)
        coverage = rows["covered"].mean()
        assert rows.height == cases and 0.85 <= coverage <= 0.95, f"{model}: {coverage:.3f}"
        # between the measured counts, below and above them alike
        for stratum in STRATA:
            part = rows.filter(pl.col("stratum") == stratum)["covered"].mean()
            assert 0.85 <= part <= 0.95, f"{model}, {stratum}: {part:.3f}"
        # and round by round: every round with 25 cases or more holds 85 % or more (v2.1's Amdahl held 84 % before its
        # level came from its own other groups)
        per_round = rows.group_by("round").agg(pl.len(), pl.col("covered").mean())
        assert per_round.filter(pl.col("len") >= 25)["covered"].min() >= 0.85, per_round
    assert set(backtest.filter(pl.col("extrapolated"))["stratum"]) == {BELOW, ABOVE}
    assert set(backtest.filter(~pl.col("extrapolated"))["stratum"]) == {WITHIN}


def test_the_planners_errors_on_the_shipped_rounds(shipped):
    _, _, backtest, _ = shipped
    amdahl = backtest.filter(pl.col("model") == AMDAHL)
    group_medians = amdahl.group_by("round", "benchmark", "accelerator_group").agg(pl.col("error_pct").abs().median())
    # the issue's targets: median of the 67 groups' medians at most 8 % (was 10.8 %), 90th percentile at most 20 % (was 29 %).
    # The first held (7.8 %) until the v0.7 systems whose accelerator names state no form factor joined their SXM groups:
    # Fujitsu's GX2570M5 is the fastest V100-SXM at 8 in v0.7 (ResNet-50, SSD), which moves those groups' anchors; 8.8 %.
    assert group_medians.height == 67 and group_medians["error_pct"].median() == pytest.approx(8.8, abs=0.1)
    p90 = float(np.percentile(amdahl["error_pct"].abs().to_numpy(), 90))
    assert p90 == pytest.approx(22.1, abs=0.1)  # not met: extrapolations past the largest count (bench/plan_models.py)
    inside = amdahl.filter(~pl.col("extrapolated"))
    assert float(np.percentile(inside["error_pct"].abs().to_numpy(), 90)) <= 20.0  # between measured counts it is


def test_no_part_is_outside_its_plausible_range_without_being_empty_and_explained(shipped):
    efficiency, _, _, _ = shipped
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
    efficiency, exclusions, _, _ = shipped
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


_bounds = st.tuples(st.floats(-2.0, 0.0), st.floats(0.0, 2.0))
_stretches = st.lists(st.floats(0.0, 5.0), max_size=40)


@st.composite
def _calibrations(draw):
    """A calibration of any bounds (z_low <= 0 <= z_high, as calibration_rows keeps them), any prior, and any evidence
    of one round's groups."""
    quantiles = {(AMDAHL, stratum, ""): (*draw(_bounds), 10) for stratum in STRATA}
    prior = {(AMDAHL, ""): tuple(sorted(draw(st.lists(st.floats(0.0, 3.0), min_size=1, max_size=20))))}
    evidence = {("v9.9", AMDAHL): tuple((("b", group), t) for group, t in draw(st.lists(st.tuples(st.sampled_from("PQR"), st.floats(0.0, 5.0)), max_size=30)))}
    return Calibration(quantiles, prior, evidence)


@given(_calibrations(), st.sampled_from(STRATA), st.floats(1.0, 1e4), st.sampled_from([None, ("b", "P"), ("b", "Z")]))
def test_an_interval_always_holds_its_prediction(calibration, stratum, ratio, group):
    low, high = calibration.bounds(AMDAHL, ratio if stratum != WITHIN else 1.0, stratum, "v9.9", group)
    assert 0 < low <= 1 <= high


@given(_calibrations(), st.sampled_from([BELOW, ABOVE]), st.floats(1.0001, 1e3), st.floats(1.0, 100.0))
def test_an_interval_widens_with_the_distance_beyond_the_measured_counts(calibration, stratum, ratio, further):
    near = calibration.bounds(AMDAHL, ratio, stratum, "v9.9")
    far = calibration.bounds(AMDAHL, ratio * further, stratum, "v9.9")
    assert far[0] <= near[0] and near[1] <= far[1]


@given(_calibrations(), st.sampled_from("PQR"), st.lists(st.floats(0.0, 50.0), max_size=10))
def test_a_groups_own_cases_never_set_its_level(calibration, group, more):
    """The level of a prediction in a group comes from the round's other groups: the group's own backtest cases,
    however they erred, change nothing (so a backtest case's interval never saw the case)."""
    key = ("v9.9", AMDAHL)
    added = Calibration(calibration.quantiles, calibration.prior,
                        {key: calibration.evidence[key] + tuple((("b", group), t) for t in more)})
    assert added.level(AMDAHL, "v9.9", ("b", group)) == calibration.level(AMDAHL, "v9.9", ("b", group))


@given(st.lists(st.floats(0.0, 5.0), max_size=40), st.lists(st.floats(0.0, 5.0), min_size=1, max_size=20), st.floats(0.0, 5.0))
def test_a_round_that_errs_more_never_gets_a_narrower_interval(own, prior, worse):
    """A case added to a round's evidence never lowers its level by more than a case's weight allows: one more case
    that erred at least as much as any so far keeps or raises it."""
    prior_array = np.array(prior)
    before = weighted_level(np.array(own), prior_array)
    after = weighted_level(np.array([*own, max([*own, *prior, worse])]), prior_array)
    assert after >= before


def test_the_shipped_rounds_own_level_follows_how_their_other_groups_erred(shipped):
    """v2.1's cases erred the most of the shipped rounds: its level is above the one the other rounds alone would give;
    v0.6's the least: below it."""
    _, _, _, raw = shipped
    calibration = load_calibration().with_backtest(raw)
    alone = Calibration(calibration.quantiles, calibration.prior)  # no evidence of any round: the other rounds' prior only
    assert calibration.level(AMDAHL, "v2.1") > 1 > calibration.level(AMDAHL, "v0.6")
    assert calibration.level(AMDAHL, "v0.6") < alone.level(AMDAHL, "v0.6")


def test_a_prediction_beyond_the_measured_counts_widens_as_it_goes_farther():
    """The planner's own model: the interval holds its point, and its width in log time grows with the distance
    past the largest count (and below the smallest)."""
    counts = np.array([8, 16, 32, 64, 128])
    rows = pl.DataFrame({"accelerators": counts, "time_to_train_min": 2.0 + 800.0 / counts})
    model = group_model(rows, AMDAHL)
    assert model is not None
    widths = []
    for n in (128 * 1.5, 256, 512, 2048, 16384):
        p = model.predict(n)
        assert p.time_min_low <= p.time_min <= p.time_min_high
        widths.append(math.log(p.time_min_high / p.time_min_low))
    assert widths == sorted(widths)
    below = [model.predict(n) for n in (6, 4, 1)]
    assert [math.log(p.time_min_high / p.time_min_low) for p in below] == sorted(math.log(p.time_min_high / p.time_min_low) for p in below)
