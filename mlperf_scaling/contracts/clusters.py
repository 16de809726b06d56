"""Contract for `clusters`: the K-means cluster of each system of a (round, benchmark)."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field


class ClustersSchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    cluster: int = pa.Field(ge=0)
    k: int = pa.Field(ge=1, le=6)
    silhouette: float | None = pa.Field(nullable=True, ge=-1, le=1)
    note: str | None = pa.Field(nullable=True)

    class Config:
        unique = ["round", "benchmark", "submitter", "system"]


class AnalysisExclusionsSchema(Contract):
    round: str = round_field()
    benchmark: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    reason: str = pa.Field(str_length={"min_value": 1})
