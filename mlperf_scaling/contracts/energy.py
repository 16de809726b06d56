"""Contract for `energy`: energy to train per valid run, where power was measured."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import ScoreKey


class EnergySchema(ScoreKey):
    file_name: str = pa.Field()
    time_to_train_min: float = pa.Field(gt=0)
    node_energy_j: float = pa.Field(ge=0)
    switch_energy_j: float = pa.Field(ge=0)
    energy_j: float = pa.Field(gt=0)
    n_node_logs: int = pa.Field(ge=1)
    n_switch_logs: int = pa.Field(ge=0)

    class Config:
        unique = ["round", "submitter", "system", "benchmark", "file_name"]
