"""Contract for `scale_backtest`: the model planner's pace predicted at counts it never saw."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ScaleBacktestSchema(Contract, table="scale_backtest"):
    """Its columns: contracts/tables/scale_backtest.yaml."""
