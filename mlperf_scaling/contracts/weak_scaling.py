"""Contract for `weak_scaling`."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class WeakScalingSchema(Contract, table="weak_scaling"):
    """Its columns: contracts/tables/weak_scaling.yaml."""
