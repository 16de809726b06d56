"""Scaling-law fits per (round, benchmark, comparable accelerator group): where adding accelerators stops paying.

Amdahl, T(N) = T1 ((1 - p) + p / N) = A + B / N, is fitted by weighted least squares (weights 1 / T^2: relative
errors, as times span orders of magnitude), in closed form, so that its uncertainty can come from a bootstrap over
systems: 1,000 resamples of the group's systems with replacement, seeded, each fitted alike. From it the knee, the
accelerator count where the fitted efficiency falls below 0.5 (and below a threshold the user sets), with its 5-95 %
bootstrap interval. The efficiency is the one of every table: the best time measured at the group's smallest count x
that count, over the fitted time x N (never the fit's own time at the smallest count).

The Universal Scalability Law on throughput, X(N) = g N / (1 + a (N - 1) + b N (N - 1)), is fitted too (scipy, in
log space) for its peak N* = sqrt((1 - a) / b), reported only where the data show one. A fit that means little says
so in `note`, in words, rather than with a number nobody should use. Groups with fewer than three distinct
accelerator counts are refused: two points fix any two-parameter curve and say nothing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

MIN_DISTINCT_COUNTS = 3
RESAMPLES = 1000
SEED = 0
INTERVAL = (5.0, 95.0)  # percentiles of the bootstrap
FAR_BEYOND = 16  # a knee more than this many times the largest measured count is an extrapolation, said in words

FIT_SCHEMA = {
    "round": pl.String, "benchmark": pl.String, "accelerator_group": pl.String, "model": pl.String,
    "status": pl.String, "note": pl.String, "n_points": pl.Int64, "n_distinct_accelerators": pl.Int64,
    "min_accelerators": pl.Int64, "max_accelerators": pl.Int64, "n_bootstrap": pl.Int64,
    "t1_min": pl.Float64, "t1_stderr": pl.Float64, "p": pl.Float64, "p_stderr": pl.Float64,
    "g": pl.Float64, "g_stderr": pl.Float64, "a": pl.Float64, "a_stderr": pl.Float64, "b": pl.Float64, "b_stderr": pl.Float64,
    "n_star": pl.Float64, "r2_log": pl.Float64, "rmse_log": pl.Float64,
    "knee_50": pl.Float64, "knee_50_low": pl.Float64, "knee_50_high": pl.Float64,
    "threshold": pl.Float64, "knee_threshold": pl.Float64, "knee_threshold_low": pl.Float64, "knee_threshold_high": pl.Float64,
}


# --- Amdahl, closed form ----------------------------------------------------------------------------------------


def amdahl_fit(n: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of T = A + B / N by least squares weighted 1 / T^2, A and B kept >= 0, for every row of n and t at once.

    n and t are (resamples, points); a row with a single distinct count gives NaN.
    """
    n, t = np.atleast_2d(n).astype(float), np.atleast_2d(t).astype(float)
    x, w = 1.0 / n, 1.0 / t**2
    sw, swx, swxx = w.sum(axis=1), (w * x).sum(axis=1), (w * x * x).sum(axis=1)
    swy, swxy = (w * t).sum(axis=1), (w * x * t).sum(axis=1)
    det = sw * swxx - swx**2
    with np.errstate(divide="ignore", invalid="ignore"):
        a = (swxx * swy - swx * swxy) / det
        b = (sw * swxy - swx * swy) / det
        # on the boundary: no serial part (A = 0), or no parallel part (B = 0)
        a_zero, b_zero = a < 0, b < 0
        a = np.where(a_zero, 0.0, np.where(b_zero, swy / sw, a))
        b = np.where(a_zero, swxy / swxx, np.where(b_zero, 0.0, b))
    degenerate = np.abs(det) <= 1e-12 * sw * swxx
    return np.where(degenerate, np.nan, a), np.where(degenerate, np.nan, b)


def amdahl_knee(a, b, n_ref: float, t_ref: float, threshold: float):
    """N where T_ref N_ref / (A N + B), the fitted efficiency against the best time measured at N_ref, falls to
    `threshold`; inf where it never does (A = 0), N_ref where it is below already."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        knee = (t_ref * n_ref / threshold - b) / a
    knee = np.where(a <= 0, np.inf, knee)
    return np.maximum(knee, n_ref)


def amdahl_efficiency(a, b, n_ref: float, t_ref: float, n):
    """Fitted efficiency at N: the best time measured at N_ref x N_ref over the fitted time x N."""
    return t_ref * n_ref / (np.asarray(a) * n + np.asarray(b))


def bootstrap_bounds(draws: np.ndarray, fallback: float) -> tuple[float, float]:
    """The 5-95 % interval of bootstrap draws, as order statistics rather than interpolated: each bound is a
    resample's own value, and draws with no knee (inf) leave the upper bound unbounded. `fallback` when no draws."""
    if not draws.size:
        return fallback, fallback
    low, high = np.percentile(draws, INTERVAL, method="inverted_cdf")
    return float(low), float(high)


