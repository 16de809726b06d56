"""Contract for `energy`: energy to train per valid run, where power was measured."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class EnergySchema(Contract, table="energy"):
    """Its columns: contracts/tables/energy.yaml."""
