"""Find the MLPerf Training rounds published at a remote, and what changed since the warehouse last loaded them.

A round's repository is PREFIX + `training_results_vX.Y`. Rounds are found with `git ls-remote` (no API token):
the rounds already known, then the next version names after the newest one found (vX.(Y+1), then v(X+1).0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from mlperf_scaling.settings import repository_name
from tasks.reference import round_key
from tasks.sources import SourceError, remote_head

NEW = "new"
CHANGED = "changed"
UNCHANGED = "unchanged"


def normalise_remote_base(prefix: str) -> str:
    """A local folder of repositories becomes a file:// prefix; URLs stay as given, with a trailing slash."""
    if not re.match(r"^[a-z][a-z0-9+.-]*://", prefix) and not prefix.startswith("git@"):
        prefix = Path(prefix).expanduser().resolve().as_uri()
    return prefix if prefix.endswith(("/", ":")) else prefix + "/"


def next_round_names(round_name: str) -> list[str]:
    major, minor = round_key(round_name)
    return [f"v{major}.{minor + 1}", f"v{major + 1}.0"]


def discover_rounds(remote_base: str, known: list[str], timeout_s: float = 60) -> dict[str, str]:
    """Round -> head commit, for every round found at the remote."""
    heads: dict[str, str] = {}

    def probe(round_name: str) -> bool:
        try:
            heads[round_name] = remote_head(remote_base + repository_name(round_name), timeout_s)
            return True
        except SourceError:
            return False

    for round_name in sorted(set(known), key=round_key):
        probe(round_name)
    newest = max(heads, key=round_key) if heads else None
    while newest is not None:
        found = next((candidate for candidate in next_round_names(newest) if candidate not in heads and probe(candidate)), None)
        newest = found
    return dict(sorted(heads.items(), key=lambda item: round_key(item[0])))


@dataclass(frozen=True)
class RoundChange:
    round: str
    head: str
    loaded_commit: str | None
    action: str  # new, changed, unchanged


def compare_with_warehouse(heads: dict[str, str], loaded: dict[str, dict]) -> list[RoundChange]:
    changes = []
    for round_name, head in heads.items():
        row = loaded.get(round_name)
        commit = row["source_commit"] if row else None
        action = NEW if row is None else (UNCHANGED if commit == head else CHANGED)
        changes.append(RoundChange(round_name, head, commit, action))
    return changes


def watch_markdown(remote_base: str, changes: list[RoundChange], started: list[str]) -> str:
    lines = [
        "# MLPerf release watch",
        "",
        f"Remote: `{remote_base}training_results_vX.Y`. {len(changes)} rounds found; pipeline started for "
        f"{', '.join(started) if started else 'none'}.",
        "",
        "| round | remote head | loaded commit | action |",
        "|---|---|---|---|",
    ]
    for change in changes:
        lines.append(
            f"| {change.round} | `{change.head[:12]}` | {f'`{change.loaded_commit[:12]}`' if change.loaded_commit else '-'} | {change.action} |"
        )
    return "\n".join(lines)
