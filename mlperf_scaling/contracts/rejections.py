"""Contract for `rejections`: every file or row that could not be used, and why."""

from __future__ import annotations

import pandera.polars as pa

from mlperf_scaling.contracts.common import Contract, round_field
from mlperf_scaling.contracts.enums import Stage


class RejectionsSchema(Contract):
    round: str = round_field()
    path: str = pa.Field(description="file path from the round repository's root (the archive's name for the archive itself), or table:key for a rejected row")
    submitter: str | None = pa.Field(nullable=True, description="the submitter the file or row belongs to, where its place says")
    system: str | None = pa.Field(nullable=True, description="the system folder, where its place says")
    benchmark: str | None = pa.Field(nullable=True, description="the benchmark folder, where its place says")
    stage: str = pa.Field(isin=[s.value for s in Stage])
    reason: str = pa.Field(str_length={"min_value": 1})
