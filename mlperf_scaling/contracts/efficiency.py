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
    accelerator_model: str = pa.Field()
    accelerator_vendor: str | None = pa.Field(nullable=True)
    accelerator_family: str | None = pa.Field(nullable=True)
    accelerator_family_inferred: bool | None = pa.Field(nullable=True)
    accelerators: int = pa.Field(gt=0)
    number_of_nodes: int | None = pa.Field(nullable=True, ge=0)
    time_to_train_min: float = pa.Field(gt=0)
    accelerator_hours: float = pa.Field(gt=0)
    is_complete: bool = pa.Field()
    reference_system: str = pa.Field()
    reference_accelerators: int = pa.Field(gt=0)
    reference_time_min: float = pa.Field(gt=0)
    is_reference: bool = pa.Field()
    speedup: float = pa.Field(gt=0)
    ideal_speedup: float = pa.Field(ge=1)
    efficiency: float = pa.Field(gt=0)
    reference_system_same_model: str = pa.Field()
    reference_accelerators_same_model: int = pa.Field(gt=0)
    is_reference_same_model: bool = pa.Field()
    speedup_same_model: float = pa.Field(gt=0)
    efficiency_same_model: float = pa.Field(gt=0)
    is_pareto: bool = pa.Field()
    energy_kj: float | None = pa.Field(nullable=True, gt=0)
    average_kw: float | None = pa.Field(nullable=True, gt=0)
    energy_kj_per_accelerator: float | None = pa.Field(nullable=True, gt=0)
    is_pareto_energy: bool | None = pa.Field(nullable=True)

    class Config:
        unique = ["round", "benchmark", "submitter", "system"]
