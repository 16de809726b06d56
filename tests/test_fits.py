"""Scaling-law fits: parameters recovered from curves with known answers, thin data refused, real rounds fitted."""

import numpy as np
import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given, settings
from hypothesis import strategies as st

from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.metrics.fits import amdahl_efficiency, amdahl_knee, bootstrap_amdahl, fit_group, fit_table

# v4.1 llama2_70b_lora on H100-SXM (20 systems, 4 to 1,024 GPUs): knee and 5-95 % bootstrap bounds, rounded, with the
# efficiency of every table (against the best time measured at 4 GPUs, 58.42 min, not the fit's own 57.6 at 4)
KNEE_LLAMA_H100 = (204, 156, 236)


def test_amdahl_parameters_and_knee_are_recovered():
    n = np.array([8.0, 8, 16, 32, 64, 128, 256, 512])
    t1, p = 4000.0, 0.995
    noise = np.exp(np.random.default_rng(1).normal(0, 0.01, len(n)))
    t = t1 * ((1 - p) + p / n) * noise
    row = fit_group(n, t, "amdahl", 0.7)
    assert row["status"] == "fitted"
    assert row["p"] == pytest.approx(p, abs=0.002) and row["p_stderr"] > 0
    true_knee = float(amdahl_knee(t1 * (1 - p), t1 * p, 8.0, t1 * ((1 - p) + p / 8), 0.5))
    assert row["knee_50_low"] <= true_knee <= row["knee_50_high"]
    assert row["knee_threshold"] < row["knee_50"]  # efficiency falls below 0.7 before it falls below 0.5
    assert row["r2_log"] > 0.99


def test_usl_finds_the_throughput_peak():
    n = np.array([1.0, 2, 4, 8, 16, 32, 64, 128])
    g, a, b = 1.0, 0.02, 0.0005
    t = 1 / (g * n / (1 + a * (n - 1) + b * n * (n - 1)))
    row = fit_group(n, t, "usl", 0.5)
    assert row["b"] == pytest.approx(b, rel=1e-3)
    assert row["n_star"] == pytest.approx(np.sqrt((1 - a) / b), rel=1e-3)
    assert row["note"] is None


def test_thin_data_is_refused_with_the_reason():
    row = fit_group(np.array([8.0, 8.0, 16.0]), np.array([10.0, 11.0, 6.0]), "amdahl", 0.5)
    assert row["status"] == "refused" and row["note"] == "2 distinct accelerator count(s): at least 3 are needed"


def test_a_fitted_curve_s_efficiency_is_against_the_best_time_measured_at_the_reference():
    # T = 10 + 90 / N is 32.5 min at 4; the best system measured there took 30: the efficiency of every table
    assert amdahl_efficiency(10.0, 90.0, 4.0, 30.0, 4.0) == pytest.approx(30 / 32.5)
    assert amdahl_efficiency(10.0, 90.0, 4.0, 30.0, 8.0) == pytest.approx(30 * 4 / (10 * 8 + 90))
    assert float(amdahl_knee(10.0, 90.0, 4.0, 30.0, 0.5)) == pytest.approx((30 * 4 / 0.5 - 90) / 10)


def test_the_bootstrap_is_seeded_and_an_unbounded_knee_says_so():
    n = np.array([4.0, 8, 16, 32])
    t = np.array([100.0, 49, 24, 12])  # better than perfect scaling: no serial part, no knee
    first, second = bootstrap_amdahl(n, t), bootstrap_amdahl(n, t)
    assert np.array_equal(first.resampled_a, second.resampled_a, equal_nan=True)
    assert first.a == 0 and first.knee(0.5) == (None, None, None)
    row = fit_group(n, t, "amdahl", 0.5)
    assert row["knee_50"] is None and "no serial part" in row["note"]


def test_v41_llama2_h100_fit():
    data, _ = read_shipped_round("v4.1")
    efficiency, _ = efficiency_table(data.scores)
    fits = fit_table(efficiency)
    h100 = fits.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM")
                       & (pl.col("model") == "amdahl")).row(0, named=True)
    assert h100["status"] == "fitted" and (h100["n_points"], h100["n_distinct_accelerators"], h100["n_bootstrap"]) == (20, 8, 1000)
    assert 0.99 < h100["p"] < 1 and h100["r2_log"] > 0.95
    # the knee (efficiency below 0.5 against 4 GPUs) and its 5-95 % bootstrap interval over the 20 systems
    assert (round(h100["knee_50"]), round(h100["knee_50_low"]), round(h100["knee_50_high"])) == KNEE_LLAMA_H100
    assert h100["knee_50_low"] < h100["knee_50"] < h100["knee_50_high"]
    refused = fits.filter(pl.col("status") == "refused")
    assert refused.height > 0 and refused["note"].str.contains("distinct accelerator count").all()


@st.composite
def _groups(draw):
    size = draw(st.integers(1, 12))
    times = st.one_of(st.none(), st.sampled_from([1.0, 1.5, 2.0, 3.0]), st.floats(0.1, 100, allow_nan=False))
    return pl.DataFrame({"submitter": draw(st.lists(st.sampled_from("ABCD"), min_size=size, max_size=size)),
                         "accelerators": draw(st.lists(st.sampled_from([1, 2, 4, 8]), min_size=size, max_size=size)),
                         "time_to_train_min": draw(st.lists(times, min_size=size, max_size=size))},
                        schema={"submitter": pl.String, "accelerators": pl.Int64, "time_to_train_min": pl.Float64})


@settings(max_examples=300, deadline=None)
@given(_groups())
def test_a_series_is_apart_exactly_when_its_median_ratio_to_the_others_best_exceeds_the_limit(points):
    # the definition, in polars, against the plain-Python code that runs for every group of every fit and backtest
    from mlperf_scaling.tasks.metrics.fits import SERIES_APART, apart_series

    expected = []
    for submitter in sorted(points["submitter"].unique().to_list()):
        others = points.filter(pl.col("submitter") != submitter).group_by("accelerators").agg(pl.col("time_to_train_min").min().alias("best"))
        shared = points.filter(pl.col("submitter") == submitter).join(others, on="accelerators", how="inner")
        ratio = (shared["time_to_train_min"] / shared["best"]).to_numpy()  # a missing time: NaN, so no verdict
        if shared.height and float(np.median(ratio)) > SERIES_APART:
            expected.append(submitter)
    kept, apart = apart_series(points)
    if points["submitter"].n_unique() < 2 or len(expected) == points["submitter"].n_unique():
        expected = []  # one submitter, or every one apart: nothing to compare against, everything kept
    assert apart == expected
    assert kept.equals(points.filter(~pl.col("submitter").is_in(apart)))
