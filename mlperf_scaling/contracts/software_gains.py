"""Contract for `software_gains`: a round's systems against the previous round's model of the same workload and group."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class SoftwareGainsSchema(Contract, table="software_gains"):
    """Its columns: contracts/tables/software_gains.yaml."""
