"""Contract for `efficiency`: derived scaling metrics per (round, benchmark, system)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract


class EfficiencySchema(Contract, table="efficiency"):
    """Its columns: contracts/tables/efficiency.yaml; the checks across columns here."""

    @pa.dataframe_check(error="throughput part x convergence part must equal the efficiency")
    def parts_multiply_to_efficiency(cls, data) -> bool:
        import polars as pl

        product = pl.col("throughput_part") * pl.col("convergence_part")
        return data.lazyframe.select(
            pl.col("throughput_part").is_null() | ((product - pl.col("efficiency")).abs() <= 1e-9 * pl.col("efficiency"))
        )

    @pa.dataframe_check(error="a row without the throughput/convergence split must say why in parts_note")
    def an_empty_split_is_explained(cls, data) -> bool:
        import polars as pl

        return data.lazyframe.select(pl.col("throughput_part").is_not_null() | pl.col("parts_note").is_not_null())
