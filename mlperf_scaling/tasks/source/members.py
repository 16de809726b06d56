"""What every source yields, whatever it is: (path relative to the round root, a loader of its bytes, size).

Parsing never knows where data came from. Also the limits every source applies.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mlperf_scaling.failures import ExpectedFailure
from mlperf_scaling.rounds import round_in_suite

MAX_MEMBER_BYTES = 256 * 1024 * 1024  # the largest published log is under 4 MiB
# A published round expands to under 1 GiB; far beyond that is a decompression bomb, not data.
DEFAULT_MAX_SOURCE_BYTES = 16 * 1024**3
_ROOT_FOLDER = re.compile(r"^(training|hpc)_results_(v\d+\.\d+)([-_.][^/]*)?$")


class SourceError(ExpectedFailure, ValueError):
    """A source that cannot be read at all; the message says why."""


@dataclass
class SkippedMember:
    path: str
    reason: str


@dataclass
class Provenance:
    commit: str | None = None
    sha256: str | None = None


@dataclass
class MemberStream:
    """Members of one opened source; provenance and skipped members are complete once iterated."""

    members: Iterator[tuple[str, Callable[[], bytes], int]]
    provenance: Provenance
    skipped: list[SkippedMember] = field(default_factory=list)
    fraction_read: Callable[[], float] = lambda: 0.0  # how far through the source, 0..1, for progress


def without_dot_prefix(path: str) -> str:
    """`./training_results_v4.1/...` (as `tar czf x.tar.gz ./folder` writes members) -> `training_results_v4.1/...`."""
    while path.startswith("./"):
        path = path[2:].lstrip("/")
    return path


def strip_root(path: str) -> str:
    """A member path relative to the round root: `training_results_v4.1/NVIDIA/...` (or `./training_results_v4.1/...`)
    -> `NVIDIA/...`."""
    path = without_dot_prefix(path)
    first, _, rest = path.partition("/")
    return rest if _ROOT_FOLDER.match(first) else path


def root_round(path: str) -> str | None:
    """The round a member's top folder names (`training_results_v4.0/...` -> v4.0, `hpc_results_v3.0/...` ->
    hpc-v3.0), or None when it names none."""
    first = without_dot_prefix(path).partition("/")[0]
    match = _ROOT_FOLDER.match(first)
    return round_in_suite(match.group(1), match.group(2)) if match else None


def refuse_option_like(text: str, what: str) -> None:
    """Never let user input reach git as an option: a source or URL may not start with '-'."""
    if text.startswith("-"):
        raise SourceError(f"refusing a {what} that starts with '-': {text!r}")
