"""Contract for `ingestions`: one row per attempt to load a round, with provenance."""

from __future__ import annotations

import datetime as dt

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field
from mlperf_scaling.contracts.enums import IngestionStatus, RulesCoverage


class IngestionsSchema(Contract):
    ingestion_id: str = pa.Field(unique=True)
    round: str = round_field()
    round_order: int | None = pa.Field(nullable=True, ge=0)  # null only for a failed attempt that named no round
    source: str = pa.Field()
    source_kind: str = pa.Field(isin=["git_url", "git_repo", "directory", "archive"])
    source_commit: str | None = pa.Field(nullable=True)
    source_sha256: str | None = pa.Field(nullable=True)
    started_at: dt.datetime = pa.Field()
    finished_at: dt.datetime = pa.Field()
    status: str = pa.Field(isin=[s.value for s in IngestionStatus])
    message: str | None = pa.Field(nullable=True)
    ruleset: str | None = pa.Field(nullable=True, str_matches=r"^\d+\.\d+\.\d+$")
    rules_package: str | None = pa.Field(nullable=True)
    rules_coverage: str | None = pa.Field(nullable=True, isin=[c.value for c in RulesCoverage])
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
