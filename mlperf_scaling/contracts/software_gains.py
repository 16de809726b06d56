"""Contract for `software_gains`: a round's systems against the previous round's model of the same workload and group."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class SoftwareGainsSchema(Contract):
    round: str = round_field()
    previous_round: str = round_field()
    benchmark_canonical: str = pa.Field()
    accelerator_group: str = pa.Field()
    benchmark: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    accelerators: int = pa.Field(ge=1)
    measured_min: float = pa.Field(gt=0)
    predicted_min: float = pa.Field()
    time_ratio: float = pa.Field()
    extrapolated: bool = pa.Field()

    class Config:
        unique = ["round", "benchmark_canonical", "accelerator_group", "submitter", "system"]
