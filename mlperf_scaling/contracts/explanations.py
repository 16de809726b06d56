"""Contract for `explanations`: what explains, per workload, how its results scale, under cross-validation."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ExplanationsSchema(Contract, table="explanations"):
    """Its columns: contracts/tables/explanations.yaml."""
