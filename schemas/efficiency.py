"""Contract for `efficiency`: derived scaling metrics per (round, benchmark, system)."""

from typing import Optional

import pandera.polars as pa

from schemas.common import round_field


class EfficiencySchema(pa.DataFrameModel):
    round: str = round_field()
    benchmark: str = pa.Field()
    benchmark_canonical: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    system_name: Optional[str] = pa.Field(nullable=True)
    availability: Optional[str] = pa.Field(nullable=True)
    accelerator_model_name: Optional[str] = pa.Field(nullable=True)
    accelerator_model: str = pa.Field()
    accelerator_vendor: Optional[str] = pa.Field(nullable=True)
    accelerator_family: Optional[str] = pa.Field(nullable=True)
    accelerator_family_inferred: Optional[bool] = pa.Field(nullable=True)
    accelerators: int = pa.Field(gt=0)
    number_of_nodes: Optional[int] = pa.Field(nullable=True, ge=0)
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
    energy_kj: Optional[float] = pa.Field(nullable=True, gt=0)
    average_kw: Optional[float] = pa.Field(nullable=True, gt=0)
    energy_kj_per_accelerator: Optional[float] = pa.Field(nullable=True, gt=0)
    is_pareto_energy: Optional[bool] = pa.Field(nullable=True)

    class Config:
        strict = True
        coerce = True
        unique = ["round", "benchmark", "submitter", "system"]
