"""Contract for `transfer_backtest`: the planner for a model that is not a benchmark, backtested across benchmarks."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class TransferBacktestSchema(Contract, table="transfer_backtest"):
    """Its columns: contracts/tables/transfer_backtest.yaml."""
