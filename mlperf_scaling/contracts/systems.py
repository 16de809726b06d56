"""Contract for `systems`: one row per system description of a round."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class SystemsSchema(Contract, table="systems"):
    """Its columns: contracts/tables/systems.yaml."""
