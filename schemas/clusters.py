"""Contract for `clusters`: the K-means cluster of each system of a (round, benchmark)."""

from typing import Optional

import pandera.polars as pa

from schemas.common import round_field


class ClustersSchema(pa.DataFrameModel):
    round: str = round_field()
    benchmark: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    cluster: int = pa.Field(ge=0)
    k: int = pa.Field(ge=1, le=6)
    silhouette: Optional[float] = pa.Field(nullable=True, ge=-1, le=1)
    note: Optional[str] = pa.Field(nullable=True)

    class Config:
        strict = True
        coerce = True
        unique = ["round", "benchmark", "submitter", "system"]


class AnalysisExclusionsSchema(pa.DataFrameModel):
    round: str = round_field()
    benchmark: str = pa.Field()
    submitter: str = pa.Field()
    system: str = pa.Field()
    reason: str = pa.Field(str_length={"min_value": 1})

    class Config:
        strict = True
        coerce = True
