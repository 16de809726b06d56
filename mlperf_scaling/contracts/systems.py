"""Contract for `systems`: one row per system description of a round."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, folder_field, round_field


class SystemsSchema(Contract):
    round: str = round_field()
    submitter: str = folder_field("submitter folder name")
    system: str = folder_field("systems JSON file stem (v0.5: system folder)")
    path: str = pa.Field(description="file path inside the round")
    submitter_declared: str | None = pa.Field(nullable=True)
    division: str | None = pa.Field(nullable=True, isin=["closed", "open"])
    division_raw: str | None = pa.Field(nullable=True)
    availability: str | None = pa.Field(nullable=True)
    status_raw: str | None = pa.Field(nullable=True)
    system_name: str | None = pa.Field(nullable=True)
    number_of_nodes: int | None = pa.Field(nullable=True, ge=0)
    accelerators_per_node: int | None = pa.Field(nullable=True, ge=0)
    accelerators: int | None = pa.Field(nullable=True, ge=0)
    accelerator_model_name: str | None = pa.Field(nullable=True)
    host_processor_model_name: str | None = pa.Field(nullable=True)
    host_processors_per_node: int | None = pa.Field(nullable=True, ge=0)
    framework: str | None = pa.Field(nullable=True)
    notes: str | None = pa.Field(nullable=True)
    is_cpu_only: bool | None = pa.Field(nullable=True)

    class Config:
        unique = ["round", "submitter", "system"]
