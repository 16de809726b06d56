"""What loading hands on, typed: the validated tables of a round as one object, and what happened to a round (the row
the command line prints, the flows pass on and a failed flow run carries as its data). A misspelt field is an error,
not a silent None."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import polars as pl

from mlperf_scaling.contracts.enums import IngestionStatus

UNCHANGED = "unchanged"  # the warehouse holds this very version already: nothing was read


@dataclass
class ValidatedRound:
    """A round's tables after their contracts: the rows that passed, and every row or file turned away."""

    systems: pl.DataFrame
    runs: pl.DataFrame
    scores: pl.DataFrame
    energy: pl.DataFrame
    rejections: pl.DataFrame

    def tables(self) -> dict[str, pl.DataFrame]:
        return {field.name: getattr(self, field.name) for field in fields(self)}


@dataclass
class RoundOutcome:
    """One round of a command: loaded (`succeeded`), already loaded (`unchanged`) or `failed`, what it holds, and what
    became of its analysis and report."""

    round: str | None
    status: str  # IngestionStatus, or UNCHANGED
    source: str
    message: str | None = None
    n_systems: int = 0
    n_runs: int = 0
    n_valid_runs: int = 0
    n_scores: int = 0
    n_scored: int = 0
    n_rejections: int = 0
    seconds: float = 0.0
    report: str | None = None
    analysis_failed: bool = False
    remote_unreachable: bool = False
    machine_fault: bool = False  # the machine refused (a full disk, a read-only folder): the command stops there

    @classmethod
    def from_ingestion(cls, row: Mapping[str, Any], **changes: Any) -> RoundOutcome:
        """The outcome an `ingestions` row records, with `changes` on top."""
        known = {field.name for field in fields(cls)}
        return cls(**{**{name: value for name, value in row.items() if name in known}, **changes})

    @property
    def failed(self) -> bool:
        return self.status == IngestionStatus.FAILED.value or self.analysis_failed

    @property
    def loaded(self) -> bool:
        """The round's data is in the warehouse: it can be analysed and published."""
        return self.status in (IngestionStatus.SUCCEEDED.value, UNCHANGED)