@dataclass(frozen=True)
class AmdahlBootstrap:
    """The fit of a group and its bootstrap: (A, B) per resample (NaN where a resample had one distinct count)."""

    a: float
    b: float
    n_ref: float
    t_ref: float  # the best time measured at n_ref: the efficiency's reference
    resampled_a: np.ndarray
    resampled_b: np.ndarray

    @property
    def usable(self) -> np.ndarray:
        return np.isfinite(self.resampled_a) & np.isfinite(self.resampled_b)

    def knee(self, threshold: float) -> tuple[float | None, float | None, float | None]:
        """(point, low, high) of the knee; None for a bound the fit does not reach."""
        point = float(amdahl_knee(self.a, self.b, self.n_ref, self.t_ref, threshold))
        draws = amdahl_knee(self.resampled_a[self.usable], self.resampled_b[self.usable], self.n_ref, self.t_ref, threshold)
        low, high = bootstrap_bounds(draws, np.nan)
        return tuple(None if not math.isfinite(v) else float(v) for v in (point, low, high))  # type: ignore[return-value]


def bootstrap_amdahl(n: np.ndarray, t: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> AmdahlBootstrap:
    """Fit a group, then refit it on `resamples` resamples of its systems (with replacement, seeded)."""
    a, b = amdahl_fit(n, t)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(n), size=(resamples, len(n)))
    resampled_a, resampled_b = amdahl_fit(n[picks], t[picks])
    return AmdahlBootstrap(float(a[0]), float(b[0]), float(n.min()), float(t[n == n.min()].min()), resampled_a, resampled_b)


# --- USL, by curve_fit ------------------------------------------------------------------------------------------


def usl_log_time(n, g, a, b):
    # time is 1 / throughput, X(N) = g N / (1 + a (N - 1) + b N (N - 1))
    return -np.log(g * n / (1 + a * (n - 1) + b * n * (n - 1)))


