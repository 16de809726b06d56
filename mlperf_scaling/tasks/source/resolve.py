"""Which kind of source a user named, which round it holds, its version, and opening it.

A source is a git URL, a local git repository, a directory or a `.tar.gz`; every one yields the same members.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from mlperf_scaling.rounds import ROUND_PATTERN, round_from_name
from mlperf_scaling.tasks.source.archive import archive_members
from mlperf_scaling.tasks.source.companion import combined_version, companion_of, sha256_of, with_companion
from mlperf_scaling.tasks.source.directory import directory_members
from mlperf_scaling.tasks.source.git import clone_sparse, git_head, remote_head
from mlperf_scaling.tasks.source.members import DEFAULT_MAX_SOURCE_BYTES, Provenance, SourceError, refuse_option_like

_GIT_URL = re.compile(r"^(https?://|ssh://|git://|file://|git@[\w.-]+:)")

GIT_URL = "git_url"
GIT_REPO = "git_repo"
DIRECTORY = "directory"
ARCHIVE = "archive"


@dataclass
class Source:
    spec: str
    kind: str
    round: str
    location: str  # URL or absolute path


def resolve_source(spec: str, round_name: str | None = None) -> Source:
    """Decide what kind of source `spec` is and which round it holds."""
    refuse_option_like(spec, "source")
    if _GIT_URL.match(spec):
        kind, location = GIT_URL, spec
    else:
        path = Path(spec).expanduser()
        if not path.exists():
            raise SourceError(f"source not found: {spec}")
        location = str(path.resolve())
        if path.is_file():
            if not (spec.endswith(".tar.gz") or spec.endswith(".tgz")):
                raise SourceError(f"a file source must be a .tar.gz archive: {spec}")
            kind = ARCHIVE
        elif (path / ".git").exists():
            kind = GIT_REPO
        else:
            kind = DIRECTORY
    found = round_name or round_from_name(location)
    if found is None:
        raise SourceError(f"cannot tell the round from {spec!r}: name it training_results_vX.Y (hpc_results_vX.Y) or pass --round vX.Y (hpc-vX.Y)")
    if not re.match(ROUND_PATTERN, found):
        raise SourceError(f"not a round name (expected vX.Y or hpc-vX.Y): {found!r}")
    return Source(spec, kind, found, location)


def source_problem(spec: str, round_name: str | None = None) -> Source:
    """The source, once it is known to be readable and to hold something (SourceError says why not, in one line):
    what `ingest` checks before any work starts."""
    try:
        source = resolve_source(spec, round_name)
    except OSError as exc:  # a symbolic link to itself, a path component that is not a folder
        raise SourceError(f"source {spec} cannot be read: {exc.strerror or exc}") from None
    if source.kind == GIT_URL:
        return source
    path = Path(source.location)
    if not os.access(path, os.R_OK) or (path.is_dir() and not os.access(path, os.X_OK)):
        raise SourceError(f"source {spec} cannot be read (permission denied)")
    if path.is_dir() and not any(path.iterdir()):
        raise SourceError(f"source {spec} is an empty folder: nothing to ingest")
    if path.is_file() and path.stat().st_size == 0:
        raise SourceError(f"source {spec} is an empty file: nothing to ingest")
    return source


def is_network_source(source: Source) -> bool:
    """True for a source read over the network (a git URL other than file://)."""
    return source.kind == GIT_URL and not source.location.startswith("file://")


@contextmanager
def open_source(
    source: Source, work_dir: Path | None = None, git_timeout_s: float = 900, max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES
):
    """Yield a MemberStream over the source's files; temporary checkouts are removed afterwards."""
    if source.kind == ARCHIVE:
        archive = Path(source.location)
        yield with_companion(archive_members(archive, max_source_bytes, source.round), companion_of(archive), source.round)
    elif source.kind == DIRECTORY:
        yield directory_members(Path(source.location), Provenance())
    elif source.kind == GIT_REPO:
        yield directory_members(Path(source.location), Provenance(commit=git_head(Path(source.location))))
    else:
        checkout = Path(tempfile.mkdtemp(prefix="mlperf-clone-", dir=work_dir))
        try:
            clone_sparse(source.location, checkout, timeout_s=git_timeout_s)
            yield directory_members(checkout, Provenance(commit=git_head(checkout)))
        finally:
            shutil.rmtree(checkout, ignore_errors=True)


def source_version(source: Source, timeout_s: float = 60) -> Provenance:
    """The version of a source without reading its data: a commit, or the archive's sha256; empty for a plain directory."""
    if source.kind == GIT_URL:
        return Provenance(commit=remote_head(source.location, timeout_s))
    if source.kind == GIT_REPO:
        return Provenance(commit=git_head(Path(source.location)))
    if source.kind == ARCHIVE:
        archive = Path(source.location)
        return Provenance(sha256=combined_version(sha256_of(archive), companion_of(archive)))
    return Provenance()
