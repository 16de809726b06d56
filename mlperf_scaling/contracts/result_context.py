"""Contract for `result_context`: configuration, hardware and power beside every scored result."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ResultContextSchema(Contract, table="result_context"):
    """Its columns: contracts/tables/result_context.yaml."""
