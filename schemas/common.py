"""Field definitions shared by several tables."""

import pandera.polars as pa

ROUND_PATTERN = r"^v\d+\.\d+$"


def round_field():
    return pa.Field(str_matches=ROUND_PATTERN, description="MLPerf round, e.g. v4.1")


def folder_field(description: str):
    return pa.Field(str_length={"min_value": 1, "max_value": 512}, description=description)
