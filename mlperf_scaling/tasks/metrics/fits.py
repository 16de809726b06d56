"""Scaling-law fits per (round, benchmark, accelerator family): Amdahl on time, the Universal Scalability Law
on throughput, and from them the accelerator count where predicted efficiency falls below a threshold.

Fitted in log space (relative errors, as times span orders of magnitude) with scipy; uncertainty from the
covariance of the fit, and the threshold count's interval from parameter draws. Groups with fewer than three
distinct accelerator counts are refused: two points fix any two-parameter curve and say nothing.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
from scipy.optimize import OptimizeWarning, brentq, curve_fit

MIN_DISTINCT_COUNTS = 3
SEARCH_LIMIT = 2.0**24  # accelerators; a knee beyond this is reported as none
DRAWS = 400
SEED = 0

FIT_SCHEMA = {
    "round": pl.String, "benchmark": pl.String, "accelerator_family": pl.String, "model": pl.String,
    "status": pl.String, "note": pl.String, "n_points": pl.Int64, "n_distinct_accelerators": pl.Int64,
    "min_accelerators": pl.Int64, "max_accelerators": pl.Int64,
    "t1_min": pl.Float64, "t1_stderr": pl.Float64, "p": pl.Float64, "p_stderr": pl.Float64,
    "g": pl.Float64, "g_stderr": pl.Float64, "a": pl.Float64, "a_stderr": pl.Float64, "b": pl.Float64, "b_stderr": pl.Float64,
    "n_star": pl.Float64, "r2_log": pl.Float64, "rmse_log": pl.Float64,
    "knee_50": pl.Float64, "knee_50_low": pl.Float64, "knee_50_high": pl.Float64,
    "threshold": pl.Float64, "knee_threshold": pl.Float64, "knee_threshold_low": pl.Float64, "knee_threshold_high": pl.Float64,
}


def amdahl_log_time(n, t1, p):
    return np.log(t1 * ((1 - p) + p / n))


def usl_log_time(n, g, a, b):
    # time is 1 / throughput, X(N) = g N / (1 + a (N - 1) + b N (N - 1))
    return -np.log(g * n / (1 + a * (n - 1) + b * n * (n - 1)))


MODELS: dict[str, tuple[Any, tuple[str, ...], tuple[list[float], list[float]]]] = {
    "amdahl": (amdahl_log_time, ("t1_min", "p"), ([1e-9, 0.0], [np.inf, 1.0])),
    "usl": (usl_log_time, ("g", "a", "b"), ([1e-12, 0.0, 0.0], [np.inf, 1.0, np.inf])),
}


def _initial(model: str, n: np.ndarray, t: np.ndarray) -> list[float]:
    smallest = int(np.argmin(n))
    if model == "amdahl":
        return [float(t[smallest] * n[smallest]), 0.9]
    return [float(1 / (t[smallest] * n[smallest])), 0.01, 1e-6]


def predicted_efficiency(model: str, params, n, n_ref: float):
    """Efficiency against the group's reference count, from the fitted time curve."""
    function = MODELS[model][0]
    return np.exp(function(n_ref, *params) - function(n, *params)) / (np.asarray(n) / n_ref)


def knee(model: str, params, n_ref: float, threshold: float) -> float | None:
    """The accelerator count where predicted efficiency falls to `threshold`; None if not before SEARCH_LIMIT."""
    def gap(log_n):
        return float(predicted_efficiency(model, params, math.exp(log_n), n_ref)) - threshold

    low, high = math.log(n_ref), math.log(SEARCH_LIMIT)
    if gap(low) <= 0:
        return n_ref
    if gap(high) > 0:
        return None
    return math.exp(brentq(gap, low, high, xtol=1e-6))


