"""Contract for `efficiency`: derived scaling metrics per (round, benchmark, system)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class EfficiencySchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    benchmark_canonical: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    system_name: str | None = pa.Field(nullable=True)
    availability: str | None = pa.Field(nullable=True)
    accelerator_model_name: str | None = pa.Field(nullable=True)
    accelerator_vendor: str | None = pa.Field(nullable=True)
    accelerator_family: str | None = pa.Field(nullable=True)
    accelerator_form_factor: str | None = pa.Field(nullable=True)
    accelerator_group: str = pa.Field()
    accelerator_family_inferred: bool | None = pa.Field(nullable=True)
    accelerators: int = pa.Field(gt=0)
    number_of_nodes: int | None = pa.Field(nullable=True, ge=0)
    time_to_train_min: float = pa.Field(gt=0)
    time_to_train_min_low: float | None = pa.Field(nullable=True, gt=0)
    time_to_train_min_high: float | None = pa.Field(nullable=True, gt=0)
    accelerator_hours: float = pa.Field(gt=0)
    is_complete: bool = pa.Field()
    global_batch_size: float | None = pa.Field(nullable=True, gt=0)
    samples_to_converge: float | None = pa.Field(nullable=True, ge=0)
    epochs_to_converge: float | None = pa.Field(nullable=True, ge=0)
    reference_system: str = pa.Field()
    reference_accelerators: int = pa.Field(gt=0)
    reference_time_min: float = pa.Field(gt=0)
    is_reference: bool = pa.Field()
    speedup: float = pa.Field(gt=0)
    efficiency: float = pa.Field(gt=0)
    convergence_unit: str | None = pa.Field(nullable=True, isin=["samples", "epochs"])
    training_per_accelerator_minute: float | None = pa.Field(nullable=True, gt=0)
    throughput_part: float | None = pa.Field(nullable=True, ge=0.05, le=20)
    convergence_part: float | None = pa.Field(nullable=True, ge=0.05, le=20)
    efficiency_note: str | None = pa.Field(nullable=True)
    parts_note: str | None = pa.Field(nullable=True)
    paper_reference_system: str = pa.Field()
    paper_reference_accelerators: int = pa.Field(gt=0)
    paper_reference_time_min: float = pa.Field(gt=0)
    is_paper_reference: bool = pa.Field()
    paper_speedup: float = pa.Field(gt=0)
    paper_ideal_speedup: float = pa.Field(ge=1)
    paper_e_prime: float = pa.Field(gt=0)
    is_pareto: bool = pa.Field()
    energy_kj: float | None = pa.Field(nullable=True, gt=0)
    average_kw: float | None = pa.Field(nullable=True, gt=0)
    energy_kj_per_accelerator: float | None = pa.Field(nullable=True, gt=0)
    is_pareto_energy: bool | None = pa.Field(nullable=True)

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

    class Config:
        unique = ["round", "benchmark", "submitter", "system"]
