"""Why adding accelerators lowers the work each one does: every optimiser step pays an overhead that does not shrink
with the count (the gradients' all-reduce that is not hidden behind the backward pass, the optimiser step, filling
and draining a pipeline, launching the step), while the step's compute is shared among more accelerators.

A step of a language model with a global batch of B tokens on N accelerators computes, on each, W = FLOPs per token x
B / N / the peak FLOP/s: the step's compute at the peak, in seconds. With u_c the utilisation while computing and
tau(N) the overhead of a step in seconds, the utilisation of the whole step is

    1 / u = 1 / u_c + tau(N) / W,    tau(N) = tau_1 x (1 + ln N)

(the overhead grows by one level per e-fold of accelerators, as a tree all-reduce adds a hop per doubling). So the time
to train is the compute at u_c plus steps x tau(N): it never falls below what the number of steps allows, and its
accelerator-hours grow with the count once the overhead is a visible share of the step, as MLPerf's strong scaling
shows (gpt3 on H100 from 0.44 at 256 accelerators to 0.27 at 11,616; llama2_70b_lora from 0.25 at 8 to 0.16 at 1,024).

tau_1 is learnt from the language-model benchmarks measured at two counts or more: within each (benchmark,
accelerator, precision) the utilisation falls with W, and the least squares of 1/u on a constant per cell and
(1 + ln N) / W, weighted by u so that each score counts by its relative error, give tau_1. One is learnt per
accelerator generation (architecture) and shrunk toward every generation's (the least squares of them all) as
n / (n + SHRINK), n its scores in cells measured at two counts or more: a generation measured over a wide range of
counts keeps its own, one measured at a single count takes every generation's. (The median of the generations' own as
the target instead erred more in every backtest, at counts never seen and across benchmarks; so did an overhead that
grows with the parameters each accelerator holds, as an all-reduce's would.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

SHRINK = 10.0  # scores: a generation with this many in cells measured at two counts keeps half of its own overhead


def levels(accelerators: float) -> float:
    """How many levels of the step's overhead N accelerators pay: 1 + ln N."""
    return 1.0 + math.log(max(accelerators, 1.0))


@dataclass(frozen=True)
class StepOverhead:
    """tau_1 in seconds per step and level, pooled and per generation (shrunk), with the scores each was learnt from."""

    pooled: float
    by_architecture: dict[str, tuple[float, int]]  # architecture -> (its tau_1, scores in cells measured at two counts or more)
    scores: int  # the pooled one's

    def per_level(self, architecture: str | None) -> float:
        return self.by_architecture.get(architecture or "", (self.pooled, 0))[0]

    def seconds(self, architecture: str | None, accelerators: float) -> float:
        """A step's overhead on N accelerators of a generation, in seconds."""
        return self.per_level(architecture) * levels(accelerators)

    def basis(self, architecture: str | None) -> str:
        own = self.by_architecture.get(architecture or "", (self.pooled, 0))[1]
        if own:
            return (f"{self.per_level(architecture) * 1e3:.0f} ms per step and level, learnt from {own} {architecture} scores measured "
                    f"at two counts or more (shrunk toward every generation's {self.pooled * 1e3:.0f} ms)")
        return (f"{self.pooled * 1e3:.0f} ms per step and level, every generation's ({self.scores} scores): none measured on "
                f"{architecture or 'it'} at two counts")


def utilisation(compute: float, step_compute_s: float, overhead_s: float, pipeline: float = 1.0) -> float:
    """The utilisation of a whole step: 1 / (1 / (u_c x the pipeline's efficiency) + tau / W)."""
    return 1.0 / (1.0 / (compute * pipeline) + overhead_s / step_compute_s)


def _varied(evidence: pl.DataFrame) -> pl.DataFrame:
    """The scores whose step compute is known, in cells measured at two counts or more."""
    known = evidence.filter(pl.col("step_compute_s").is_not_null() & (pl.col("step_compute_s") > 0))
    cell = ["benchmark", "accelerator_group", "precision"]
    return known.filter(pl.col("accelerators").n_unique().over(cell) >= 2).with_columns(pl.concat_str(cell, separator="|").alias("cell"))


def _least_squares(rows: pl.DataFrame) -> float | None:
    """tau_1 of these scores: 1/u on a constant per cell (over the pipeline's efficiency) and (1 + ln N) / W, weighted by u;
    None without a spread in W."""
    if rows.is_empty():
        return None
    cells = sorted(set(rows["cell"].to_list()))
    index = {c: i for i, c in enumerate(cells)}
    u = rows["mfu_with_attention"].to_numpy()
    design = np.zeros((rows.height, len(cells) + 1))
    design[np.arange(rows.height), [index[c] for c in rows["cell"].to_list()]] = 1.0 / rows["pipeline_efficiency"].to_numpy()
    design[:, -1] = np.array([levels(n) for n in rows["accelerators"].to_list()]) / rows["step_compute_s"].to_numpy()
    solution, *_ = np.linalg.lstsq(design * u[:, None], np.ones(rows.height), rcond=None)  # u x (1/u) = 1
    return max(float(solution[-1]), 0.0)  # an overhead is never negative


def fit_step_overhead(evidence: pl.DataFrame) -> StepOverhead:
    """tau_1 from the language-model evidence (language_model_evidence's columns): every generation's, and each one's
    shrunk toward it."""
    varied = _varied(evidence)
    own = {str(architecture): (value, rows.height) for (architecture,), rows in varied.group_by("architecture")
           if (value := _least_squares(rows)) is not None}
    pooled = _least_squares(varied) or 0.0
    by_architecture = {}
    for architecture, (value, scores) in own.items():
        weight = scores / (scores + SHRINK)
        by_architecture[architecture] = (weight * value + (1 - weight) * pooled, scores)
    return StepOverhead(pooled, dict(sorted(by_architecture.items())), varied.height)


def with_compute_utilisation(evidence: pl.DataFrame, overhead: StepOverhead) -> pl.DataFrame:
    """The evidence with `mfu_compute`, each score's utilisation with its step's overhead and its pipeline's idle share
    taken out (at most 1); a score whose step compute is unknown keeps its own."""
    compute = []
    for u, w, n, architecture, pipeline in evidence.select("mfu_with_attention", "step_compute_s", "accelerators", "architecture",
                                                           "pipeline_efficiency").iter_rows():
        if w is None or w <= 0:
            compute.append(u)
            continue
        inverse = (1.0 / u - overhead.seconds(architecture, n) / w) * pipeline
        compute.append(min(1.0 / inverse, 1.0) if inverse > 1.0 else 1.0)
    return evidence.with_columns(pl.Series("mfu_compute", compute, dtype=pl.Float64))
