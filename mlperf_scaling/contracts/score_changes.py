"""Contract for `score_changes`: what each new version of a loaded round changed, score by score."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class ScoreChangesSchema(Contract, table="score_changes"):
    """Its columns: contracts/tables/score_changes.yaml."""
