"""An accelerator as the model planner reads it: its datasheet row (peaks, memory, architecture) and whether a
model's weights and optimiser state fit in the memory of a count of them."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import AcceleratorSpec, accelerator_spec, accelerator_specs, classify_accelerator
from mlperf_scaling.tasks.metrics.accelerators import group_name
from mlperf_scaling.tasks.planning.work import Request, human_count

USABLE_MEMORY = 0.9  # of the datasheet's memory, the rest left to activations, buffers and the runtime


def datasheet_of_group(group: str) -> AcceleratorSpec | None:
    """The datasheet row of a comparable group (H100-SXM, TPU v4): its first row with peaks, a row kept for the parts
    whose name says so (H100 NVL) only where the group has no other."""
    rows = [spec for spec in accelerator_specs() if group_name(spec.family, spec.form_factor, spec.family) == group and spec.peak_tflops]
    return next((spec for spec in rows if not spec.name_pattern), rows[0] if rows else None)


def datasheet_of(request: Request) -> AcceleratorSpec | None:
    """The datasheet of the part asked for: the row its published name picks where it names one (A100-SXM4-80GB is the
    80 GB row, H100 NVL its own), else its group's."""
    if request.accelerator_name:
        known = classify_accelerator(request.accelerator_name)
        if known.family is not None and group_name(known.family, known.form_factor, request.accelerator_name) == request.accelerator_group:
            spec = accelerator_spec(known.family, known.form_factor, known.memory_gb, request.accelerator_name)
            if spec is not None and spec.peak_tflops:
                return spec
    return datasheet_of_group(request.accelerator_group)


def datasheet_groups() -> list[str]:
    """Every comparable group with a datasheet that states a peak."""
    return sorted({group_name(spec.family, spec.form_factor, spec.family) for spec in accelerator_specs() if spec.peak_tflops})


def median_memory_gb(rows: pl.DataFrame) -> float | None:
    """The accelerators' memory as their systems describe it; None where none says."""
    memory = rows["accelerator_memory_gb"].drop_nulls().to_numpy()
    return float(np.median(memory)) if len(memory) else None


def memory_of(request: Request, evidence: pl.DataFrame) -> float | None:
    """The memory of one accelerator: its datasheet's, else as its measured systems describe it."""
    spec = datasheet_of(request)
    if spec is not None and spec.memory_gb is not None:
        return spec.memory_gb
    return median_memory_gb(evidence.filter(pl.col("accelerator_group") == request.accelerator_group))


def does_not_fit(request: Request, accelerators: int, memory_gb: float | None) -> str | None:
    """Why the weights and optimiser state, sharded over every accelerator, do not fit in their memory; None where they do."""
    if memory_gb is None:
        return None
    needed = request.parameters * request.bytes_per_parameter / 1e9
    held = accelerators * memory_gb * USABLE_MEMORY
    if needed <= held:
        return None
    return (f"{human_count(request.parameters)} parameters need about {needed:,.0f} GB of weights and optimiser state "
            f"({request.bytes_per_parameter:g} bytes each); {accelerators:,} {request.accelerator_group} hold {held:,.0f} GB "
            f"({USABLE_MEMORY:.0%} of {memory_gb:g} GB each): at least {math.ceil(needed / (memory_gb * USABLE_MEMORY)):,} are needed")


def smallest_that_fits(request: Request, memory_gb: float | None) -> int:
    """The fewest accelerators whose memory holds the weights and optimiser state (1 where memory is unknown)."""
    if memory_gb is None:
        return 1
    return max(1, math.ceil(request.parameters * request.bytes_per_parameter / 1e9 / (memory_gb * USABLE_MEMORY)))
