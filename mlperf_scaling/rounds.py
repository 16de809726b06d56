"""MLPerf Training round names: `vX.Y`, their order, and the repositories that hold them.

The one place these rules are written; the warehouse stores `round_order` so SQL sorts rounds the same way.
"""

from __future__ import annotations

import re

ROUND_PATTERN = r"^v\d+\.\d+$"
_ROUND = re.compile(r"^v(\d+)\.(\d+)$")
_ROUND_IN_NAME = re.compile(r"training_results_(v\d+\.\d+)")
REPOSITORY_PREFIX = "training_results_"


def round_key(round_name: str) -> tuple[int, int]:
    """`v4.1` -> (4, 1); raises ValueError on anything else."""
    match = _ROUND.match(round_name)
    if match is None:
        raise ValueError(f"not a round name (expected vX.Y, e.g. v4.1): {round_name!r}")
    return int(match.group(1)), int(match.group(2))


_TYPED_ROUND = re.compile(r"^\s*[vV]?(\d+)\.(\d+)\s*$")


def normal_round(text: str) -> str:
    """A round as a person types it, by its name: `4.1`, `v4.1`, `V4.1` -> `v4.1`; ValueError on anything else."""
    match = _TYPED_ROUND.match(text)
    if match is None:
        raise ValueError(f"not a round name (expected vX.Y or X.Y, e.g. v4.1): {text!r}")
    return f"v{int(match.group(1))}.{int(match.group(2))}"


def round_order(round_name: str) -> int:
    """A sortable number for a round: v4.1 -> 401, after v4.0 (400) and before v5.0 (500)."""
    major, minor = round_key(round_name)
    return major * 100 + minor


def sorted_rounds(round_names) -> list[str]:
    return sorted(round_names, key=round_key)


def repository_name(round_name: str) -> str:
    """The public repository (and mirror archive) name of a round: training_results_v4.1."""
    return f"{REPOSITORY_PREFIX}{round_name}"


def round_from_name(text: str) -> str | None:
    """The round named in a path or URL (`.../training_results_v4.1.tar.gz` -> v4.1), or None."""
    match = _ROUND_IN_NAME.search(text)
    return match.group(1) if match else None


def next_round_names(round_name: str) -> list[str]:
    """The names a round after this one may have: vX.(Y+1), then v(X+1).0."""
    major, minor = round_key(round_name)
    return [f"v{major}.{minor + 1}", f"v{major + 1}.0"]
