"""Each round's systems against the previous round's model of the same workload and comparable group: how much faster
the software and systems got at the same size (`software_gains`)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.software_gains import SoftwareGainsSchema
from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS, amdahl_fit, apart_series


def software_gains(efficiency: pl.DataFrame) -> pl.DataFrame:
    """Each round's systems against the previous round's model of the same workload and comparable group: the time
    the Amdahl fit on time of the previous round that measured the group predicts at their N, and measured ÷
    predicted (below 1: faster than last round's systems at that size, the software and system gain). Only where the
    previous round measured the group at three counts or more (a fit)."""
    rows = []
    known = efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    for (workload, group_name), group in known.group_by(["benchmark_canonical", "accelerator_group"], maintain_order=True):
        rounds = sorted(set(group["round"].to_list()), key=round_order)
        for earlier, later in zip(rounds, rounds[1:], strict=False):
            fitted, _ = apart_series(group.filter(pl.col("round") == earlier))
            counts = fitted["accelerators"].to_numpy().astype(float)
            if len(np.unique(counts)) < MIN_DISTINCT_COUNTS:
                continue
            a, b = (float(v[0]) for v in amdahl_fit(counts, fitted["time_to_train_min"].to_numpy().astype(float)))
            if not (math.isfinite(a) and math.isfinite(b) and a + b > 0):
                continue
            for row in group.filter(pl.col("round") == later).iter_rows(named=True):
                predicted = a + b / float(row["accelerators"])
                rows.append({
                    "round": later, "previous_round": earlier, "benchmark_canonical": workload, "accelerator_group": group_name,
                    "benchmark": row["benchmark"], "submitter": row["submitter"], "system": row["system"],
                    "accelerators": row["accelerators"], "measured_min": row["time_to_train_min"], "predicted_min": predicted,
                    "time_ratio": row["time_to_train_min"] / predicted,
                    "extrapolated": not (counts.min() <= row["accelerators"] <= counts.max()),
                })
    return pl.DataFrame(rows, schema=frame_schema(SoftwareGainsSchema)).sort("benchmark_canonical", "accelerator_group", "round",
                                                                             "accelerators", "submitter", "system")
