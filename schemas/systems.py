"""Contract for `systems`: one row per system description of a round."""

from typing import Optional

import pandera.polars as pa

from schemas.common import folder_field, round_field


class SystemsSchema(pa.DataFrameModel):
    round: str = round_field()
    submitter: str = folder_field("submitter folder name")
    system: str = folder_field("systems JSON file stem (v0.5: system folder)")
    path: str = pa.Field(description="file path inside the round")
    submitter_declared: Optional[str] = pa.Field(nullable=True)
    division: Optional[str] = pa.Field(nullable=True, isin=["closed", "open"])
    division_raw: Optional[str] = pa.Field(nullable=True)
    availability: Optional[str] = pa.Field(nullable=True)
    status_raw: Optional[str] = pa.Field(nullable=True)
    system_name: Optional[str] = pa.Field(nullable=True)
    number_of_nodes: Optional[int] = pa.Field(nullable=True, ge=0)
    accelerators_per_node: Optional[int] = pa.Field(nullable=True, ge=0)
    accelerators: Optional[int] = pa.Field(nullable=True, ge=0)
    accelerator_model_name: Optional[str] = pa.Field(nullable=True)
    host_processor_model_name: Optional[str] = pa.Field(nullable=True)
    host_processors_per_node: Optional[int] = pa.Field(nullable=True, ge=0)
    framework: Optional[str] = pa.Field(nullable=True)
    notes: Optional[str] = pa.Field(nullable=True)
    is_cpu_only: Optional[bool] = pa.Field(nullable=True)

    class Config:
        strict = True
        coerce = True
        unique = ["round", "submitter", "system"]
