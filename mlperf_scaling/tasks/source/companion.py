"""A round archive's companion: `training_results_vX.Y.configs.tar.xz` beside `training_results_vX.Y.tar.gz`.

A mirror's round archive holds results and systems only; the implementations' configuration files (what precision,
parallelism and batch each system ran) are packed beside it with the repository's own paths, as a clone would have
them. The round is read as both: the archive's members, then the companion's. Its version is both archives' hashes.
"""

from __future__ import annotations

import hashlib
import lzma
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

from mlperf_scaling.tasks.source.members import MAX_MEMBER_BYTES, MemberStream, SkippedMember, root_round, strip_root

COMPANION_SUFFIX = ".configs.tar.xz"


def companion_of(archive: Path) -> Path | None:
    """The configuration archive beside a round archive, if there is one."""
    name = archive.name
    for suffix in (".tar.gz", ".tgz"):
        if name.endswith(suffix):
            companion = archive.with_name(name[: -len(suffix)] + COMPANION_SUFFIX)
            return companion if companion.is_file() else None
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def combined_version(archive_sha256: str, companion: Path | None) -> str:
    """The round's version: the archive's sha256 alone, or hashed with its companion's (a config archive re-packed is a
    new version of the round)."""
    if companion is None:
        return archive_sha256
    return hashlib.sha256(f"{archive_sha256} {sha256_of(companion)}".encode()).hexdigest()


def companion_members(companion: Path, round_name: str | None, skipped: list[SkippedMember]) -> Iterator[tuple[str, Callable[[], bytes], int]]:
    """The companion's files as (path relative to the round root, loader, size). A companion that cannot be read is
    said in `skipped` and left: the round's results do not depend on it."""
    try:
        with tarfile.open(companion, mode="r:xz") as archive:
            for member in archive:
                if not member.isfile():
                    continue
                name = member.name
                if name.startswith("/") or ".." in name.split("/"):
                    skipped.append(SkippedMember(name, f"{companion.name}: member with an absolute or '..' path: refused"))
                    continue
                named = root_round(name)
                if round_name is not None and named is not None and named != round_name:
                    skipped.append(SkippedMember(companion.name, f"holds training_results_{named}, not {round_name}: not read"))
                    return
                if member.size > MAX_MEMBER_BYTES:
                    continue
                handle = archive.extractfile(member)
                if handle is None:
                    continue
                yield strip_root(name), _holding(handle.read()), member.size
    except (tarfile.TarError, lzma.LZMAError, EOFError, OSError) as exc:
        skipped.append(SkippedMember(companion.name, f"configuration archive unreadable ({type(exc).__name__}: {exc}): "
                                                     "precision and parallelism are read from the logs alone"))


def _holding(data: bytes) -> Callable[[], bytes]:
    """A loader of bytes already read: an xz stream cannot be rewound to a member later."""
    return lambda: data


def with_companion(stream: MemberStream, companion: Path | None, round_name: str | None) -> MemberStream:
    """The round archive's members, then its companion's; the version covers both."""
    if companion is None:
        return stream

    def members():
        yield from stream.members
        yield from companion_members(companion, round_name, stream.skipped)
        if stream.provenance.sha256 is not None:
            stream.provenance.sha256 = combined_version(stream.provenance.sha256, companion)

    return MemberStream(members(), stream.provenance, stream.skipped, stream.fraction_read)
