"""Why results of one workload scale differently: which covariates go with the accelerator-time a result needed, at
equal accelerator count, from an interpretable model whose variance explained is measured under cross-validation.

Per workload (a benchmark across rounds), the target is log(time to train x accelerators): the accelerator-minutes
a result spent, so at equal N a lower value is a more efficient system. The model is a ridge regression on
standardised features (log2 N and the round's order always; then the accelerator's peak 16-bit FLOP/s, the scale-up
fabric and domain, the network per accelerator, accelerator memory, cooling, precision and, from v6.0, the parallelism
degrees), missing values imputed with an indicator. Folds are grouped by submitter, so a submitter's results never
help predict its own: the variance explained (R^2) is what carries to a submitter the model has not seen. Each
covariate's share is the cross-validated R^2 lost when it alone is left out; never an in-sample fit.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import polars as pl
from sklearn.linear_model import RidgeCV
from sklearn.metrics import r2_score
from sklearn.model_selection import GroupKFold
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.explanations import ExplanationsSchema
from mlperf_scaling.rounds import round_order

BASE = ["log2_accelerators", "round_order"]
NUMERIC = {
    "log2_peak_16bit_tflops": "the accelerator's peak 16-bit FLOP/s (log2)",
    "log2_scale_up_domain": "accelerators on one scale-up fabric (log2)",
    "log2_network_gbit_s_per_accelerator": "scale-out network per accelerator (log2 Gb/s)",
    "accelerator_memory_gb": "memory per accelerator (GB)",
    "log2_tensor_parallelism": "tensor parallelism (log2)",
    "log2_pipeline_parallelism": "pipeline parallelism (log2)",
}
CATEGORICAL = {
    "interconnect_kind": "scale-up fabric",
    "cooling": "cooling",
    "precision_linear": "lowest precision in linear layers",
}
MIN_RESULTS = 15
MIN_SUBMITTERS = 4
MIN_KNOWN = 0.3  # a covariate known for fewer results than this says too little to keep


def _features(context: pl.DataFrame) -> pl.DataFrame:
    order = {name: i for i, name in enumerate(sorted(context["round"].unique().to_list(), key=round_order))}
    log2 = lambda column: pl.when(pl.col(column) > 0).then(pl.col(column).log(2)).otherwise(None)  # noqa: E731
    return context.with_columns(
        (pl.col("time_to_train_min") * pl.col("accelerators")).log().alias("log_accelerator_minutes"),
        pl.col("accelerators").cast(pl.Float64).log(2).alias("log2_accelerators"),
        pl.col("round").replace_strict(order, return_dtype=pl.Float64).alias("round_order"),
        log2("peak_16bit_tflops").alias("log2_peak_16bit_tflops"),
        log2("scale_up_domain").alias("log2_scale_up_domain"),
        log2("network_gbit_s_per_accelerator").alias("log2_network_gbit_s_per_accelerator"),
        log2("tensor_parallelism").alias("log2_tensor_parallelism"),
        log2("pipeline_parallelism").alias("log2_pipeline_parallelism"),
    )


def _design(group: pl.DataFrame, numeric: list[str], categorical: list[str]) -> tuple[np.ndarray, list[str]]:
    """The feature matrix (missing numbers as NaN, categories one-hot with `unknown` for a missing one) and its names."""
    parts = [group.select(pl.col(name).cast(pl.Float64) for name in numeric)] if numeric else []
    for name in categorical:
        parts.append(group.select(pl.col(name).fill_null("unknown")).to_dummies(separator="="))
    frame = pl.concat(parts, how="horizontal")
    return frame.to_numpy().astype(float), frame.columns


ALPHAS = np.logspace(-3, 3, 13)


def reference_model() -> Pipeline:
    """The estimator `ridge` computes, as scikit-learn spells it; the tests hold the two to the same predictions."""
    return make_pipeline(StandardScaler(), RidgeCV(alphas=ALPHAS, gcv_mode="svd"))


@dataclass(frozen=True)
class Ridge:
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray  # on standardised features
    intercept: float

    def predict(self, matrix: np.ndarray) -> np.ndarray:
        return ((matrix - self.mean) / self.scale) @ self.coef + self.intercept


def ridge(matrix: np.ndarray, target: np.ndarray) -> Ridge:
    """Standardised features, then ridge regression with its penalty chosen among ALPHAS by efficient leave-one-out
    (generalised cross-validation on the SVD), as reference_model() does. In closed form: the pipeline costs about
    9 ms a fit in input checks, and the explanations fit it some 700 times."""
    mean = matrix.mean(axis=0)
    variance = matrix.var(axis=0)
    scale = np.sqrt(variance)
    # a column constant but for rounding, as StandardScaler tells it (sklearn.preprocessing._data._is_constant_feature)
    eps, n = np.finfo(np.float64).eps, len(matrix)
    scale[variance <= n * eps * variance + (n * mean * eps) ** 2] = 1.0
    standard = (matrix - mean) / scale
    offset = float(target.mean())
    centred = target - offset
    u, singular, vt = np.linalg.svd(standard, full_matrices=False)
    projected = u.T @ centred
    squared = singular**2
    best_error, best_alpha = math.inf, ALPHAS[0]
    for alpha in ALPHAS:
        shrink = squared / (squared + alpha)
        residual = centred - u @ (shrink * projected)
        leverage = (u**2) @ shrink + 1 / len(target)  # the intercept's share too
        error = float(np.mean((residual / (1 - leverage)) ** 2))
        if error < best_error:
            best_error, best_alpha = error, alpha
    coef = vt.T @ (singular / (squared + best_alpha) * projected)
    return Ridge(mean, scale, coef, offset)


def _imputed(matrix: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Missing values as the training rows' median (0 where they have none), and a 0/1 indicator per column with a
    missing value. By hand: sklearn's SimpleImputer tries to import pandas on every call, which is not installed."""
    missing = np.isnan(matrix)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a column all missing in the training rows: its median is NaN, taken as 0
        medians = np.nan_to_num(np.nanmedian(matrix[train], axis=0))
    filled = np.where(missing, medians, matrix)
    flagged = missing.any(axis=0)
    return np.hstack([filled, missing[:, flagged].astype(float)])


