"""K-means clusters of the systems of each (round, benchmark), as in the paper, on standardised
log2(accelerators), log(time to train) and efficiency; k chosen by silhouette."""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl

SEED = 0
K_RANGE = range(2, 7)
CLUSTER_COLUMNS = ["round", "benchmark", "submitter", "system", "cluster", "k", "silhouette", "note"]


def _features(group: pl.DataFrame) -> np.ndarray:
    return np.column_stack(
        [
            np.log2(group.get_column("accelerators").to_numpy().astype(float)),
            np.log(group.get_column("time_to_train_min").to_numpy()),
            group.get_column("paper_e_prime").to_numpy(),
        ]
    )


def choose_clusters(features: np.ndarray) -> tuple[np.ndarray, int, float | None, str | None]:
    """Labels, k, silhouette and a note. Fewer than 3 distinct points: one cluster, no silhouette."""
    # scikit-learn only where systems are clustered, not in every command that imports this module
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import silhouette_score
    from sklearn.preprocessing import StandardScaler

    distinct = len(np.unique(features.round(12), axis=0))
    if distinct < 3:
        return np.zeros(len(features), dtype=int), 1, None, f"{distinct} distinct configuration(s): too few to cluster"
    scaled = StandardScaler().fit_transform(features)
    scaled = np.nan_to_num(scaled)  # a constant feature standardises to 0/0
    best: tuple[float, int, np.ndarray] | None = None
    for k in K_RANGE:
        if k >= distinct:  # silhouette needs 2 <= k <= n_distinct - 1
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            labels = KMeans(n_clusters=k, n_init=10, random_state=SEED).fit_predict(scaled)
        if len(set(labels)) < 2:
            continue
        score = float(silhouette_score(scaled, labels))
        if best is None or score > best[0] + 1e-12:
            best = (score, k, labels)
    if best is None:
        return np.zeros(len(features), dtype=int), 1, None, "no split of the configurations into clusters"
    score, k, labels = best
    return _relabel_by_size(labels, features), k, score, None


def _relabel_by_size(labels: np.ndarray, features: np.ndarray) -> np.ndarray:
    """Number clusters by their median accelerator count, so cluster 0 is the smallest systems."""
    order = sorted(set(labels), key=lambda label: (float(np.median(features[labels == label, 0])), label))
    mapping = {old: new for new, old in enumerate(order)}
    return np.array([mapping[label] for label in labels])


def cluster_table(efficiency: pl.DataFrame) -> pl.DataFrame:
    """One row per system of `efficiency` with its cluster, the k chosen and the silhouette."""
    from threadpoolctl import threadpool_limits

    groups = efficiency.sort("submitter", "system").group_by(["round", "benchmark"], maintain_order=True)
    # Tens of points per fit: a second OpenMP thread has nothing to share, yet spins between k-means' thousands of
    # parallel loops, as much CPU again as the fits (taken from the parsing and drawing workers beside it). The same labels.
    with threadpool_limits(limits=1, user_api="openmp"):
        chosen = [(key, group, choose_clusters(_features(group))) for key, group in groups]
    rows = []
    for (round_name, benchmark), group, (labels, k, score, note) in chosen:
        for (submitter, system), label in zip(group.select("submitter", "system").iter_rows(), labels, strict=True):
            rows.append(
                {
                    "round": round_name,
                    "benchmark": benchmark,
                    "submitter": submitter,
                    "system": system,
                    "cluster": int(label),
                    "k": k,
                    "silhouette": None if score is None or math.isnan(score) else score,
                    "note": note,
                }
            )
    schema = {"round": pl.String, "benchmark": pl.String, "submitter": pl.String, "system": pl.String,
              "cluster": pl.Int64, "k": pl.Int64, "silhouette": pl.Float64, "note": pl.String}
    return pl.DataFrame(rows, schema=schema).sort("round", "benchmark", "submitter", "system")
