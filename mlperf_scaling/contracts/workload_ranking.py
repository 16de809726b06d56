"""Contract for `workload_ranking`."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class WorkloadRankingSchema(Contract, table="workload_ranking"):
    """Its columns: contracts/tables/workload_ranking.yaml."""