def _usl(n: np.ndarray, t: np.ndarray, row: dict[str, Any], threshold: float) -> dict[str, Any]:
    from scipy.optimize import OptimizeWarning, curve_fit  # scipy only where a USL curve is fitted

    smallest = int(np.argmin(n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            popt, pcov = curve_fit(usl_log_time, n, np.log(t), p0=[float(1 / (t[smallest] * n[smallest])), 0.01, 1e-6],
                                   bounds=([1e-12, 0.0, 0.0], [np.inf, 1.0, np.inf]), maxfev=20000)
        except (RuntimeError, ValueError) as exc:
            return {**row, "status": "refused", "note": f"the fit did not converge: {exc}"}
    stderr = np.sqrt(np.diag(pcov)) if np.all(np.isfinite(pcov)) else [None] * 3
    for name, value, error in zip(("g", "a", "b"), popt, stderr, strict=True):
        row[name] = float(value)
        row[f"{name}_stderr"] = None if error is None else float(error)
    residual = np.log(t) - usl_log_time(n, *popt)
    row.update(_goodness(np.log(t), residual))
    notes = []
    peak = math.sqrt((1 - popt[1]) / popt[2]) if popt[2] > 0 else math.inf
    if peak <= FAR_BEYOND * n.max():
        row["n_star"] = peak
    else:
        notes.append(f"no throughput peak in reach: throughput still grows well beyond the largest count measured ({int(n.max()):,})")
    n_ref = float(n.min())
    t_ref = float(t[n == n_ref].min())
    for label, level in (("knee_50", 0.5), ("knee_threshold", threshold)):
        row[label] = _usl_knee(popt, n_ref, t_ref, level, n.max())
    return {**row, "status": "fitted", "note": "; ".join(notes) or None}


def _usl_knee(popt, n_ref: float, t_ref: float, threshold: float, largest: float) -> float | None:
    grid = np.geomspace(n_ref, FAR_BEYOND * largest, 2000)
    efficiency = t_ref * n_ref / (np.exp(usl_log_time(grid, *popt)) * grid)
    below = np.nonzero(efficiency < threshold)[0]
    return float(grid[below[0]]) if below.size else None


def _goodness(log_t: np.ndarray, residual: np.ndarray) -> dict[str, float | None]:
    total = float(np.sum((log_t - log_t.mean()) ** 2))
    return {"r2_log": 1 - float(np.sum(residual**2)) / total if total > 0 else None, "rmse_log": float(np.sqrt(np.mean(residual**2)))}


# --- a group, a table -------------------------------------------------------------------------------------------


def _amdahl(n: np.ndarray, t: np.ndarray, row: dict[str, Any], threshold: float) -> dict[str, Any]:
    fit = bootstrap_amdahl(n, t)
    if not math.isfinite(fit.a) or not math.isfinite(fit.b) or fit.a + fit.b <= 0:
        return {**row, "status": "refused", "note": "the fit did not converge"}
    usable = fit.usable
    t1, p = fit.a + fit.b, fit.b / (fit.a + fit.b)
    boot_t1 = fit.resampled_a[usable] + fit.resampled_b[usable]
    boot_p = fit.resampled_b[usable] / boot_t1
    row.update({"t1_min": t1, "p": p, "n_bootstrap": int(usable.sum()),
                "t1_stderr": float(np.std(boot_t1)) if usable.any() else None, "p_stderr": float(np.std(boot_p)) if usable.any() else None})
    row.update(_goodness(np.log(t), np.log(t) - np.log(fit.a + fit.b / n)))
    notes = []
    for label, level in (("knee_50", 0.5), ("knee_threshold", threshold)):
        row[label], row[f"{label}_low"], row[f"{label}_high"] = fit.knee(level)
    if fit.a == 0:
        notes.append("no serial part visible (p = 1): in this fit efficiency never falls, so there is no knee")
    elif row["knee_50"] is not None and row["knee_50"] > FAR_BEYOND * n.max():
        notes.append(f"the knee lies far beyond the largest count measured ({int(n.max()):,}): an extrapolation")
    if row["knee_50_high"] is None and row["knee_50"] is not None:
        notes.append("the interval's upper end is beyond reach: some resamples show no knee")
    if n.max() / n.min() < 4:
        notes.append("accelerator counts span less than 4x: the knee is an extrapolation")
    if len(n) <= 3:
        notes.append(f"only {len(n)} systems: a wide interval")
    if usable.sum() < RESAMPLES / 2:
        notes.append("most resamples repeat one accelerator count and cannot be fitted")
    return {**row, "status": "fitted", "note": "; ".join(notes) or None}


def fit_group(n: np.ndarray, t: np.ndarray, model: str, threshold: float) -> dict:
    """Fit one model to one group's (accelerators, minutes) points."""
    row: dict[str, Any] = {"model": model, "n_points": len(n), "n_distinct_accelerators": len(set(n.tolist())),
                           "min_accelerators": int(n.min()), "max_accelerators": int(n.max()), "threshold": threshold}
    if row["n_distinct_accelerators"] < MIN_DISTINCT_COUNTS:
        return {**row, "status": "refused",
                "note": f"{row['n_distinct_accelerators']} distinct accelerator count(s): at least {MIN_DISTINCT_COUNTS} are needed"}
    return _amdahl(n, t, row, threshold) if model == "amdahl" else _usl(n, t, row, threshold)


MODELS = ("amdahl", "usl")


# A submitter whose times, at counts others measured too, are this many times the others' best runs another software
# stack: its series is fitted apart (it is not what the hardware does), and the fit says so
SERIES_APART = 1.5


def apart_series(points: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The group's points without the submitters whose series is clearly apart from the rest (SERIES_APART), and
    their names. v5.1 RetinaNet on B200-SXM: one university's runs take 3.1x the vendors' at 16 GPUs; mixed in, the fit
    predicted 16.4 min at 16 GPUs where a measured system does 12.25."""
    if "submitter" not in points.columns or points["submitter"].n_unique() < 2:
        return points, []
    # in plain Python: groups hold tens of rows, and this runs for every group of every fit, backtest and band
    rows = list(zip(points["submitter"].to_list(), points["accelerators"].to_list(), points["time_to_train_min"].to_list(), strict=True))
    fastest: dict[object, dict[str, float | None]] = {}  # count -> submitter -> its fastest time there (None: no time)
    for submitter, count, minutes in rows:
        at = fastest.setdefault(count, {})
        known = [m for m in (at.get(submitter), minutes) if m is not None]
        at[submitter] = min(known) if known else None
    best_other: list[str] = []
    for submitter in sorted({row[0] for row in rows}):
        ratios = []
        for own, count, minutes in rows:
            if own != submitter:
                continue
            others = [best for other, best in fastest[count].items() if other != submitter]
            if others:  # a count only this submitter measured says nothing; a missing time makes the median unknown
                known = [best for best in others if best is not None]
                ratios.append(minutes / min(known) if minutes is not None and known else math.nan)
        if ratios and float(np.median(ratios)) > SERIES_APART:
            best_other.append(submitter)
    kept = points.filter(~pl.col("submitter").is_in(best_other))
    if kept.height == 0:
        return points, []
    return kept, best_other


def fit_table(efficiency: pl.DataFrame, threshold: float = 0.5) -> pl.DataFrame:
    """Both models for every (round, benchmark, comparable accelerator group) of `efficiency`, each on the group's
    points without the series that are clearly apart (apart_series)."""
    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (round_name, benchmark, group_name), everything in known.sort("accelerators").group_by(
        ["round", "benchmark", "accelerator_group"], maintain_order=True
    ):
        group, _ = apart_series(everything)
        n = group["accelerators"].to_numpy().astype(float)
        t = group["time_to_train_min"].to_numpy().astype(float)
        for model in MODELS:
            rows.append({"round": round_name, "benchmark": benchmark, "accelerator_group": group_name, **fit_group(n, t, model, threshold)})
    return pl.DataFrame(rows, schema=FIT_SCHEMA).sort("round", "benchmark", "accelerator_group", "model")
