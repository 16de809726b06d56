"""MLPerf round names, their suites, their order, and the repositories that hold them.

Two suites publish rounds with the same version names (Training v0.7 and HPC v0.7), so a round's name in the warehouse
carries its suite: Training keeps `vX.Y`, HPC is `hpc-vX.Y`. Every key that holds a round is then unique across
suites without a second column in it, and each row also says its `suite`. The one place these rules are written; the
warehouse stores `round_order` so SQL sorts rounds the same way (every Training round before every HPC round).
"""

from __future__ import annotations

import re

TRAINING = "training"
HPC = "hpc"
SUITES = (TRAINING, HPC)
HPC_ROUND_PREFIX = "hpc-"  # what a round name starts with when it is MLPerf HPC's (for SQL and frame filters)
_PREFIX = {TRAINING: "", HPC: HPC_ROUND_PREFIX}
ROUND_PATTERN = r"^(hpc-)?v\d+\.\d+$"
_ROUND = re.compile(r"^(hpc-)?v(\d+)\.(\d+)$")
_ROUND_IN_NAME = re.compile(r"(training|hpc)_results_(v\d+\.\d+)")
REPOSITORY_PREFIX = {TRAINING: "training_results_", HPC: "hpc_results_"}
_SUITE_ORDER = {TRAINING: 0, HPC: 10_000}


def round_key(round_name: str) -> tuple[int, int]:
    """`v4.1` (or `hpc-v4.1`) -> (4, 1): the version within its suite; raises ValueError on anything else."""
    match = _ROUND.match(round_name)
    if match is None:
        raise ValueError(f"not a round name (expected vX.Y or hpc-vX.Y, e.g. v4.1): {round_name!r}")
    return int(match.group(2)), int(match.group(3))


def suite_of(round_name: str) -> str:
    """The suite a round belongs to: `hpc-v3.0` -> hpc, `v4.1` -> training."""
    return HPC if round_name.startswith(_PREFIX[HPC]) else TRAINING


def version_of(round_name: str) -> str:
    """The round's version as its repository names it: `hpc-v3.0` -> v3.0."""
    return round_name[len(_PREFIX[suite_of(round_name)]):]


def round_in_suite(suite: str, version: str) -> str:
    """The warehouse's name of a suite's round: (hpc, v3.0) -> hpc-v3.0; (training, v4.1) -> v4.1."""
    return f"{_PREFIX[suite]}{version}"


def round_label(round_name: str) -> str:
    """A round as a page names it: `HPC v3.0`, `v4.1` (Training keeps its bare name)."""
    return f"HPC {version_of(round_name)}" if suite_of(round_name) == HPC else round_name


_TYPED_ROUND = re.compile(r"^\s*(?:(hpc|training)\s*[-_:/ ]?\s*)?[vV]?(\d+)\.(\d+)\s*$", re.I)


def normal_round(text: str) -> str:
    """A round as a person types it: `4.1`, `v4.1`, `V4.1` -> `v4.1`; `hpc-v3.0`, `hpc:3.0`, `HPC v3.0` -> `hpc-v3.0`;
    ValueError on anything else."""
    match = _TYPED_ROUND.match(text)
    if match is None:
        raise ValueError(f"not a round name (expected vX.Y, X.Y or hpc-vX.Y, e.g. v4.1 or hpc-v3.0): {text!r}")
    suite = (match.group(1) or TRAINING).lower()
    return round_in_suite(suite, f"v{int(match.group(2))}.{int(match.group(3))}")


def round_order(round_name: str) -> int:
    """A sortable number for a round: v4.1 -> 401, after v4.0 (400) and before v5.0 (500); HPC rounds after every
    Training round (hpc-v3.0 -> 10300), so a suite's rounds stay together."""
    major, minor = round_key(round_name)
    return _SUITE_ORDER[suite_of(round_name)] + major * 100 + minor


def sorted_rounds(round_names) -> list[str]:
    return sorted(round_names, key=round_order)


def repository_name(round_name: str) -> str:
    """The public repository (and mirror archive) name of a round: training_results_v4.1, hpc_results_v3.0."""
    return f"{REPOSITORY_PREFIX[suite_of(round_name)]}{version_of(round_name)}"


def round_from_name(text: str) -> str | None:
    """The round named in a path or URL (`.../training_results_v4.1.tar.gz` -> v4.1, `hpc_results_v3.0` ->
    hpc-v3.0), or None."""
    match = _ROUND_IN_NAME.search(text)
    return round_in_suite(match.group(1), match.group(2)) if match else None


def next_round_names(round_name: str) -> list[str]:
    """The names a round after this one may have: vX.(Y+1), then v(X+1).0, in the same suite."""
    major, minor = round_key(round_name)
    suite = suite_of(round_name)
    return [round_in_suite(suite, f"v{major}.{minor + 1}"), round_in_suite(suite, f"v{major + 1}.0")]


def round_title(round_name: str) -> str:
    """A round with its suite, as a title says it: `MLPerf Training v4.1`, `MLPerf HPC v3.0`."""
    return f"MLPerf HPC {version_of(round_name)}" if suite_of(round_name) == HPC else f"MLPerf Training {round_name}"
