"""Which version of each round the warehouse holds, and whether a source's version is that one."""

from __future__ import annotations

from dataclasses import dataclass

from mlperf_scaling.tasks.score.rules import rules_identity
from mlperf_scaling.tasks.source.members import Provenance
from mlperf_scaling.warehouse.read import WarehouseMissing, open_reader, read_query


def loaded_versions(warehouse: str) -> dict[str, dict]:
    """Round -> its latest successful ingestion (source, commit, sha256, rules); empty for a new warehouse."""
    try:
        connection = open_reader(warehouse)
    except WarehouseMissing:
        return {}  # none yet, or one of other table definitions that the next load rebuilds: every round is new
    try:
        return {row["round"]: row for row in read_query(connection, "loaded_versions").iter_rows(named=True)}
    finally:
        connection.close()


def is_unchanged(loaded: dict | None, version: Provenance) -> bool:
    """True when the warehouse already holds this exact version of the round, judged by the rules installed now."""
    if loaded is None:
        return False
    if loaded.get("rules_package") != rules_identity():
        return False  # a new rules package may judge the same logs differently (or at all): score them again
    if version.commit is not None and loaded["source_commit"] == version.commit:
        return True
    return version.sha256 is not None and loaded["source_sha256"] == version.sha256


NEW = "new"
CHANGED = "changed"
UNCHANGED = "unchanged"
RESCORE = "new rules"  # same data, but loaded under another rules package: judged again


@dataclass(frozen=True)
class RoundChange:
    round: str
    head: str
    loaded_commit: str | None
    action: str  # new, changed, unchanged


def compare_with_warehouse(heads: dict[str, str], loaded: dict[str, dict]) -> list[RoundChange]:
    """New, changed, rules changed (the pin moved since it was loaded) or unchanged, per round found."""
    installed = rules_identity()
    changes = []
    for round_name, head in heads.items():
        row = loaded.get(round_name)
        commit = row["source_commit"] if row else None
        if row is None:
            action = NEW
        elif commit != head:
            action = CHANGED
        elif row.get("rules_package") != installed:
            action = RESCORE
        else:
            action = UNCHANGED
        changes.append(RoundChange(round_name, head, commit, action))
    return changes
