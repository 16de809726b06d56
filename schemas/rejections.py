"""Contract for `rejections`: every file or row that could not be used, and why."""

import pandera.polars as pa

from schemas.common import round_field


class RejectionsSchema(pa.DataFrameModel):
    round: str = round_field()
    path: str = pa.Field(description="file path inside the round, or table:key for a rejected row")
    stage: str = pa.Field(isin=["source", "layout", "parse", "score", "validate"])
    reason: str = pa.Field(str_length={"min_value": 1})

    class Config:
        strict = True
        coerce = True
