"""The count's backtest: the pace predicted at counts it never saw, on the language-model benchmarks measured over a
wide range of counts (`scale_backtest`).

For each (benchmark, accelerator group, precision) measured at three counts or more spanning four times or more, the
counts above the geometric middle of its range are hidden, and with them every score of the accelerator's generation
at those counts (any benchmark): the step overhead and the utilisation while computing are learnt from what is left,
the benchmark's own smaller counts among it, and each hidden score is predicted at its own count and global batch
(gpt3 on H100 at 3,072-11,616 from 256-1,536). Its distance is d = N / the largest count left on the generation.

The interval: the errors r = ln(measured / predicted utilisation) grow with the distance, so each is scaled to
z = r / (1 + ln d), and the stated interval of a case at distance d is the split-conformal 5 % and 95 % quantiles of z
x (1 + ln d). In the backtest a cell's interval is learnt from the other benchmarks' cases only (nested: not from the
same benchmark on another accelerator or precision either). The step overhead the predictions use is learnt with the
other benchmarks' large counts (a generation's large counts of every benchmark are hidden only for the cell predicted). A model plan beyond the largest count measured on its generation widens its interval by the
same quantiles x ln d (its own interval already holds the error at the counts measured: pace.Pace.widened).
"""

from __future__ import annotations

import math
from dataclasses import replace

import polars as pl

from mlperf_scaling.tasks.planning.pace import learn, pace
from mlperf_scaling.tasks.planning.pace_backtest import count_bounds, request_of, time_bounds

MIN_COUNTS = 3  # distinct counts a cell needs: at least one left below the split and one hidden above it
MIN_SPAN = 4.0  # the largest count over the smallest: a narrower range says little about extrapolating

_SCHEMA = {
    "benchmark": pl.String, "accelerator_group": pl.String, "architecture": pl.String, "precision": pl.String, "round": pl.String,
    "submitter": pl.String, "system": pl.String, "accelerators": pl.Int64, "learnt_from": pl.String, "largest_seen": pl.Int64,
    "count_beyond": pl.Float64, "measured_time_min": pl.Float64, "measured_mfu_with_attention": pl.Float64,
    "predicted_mfu_with_attention": pl.Float64, "log_ratio": pl.Float64, "predicted_time_min": pl.Float64,
    "predicted_time_min_low": pl.Float64, "predicted_time_min_high": pl.Float64,
}


def _cells(evidence: pl.DataFrame) -> list[tuple[str, str, str]]:
    spans = (evidence.group_by("benchmark", "accelerator_group", "precision")
             .agg(pl.col("accelerators").n_unique().alias("counts"), pl.col("accelerators").min().alias("low"), pl.col("accelerators").max().alias("high"))
             .filter((pl.col("counts") >= MIN_COUNTS) & (pl.col("high") >= MIN_SPAN * pl.col("low")))
             .sort("benchmark", "accelerator_group", "precision"))
    return list(spans.select("benchmark", "accelerator_group", "precision").iter_rows())


def _hidden_cell(evidence: pl.DataFrame, benchmark: str, group: str, precision: str) -> list[dict]:
    cell = evidence.filter((pl.col("benchmark") == benchmark) & (pl.col("accelerator_group") == group) & (pl.col("precision") == precision))
    counts = cell["accelerators"].to_numpy()
    split = math.sqrt(float(counts.min()) * float(counts.max()))
    architecture = cell["architecture"][0]
    left = evidence.filter(~((pl.col("architecture") == architecture) & (pl.col("accelerators") > split)))
    learnt = learn(left)
    # the benchmark's own smaller counts are what the count is extrapolated from: no other benchmark's utilisation
    own = replace(learnt, evidence=learnt.evidence.filter(pl.col("benchmark") == benchmark))
    seen = sorted(left.filter((pl.col("benchmark") == benchmark) & (pl.col("accelerator_group") == group) & (pl.col("precision") == precision))
                  ["accelerators"].unique().to_list())
    rows = []
    for row in cell.filter(pl.col("accelerators") > split).iter_rows(named=True):
        found = pace(own, request_of(row))
        case = dict.fromkeys(_SCHEMA) | {
            "benchmark": benchmark, "accelerator_group": group, "architecture": architecture, "precision": precision, "round": row["round"],
            "submitter": row["submitter"], "system": row["system"], "accelerators": row["accelerators"],
            "learnt_from": f"{seen[0]:,}-{seen[-1]:,}" if seen else None, "measured_time_min": row["time_to_train_min"],
            "measured_mfu_with_attention": row["mfu_with_attention"],
        }
        if found.mfu_compute is not None and row["global_batch_tokens"]:
            predicted = found.mfu_at(row["accelerators"], row["global_batch_tokens"])
            ratio = row["mfu_with_attention"] / predicted
            case.update(largest_seen=found.largest_measured, count_beyond=found.count_beyond(row["accelerators"]),
                        predicted_mfu_with_attention=predicted, log_ratio=math.log(ratio), predicted_time_min=row["time_to_train_min"] * ratio)
        rows.append(case)
    return rows


def scale_backtest(evidence: pl.DataFrame) -> pl.DataFrame:
    """Every hidden score of every cell measured over a wide range of counts, predicted from its smaller counts, with its
    interval learnt from the other benchmarks' cells (nested)."""
    cases = pl.DataFrame([case for cell in _cells(evidence) for case in _hidden_cell(evidence, *cell)], schema=_SCHEMA)
    if cases.is_empty():
        return cases.with_columns(pl.lit(None, pl.Float64).alias("error_pct"), pl.lit(None, pl.Boolean).alias("covered"))
    lows: list[float | None] = []
    highs: list[float | None] = []
    for row in cases.iter_rows(named=True):
        others = cases.filter(pl.col("benchmark") != row["benchmark"])  # the benchmark's other cells are not the case's to learn from
        bounds = count_bounds(others)
        if bounds is None or row["log_ratio"] is None:
            lows.append(None)
            highs.append(None)
            continue
        scale = 1.0 + math.log(row["count_beyond"])
        low, high = time_bounds(row["predicted_time_min"], (bounds.z_low * scale, bounds.z_high * scale))
        lows.append(low)
        highs.append(high)
    return cases.with_columns(pl.Series("predicted_time_min_low", lows, dtype=pl.Float64),
                              pl.Series("predicted_time_min_high", highs, dtype=pl.Float64)).with_columns(
        (100 * (pl.col("predicted_time_min") / pl.col("measured_time_min") - 1)).alias("error_pct"),
        pl.col("measured_time_min").is_between(pl.col("predicted_time_min_low"), pl.col("predicted_time_min_high")).alias("covered"),
    )
