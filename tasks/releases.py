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
from tasks.rules import RULES_DISTRIBUTION, installed_rulesets, rules_for_round, rules_version
from tasks.sources import SourceError, remote_head

NEW = "new"
CHANGED = "changed"
UNCHANGED = "unchanged"
RESCORE = "new rules"  # same data, but loaded under another rules package: judged again


def normalise_remote_base(prefix: str) -> str:
    """A local folder of repositories becomes a file:// prefix; URLs stay as given, with a trailing slash."""
    if not re.match(r"^[a-z][a-z0-9+.-]*://", prefix) and not prefix.startswith("git@"):
        prefix = Path(prefix).expanduser().resolve().as_uri()
    return prefix if prefix.endswith(("/", ":")) else prefix + "/"


_ROUND_SOURCE = re.compile(r"^training_results_(v\d+\.\d+)(\.tar\.gz)?$")


def rounds_in_mirror(mirror: Path) -> list[str]:
    """Every round a mirror folder holds, as training_results_vX.Y.tar.gz or a training_results_vX.Y repository."""
    found = set()
    for entry in mirror.iterdir():
        match = _ROUND_SOURCE.match(entry.name)
        if match and (entry.is_file() if match.group(2) else entry.is_dir()):
            found.add(match.group(1))
    return sorted(found, key=round_key)


def candidate_rounds() -> list[str]:
    """The rounds to look for at a remote: v0.5, and one per ruleset of the installed rules (v0.6 ... v6.1).

    Discovery then probes the next version names after the newest found, so a round newer than the rules is found too.
    """
    return ["v0.5", *(f"v{ruleset.rsplit('.', 1)[0]}" for ruleset in installed_rulesets())]


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
    """New, changed, rules changed (the pin moved since it was loaded) or unchanged, per round found."""
    installed = f"{RULES_DISTRIBUTION} {rules_version()}"
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


def watch_markdown(remote_base: str, changes: list[RoundChange], started: list[str]) -> str:
    lines = [
        "# MLPerf release watch",
        "",
        f"Remote: `{remote_base}training_results_vX.Y`. {len(changes)} rounds found; pipeline started for "
        f"{', '.join(started) if started else 'none'}.",
        "",
        "| round | remote head | loaded commit | action | rules |",
        "|---|---|---|---|---|",
    ]
    notes = []
    for change in changes:
        rules = rules_for_round(change.round)
        lines.append(
            f"| {change.round} | `{change.head[:12]}` | {f'`{change.loaded_commit[:12]}`' if change.loaded_commit else '-'} "
            f"| {change.action} | {rules.ruleset} {rules.coverage.value} |"
        )
        if rules.coverage.value == "newer":
            notes.append(f"- **{change.round}**: {rules.note}")
    if notes:
        lines += ["", "Rounds newer than the rules installed (never silent):", "", *notes]
    return "\n".join(lines)