def _cv_r2(group: pl.DataFrame, target: np.ndarray, groups: np.ndarray, numeric: list[str], categorical: list[str], folds: int) -> float:
    matrix, _ = _design(group, numeric, categorical)
    predicted = np.empty(len(target))
    for train, test in GroupKFold(n_splits=folds).split(matrix, target, groups):
        features = _imputed(matrix, train)
        predicted[test] = ridge(features[train], target[train]).predict(features[test])
    return float(r2_score(target, predicted))


def _direction(coefficients: dict[str, float], name: str, categorical: bool) -> tuple[float, str]:
    """(effect, words) of one covariate in the model fitted on every result: standardised log accelerator-minutes."""
    if not categorical:
        coefficient = coefficients[name]
        return coefficient, ("more of it, fewer accelerator-minutes" if coefficient < 0 else "more of it, more accelerator-minutes")
    known = {column.split("=", 1)[1]: value for column, value in coefficients.items()
             if column.startswith(f"{name}=") and column != f"{name}=unknown"}
    if len(known) < 2:
        return 0.0, "one value only"
    best, worst = min(known, key=known.__getitem__), max(known, key=known.__getitem__)
    return known[worst] - known[best], f"{best} fewest accelerator-minutes, {worst} most"


def _known_share(column: pl.Series) -> float:
    return 1 - column.null_count() / column.len()


def _informative(column: pl.Series) -> bool:
    """Known for enough results, and not the same for all of them."""
    return _known_share(column) >= MIN_KNOWN and column.drop_nulls().n_unique() > 1


