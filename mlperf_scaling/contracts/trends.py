"""Contracts for the cross-round tables: `carried_over` and `round_trends`."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class CarriedOverSchema(Contract, table="carried_over"):
    """Its columns: contracts/tables/carried_over.yaml."""


class RoundTrendsSchema(Contract, table="round_trends"):
    """Its columns: contracts/tables/round_trends.yaml."""