def _interval(model, popt, pcov, bounds, n_ref, threshold) -> tuple[float | None, float | None]:
    if not np.all(np.isfinite(pcov)):
        return None, None
    rng = np.random.default_rng(SEED)
    draws = rng.multivariate_normal(popt, pcov, size=DRAWS, check_valid="ignore")
    draws = np.clip(draws, bounds[0], bounds[1])
    values = [knee(model, draw, n_ref, threshold) for draw in draws]
    finite = [v if v is not None else SEARCH_LIMIT for v in values]
    low, high = np.percentile(finite, [5, 95])
    return float(low), (None if high >= SEARCH_LIMIT else float(high))


def fit_group(n: np.ndarray, t: np.ndarray, model: str, threshold: float) -> dict:
    """Fit one model to one group's (accelerators, minutes) points."""
    function, names, bounds = MODELS[model]
    row: dict = {"model": model, "n_points": len(n), "n_distinct_accelerators": len(set(n.tolist())),
                 "min_accelerators": int(n.min()), "max_accelerators": int(n.max()), "threshold": threshold}
    if row["n_distinct_accelerators"] < MIN_DISTINCT_COUNTS:
        return {**row, "status": "refused", "note": f"{row['n_distinct_accelerators']} distinct accelerator count(s): at least {MIN_DISTINCT_COUNTS} are needed"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            popt, pcov = curve_fit(function, n, np.log(t), p0=_initial(model, n, t), bounds=bounds, maxfev=20000)
        except (RuntimeError, ValueError) as exc:
            return {**row, "status": "refused", "note": f"the fit did not converge: {exc}"}
    residual = np.log(t) - function(n, *popt)
    total = np.sum((np.log(t) - np.log(t).mean()) ** 2)
    stderr = np.sqrt(np.diag(pcov)) if np.all(np.isfinite(pcov)) else [None] * len(names)
    for name, value, error in zip(names, popt, stderr, strict=True):
        row[name] = float(value)
        row[f"{name}_stderr"] = None if error is None else float(error)
    row["r2_log"] = float(1 - np.sum(residual**2) / total) if total > 0 else None
    row["rmse_log"] = float(np.sqrt(np.mean(residual**2)))
    notes = []
    if model == "usl":
        row["n_star"] = float(math.sqrt((1 - popt[1]) / popt[2])) if popt[2] > 0 else None
        if row["n_star"] is None or row["n_star"] > 100 * n.max():
            notes.append("no retrograde scaling in this range (b about 0): the throughput peak N* is not meaningful")
    if model == "amdahl" and popt[1] >= 1 - 1e-9:
        notes.append("p at its bound 1: no serial fraction visible in this range")
    if row["n_points"] <= len(names):
        notes.append("as many parameters as points: no uncertainty")
    if n.max() / n.min() < 4:
        notes.append("accelerator counts span less than 4x: the knee is an extrapolation")
    n_ref = float(n.min())
    for label, level in (("knee_50", 0.5), ("knee_threshold", threshold)):
        row[label] = knee(model, popt, n_ref, level)
        row[f"{label}_low"], row[f"{label}_high"] = _interval(model, popt, pcov, bounds, n_ref, level)
    return {**row, "status": "fitted", "note": "; ".join(notes) or None}


def fit_table(efficiency: pl.DataFrame, threshold: float = 0.5) -> pl.DataFrame:
    """Both models for every (round, benchmark, accelerator family) of `efficiency`."""
    rows = []
    known = efficiency.filter(pl.col("accelerator_family").is_not_null())
    for (round_name, benchmark, family), group in known.sort("accelerators").group_by(
        ["round", "benchmark", "accelerator_family"], maintain_order=True
    ):
        n = group["accelerators"].to_numpy().astype(float)
        t = group["time_to_train_min"].to_numpy().astype(float)
        for model in MODELS:
            rows.append({"round": round_name, "benchmark": benchmark, "accelerator_family": family, **fit_group(n, t, model, threshold)})
    return pl.DataFrame(rows, schema=FIT_SCHEMA).sort("round", "benchmark", "accelerator_family", "model")
