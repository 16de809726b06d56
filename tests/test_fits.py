"""Scaling-law fits: parameters recovered from curves with known answers, thin data refused, real rounds fitted."""

import numpy as np
import polars as pl
import pytest
from conftest import read_shipped_round

from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.metrics.fits import fit_group, fit_table, knee, predicted_efficiency


def test_amdahl_parameters_and_knee_are_recovered():
    n = np.array([8.0, 8, 16, 32, 64, 128, 256, 512])
    t1, p = 4000.0, 0.995
    noise = np.exp(np.random.default_rng(1).normal(0, 0.01, len(n)))
    t = t1 * ((1 - p) + p / n) * noise
    row = fit_group(n, t, "amdahl", 0.7)
    assert row["status"] == "fitted"
    assert row["p"] == pytest.approx(p, abs=0.002) and row["p_stderr"] > 0
    true_knee = knee("amdahl", (t1, p), 8.0, 0.5)
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


def test_efficiency_of_a_fitted_curve_is_one_at_the_reference():
    assert predicted_efficiency("amdahl", (100.0, 0.9), np.array([4.0]), 4.0)[0] == pytest.approx(1.0)


def test_v41_llama2_h100_fit():
    data, _ = read_shipped_round("v4.1")
    efficiency, _ = efficiency_table(data.scores)
    fits = fit_table(efficiency)
    h100 = fits.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_family") == "H100")
                       & (pl.col("model") == "amdahl")).row(0, named=True)
    assert h100["status"] == "fitted" and h100["n_distinct_accelerators"] == 8
    assert 0.99 < h100["p"] < 1 and h100["r2_log"] > 0.95
    assert h100["knee_50_low"] < h100["knee_50"] < h100["knee_50_high"]
    refused = fits.filter(pl.col("status") == "refused")
    assert refused.height > 0 and refused["note"].str.contains("distinct accelerator count").all()
