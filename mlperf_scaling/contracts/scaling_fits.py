"""Contract for `scaling_fits`: Amdahl and USL fits per (round, benchmark, comparable accelerator group)."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ScalingFitsSchema(Contract, table="scaling_fits"):
    """Its columns: contracts/tables/scaling_fits.yaml."""
