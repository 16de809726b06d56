"""Contract for `ingestions`: one row per attempt to load a round, with provenance."""

import datetime as dt
from typing import Optional

import pandera.polars as pa

from schemas.common import round_field


class IngestionsSchema(pa.DataFrameModel):
    ingestion_id: str = pa.Field(unique=True)
    round: str = round_field()
    source: str = pa.Field()
    source_kind: str = pa.Field(isin=["git_url", "git_repo", "directory", "archive"])
    source_commit: Optional[str] = pa.Field(nullable=True)
    source_sha256: Optional[str] = pa.Field(nullable=True)
    started_at: dt.datetime = pa.Field()
    finished_at: dt.datetime = pa.Field()
    status: str = pa.Field(isin=["succeeded", "failed"])
    message: Optional[str] = pa.Field(nullable=True)
    ruleset: Optional[str] = pa.Field(nullable=True, str_matches=r"^\d+\.\d+\.\d+$")
    rules_package: Optional[str] = pa.Field(nullable=True)
    rules_coverage: Optional[str] = pa.Field(nullable=True, isin=["checked", "set_aside", "predates", "newer"])
    n_files: int = pa.Field(ge=0)
    n_bytes: int = pa.Field(ge=0)
    n_power_logs: int = pa.Field(ge=0)
    n_systems: int = pa.Field(ge=0)
    n_runs: int = pa.Field(ge=0)
    n_valid_runs: int = pa.Field(ge=0)
    n_scores: int = pa.Field(ge=0)
    n_scored: int = pa.Field(ge=0)
    n_rejections: int = pa.Field(ge=0)
    seconds: float = pa.Field(ge=0)

    class Config:
        strict = True
        coerce = True
