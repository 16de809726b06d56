"""Contract for `rejections`: every file or row that could not be used, and why."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class RejectionsSchema(Contract, table="rejections"):
    """Its columns: contracts/tables/rejections.yaml."""
