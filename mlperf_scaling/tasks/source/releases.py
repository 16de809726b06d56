"""Find the MLPerf rounds (Training and HPC) published at a remote, and what changed since the warehouse last loaded them.

A round's repository is PREFIX + `training_results_vX.Y` (or `hpc_results_vX.Y`). Rounds are found with
`git ls-remote` (no API token): the rounds the caller knows, then, per suite, the next version names after the newest
one found (vX.(Y+1), then v(X+1).0).
"""

from __future__ import annotations

import re
from pathlib import Path

from mlperf_scaling.rounds import next_round_names, repository_name, round_from_name, round_order, suite_of
from mlperf_scaling.tasks.source.git import RepositoryAbsent, remote_head
from mlperf_scaling.tasks.source.members import SourceError


def remote_base_problem(prefix: str) -> str | None:
    """A prefix that names a local folder (a path, or file://) that is not there, said rather than read as "nothing
    published"; None for any other (URLs and ssh forms are asked when used)."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", prefix) and not prefix.startswith("file://"):
        return None
    if re.match(r"^[\w.-]+@[\w.-]+:|^[\w.-]+:(?!//)", prefix):  # git@github.com:org/, host:path (ssh)
        return None
    local = prefix.removeprefix("file://")
    if local.startswith("localhost/"):
        local = local.removeprefix("localhost")
    if Path(local).expanduser().is_dir():
        return None
    return (f"--remote-base {prefix}: no such folder (a URL prefix such as https://github.com/mlcommons/, or a folder of "
            "training_results_vX.Y and hpc_results_vX.Y repositories)")


def normalise_remote_base(prefix: str) -> str:
    """A local folder of repositories becomes a file:// prefix; URLs stay as given, with a trailing slash."""
    if not re.match(r"^[a-z][a-z0-9+.-]*://", prefix) and not prefix.startswith("git@"):
        prefix = Path(prefix).expanduser().resolve().as_uri()
    return prefix if prefix.endswith(("/", ":")) else prefix + "/"


_ROUND_SOURCE = re.compile(r"^(?:training|hpc)_results_v\d+\.\d+(\.tar\.gz)?$")


def rounds_in_mirror(mirror: Path) -> list[str]:
    """Every round a mirror folder holds, as training_results_vX.Y.tar.gz (hpc_results_vX.Y.tar.gz) or such a
    repository: Training rounds first, then HPC's (`hpc-vX.Y`)."""
    found: set[str] = set()
    for entry in mirror.iterdir():
        match = _ROUND_SOURCE.match(entry.name)
        if match and (entry.is_file() if match.group(1) else entry.is_dir()) and (named := round_from_name(entry.name)) is not None:
            found.add(named)
    return sorted(found, key=round_order)


def discover_rounds(remote_base: str, known: list[str], timeout_s: float = 60) -> dict[str, str]:
    """Round -> head commit, for every round found at the remote.

    A repository the remote says is absent is simply not a round; a remote that cannot be reached raises
    RemoteUnreachable at the first probe, rather than looking like "nothing published".
    """
    heads: dict[str, str] = {}

    def probe(round_name: str) -> bool:
        try:
            heads[round_name] = remote_head(remote_base + repository_name(round_name), timeout_s)
            return True
        except RepositoryAbsent:
            return False

    for round_name in sorted(set(known), key=round_order):
        probe(round_name)
    for suite in sorted({suite_of(round_name) for round_name in heads}):
        newest: str | None = max((r for r in heads if suite_of(r) == suite), key=round_order)
        while newest is not None:
            newest = next((candidate for candidate in next_round_names(newest) if candidate not in heads and probe(candidate)), None)
    return dict(sorted(heads.items(), key=lambda item: round_order(item[0])))


def unknown_round_problem(rounds: list[str], mirror: Path | None, remote_base: str, offline: bool, timeout_s: float = 60) -> str | None:
    """Why a round asked for cannot be had, said before anything is written, or None: not in the mirror with the
    network forbidden, or absent at the remote (asked with one `git ls-remote` per round not in the mirror). A remote
    that cannot be reached is no answer: the run itself says so, with its retries."""
    held = rounds_in_mirror(mirror) if mirror is not None and mirror.is_dir() else []
    elsewhere = [round_name for round_name in rounds if round_name not in held]
    if not elsewhere:
        return None
    holds = f"it holds {', '.join(held)}" if held else "it holds no round"
    if offline:
        return (f"{', '.join(elsewhere)} {'is' if len(elsewhere) == 1 else 'are'} not in the mirror {mirror} ({holds}), and --offline "
                "(MLPERF_OFFLINE) forbids fetching {}".format("it" if len(elsewhere) == 1 else "them"))
    base = normalise_remote_base(remote_base)
    for round_name in elsewhere:
        try:  # a short bound: a slow remote is the run's to wait for, with its retries, not this check's
            remote_head(base + repository_name(round_name), min(timeout_s, 10))
        except RepositoryAbsent:
            where = f"in the mirror {mirror} ({holds}) nor " if mirror is not None else ""
            return f"no round {round_name}: not {where}at {base} ({repository_name(round_name)} is not there)"
        except (SourceError, OSError):  # unreachable, or no git here: no answer, and the run says what it meets
            return None
    return None
