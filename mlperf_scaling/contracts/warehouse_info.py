"""Contract for `warehouse_info`: the version of the table definitions a warehouse file was written with."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class WarehouseInfoSchema(Contract, table="warehouse_info"):
    """Its columns: contracts/tables/warehouse_info.yaml."""
