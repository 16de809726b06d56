"""Contract for `clusters`: the K-means cluster of each system of a (round, benchmark)."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ClustersSchema(Contract, table="clusters"):
    """Its columns: contracts/tables/clusters.yaml."""


class AnalysisExclusionsSchema(Contract, table="analysis_exclusions"):
    """Its columns: contracts/tables/analysis_exclusions.yaml."""