def workload_results(context: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """(workload, its results with their features) for every workload with enough results from enough submitters."""
    usable = _features(context.filter(pl.col("accelerators") > 0, pl.col("time_to_train_min") > 0))
    return [(str(workload), group) for (workload,), group in usable.group_by(["benchmark_canonical"], maintain_order=True)
            if group.height >= MIN_RESULTS and group["submitter"].n_unique() >= MIN_SUBMITTERS]


def not_modelled_because(results: pl.DataFrame) -> str:
    """Why a workload's results (its result_context rows) have no cross-validated model, in words with their counts:
    too few results or submitters for folds grouped by submitter, or no covariate to explain them with."""
    usable = results.filter(pl.col("accelerators") > 0, pl.col("time_to_train_min") > 0)
    n, submitters = usable.height, usable["submitter"].n_unique()
    if n < MIN_RESULTS or submitters < MIN_SUBMITTERS:
        short = " and ".join(what for what, few in ((f"{n} result{'s' if n != 1 else ''}", n < MIN_RESULTS),
                                                     (f"{submitters} submitter{'s' if submitters != 1 else ''}", submitters < MIN_SUBMITTERS)) if few)
        return (f"not cross-validated: {short}, and a model tested on submitters it has not seen needs at least {MIN_RESULTS} results "
                f"of {MIN_SUBMITTERS} submitters")
    return (f"not cross-validated: no covariate is known for at least {MIN_KNOWN:.0%} of its {n} results and differs among them")


def explain_workload(workload: str, group: pl.DataFrame) -> list[dict]:
    """The rows of one workload: each covariate's cross-validated share, effect and direction."""
    submitters = group["submitter"].n_unique()
    numeric = [name for name in NUMERIC if _informative(group[name])]
    categorical = [name for name in CATEGORICAL if _informative(group[name])]
    target = group["log_accelerator_minutes"].to_numpy()
    groups = group["submitter"].to_numpy()
    folds = min(5, submitters)
    base_r2 = _cv_r2(group, target, groups, BASE, [], folds)
    full_r2 = _cv_r2(group, target, groups, BASE + numeric, categorical, folds)
    matrix, columns = _design(group, BASE + numeric, categorical)
    fitted = ridge(_imputed(matrix, np.arange(len(target))), target)
    coefficients = dict(zip(columns, fitted.coef[: len(columns)], strict=True))
    rounds = sorted(group["round"].unique().to_list(), key=round_order)
    common = {"workload": workload, "rounds": f"{rounds[0]}-{rounds[-1]}" if len(rounds) > 1 else rounds[0],
              "n_results": group.height, "n_submitters": submitters, "folds": folds, "cv_r2_n_only": base_r2, "cv_r2_full": full_r2}
    rows = []
    for name in [*numeric, *categorical]:
        is_categorical = name in categorical
        without = _cv_r2(group, target, groups, BASE + [n for n in numeric if n != name], [c for c in categorical if c != name], folds)
        effect, words = _direction(coefficients, name, is_categorical)
        rows.append({**common, "covariate": name, "covariate_label": (CATEGORICAL if is_categorical else NUMERIC)[name],
                     "known_share": _known_share(group[name]), "cv_r2_share": full_r2 - without,
                     "effect": effect if math.isfinite(effect) else None, "direction": words})
    return rows


def explanation_table(context: pl.DataFrame, rows_per_workload: list[list[dict]] | None = None) -> pl.DataFrame:
    """One row per (workload, covariate) where the workload has enough results from enough submitters;
    `rows_per_workload`: explain_workload's rows, where they were computed elsewhere (on every core)."""
    schema = frame_schema(ExplanationsSchema)
    if rows_per_workload is None:
        rows_per_workload = [explain_workload(workload, group) for workload, group in workload_results(context)]
    rows = [row for rows in rows_per_workload for row in rows]
    return pl.DataFrame(rows, schema=schema) if rows else pl.DataFrame(schema=schema)
