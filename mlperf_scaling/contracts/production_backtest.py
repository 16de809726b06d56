"""Contract for `production_backtest`: the production estimate, backtested on public production runs."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ProductionBacktestSchema(Contract, table="production_backtest"):
    """Its columns: contracts/tables/production_backtest.yaml."""
