"""A round from a `.tar.gz` archive, read as a stream: nothing is extracted to disk."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable
from pathlib import Path

from isal import igzip

from mlperf_scaling.tasks.source.members import (
    MAX_MEMBER_BYTES,
    MemberStream,
    Provenance,
    SkippedMember,
    SourceError,
    strip_root,
)


class _HashingReader(io.RawIOBase):
    """File wrapper that hashes what the gzip stream reads, so provenance costs no second pass."""

    def __init__(self, raw):
        self._raw = raw
        self.digest = hashlib.sha256()
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        # the inflating reader asks; it only skips forward by reading, and a rewind would spoil the hash
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if (whence, offset) in ((io.SEEK_CUR, 0), (io.SEEK_SET, self.consumed)):
            return self.consumed
        raise io.UnsupportedOperation("an archive is read once, forward: it cannot be rewound")

    def tell(self) -> int:
        return self.consumed

    def readinto(self, buffer) -> int:
        count = self._raw.readinto(buffer)
        if count:
            self.digest.update(memoryview(buffer)[:count])
            self.consumed += count
        return count


def archive_members(path: Path, max_source_bytes: int) -> MemberStream:
    """The archive's members in order, each read on demand; its sha256 is known once the stream is read."""
    provenance = Provenance()
    skipped: list[SkippedMember] = []
    size = max(path.stat().st_size, 1)
    state: dict[str, _HashingReader] = {}

    def corrupt(exc: BaseException) -> SourceError:
        return SourceError(f"archive {path.name} is truncated or corrupt: {type(exc).__name__}: {exc}")

    def generate():
        try:
            yield from read_members()
        except SourceError:
            raise
        except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
            raise corrupt(exc) from None

    def reader_of(handle) -> Callable[[], bytes]:
        def load() -> bytes:
            # the consumer reads a member's bytes, so a broken stream surfaces here too
            try:
                return handle.read()
            except (tarfile.TarError, EOFError, OSError, ValueError) as exc:
                raise corrupt(exc) from None

        return load

    def read_members():
        total = 0
        with open(path, "rb") as raw:
            reader = state["reader"] = _HashingReader(raw)
            # ISA-L inflates about twice as fast as zlib. Read as a plain (not stream) tar over the inflating
            # file: members are visited in order, so its seeks only ever skip forward, and whole-member reads
            # avoid the stream reader's 10 kB copying loop.
            inflated = igzip.IGzipFile(fileobj=reader, mode="rb")
            with tarfile.open(fileobj=inflated, mode="r:") as archive:
                for member in archive:
                    name = member.name
                    if member.isdir():
                        continue
                    if name.startswith("/") or ".." in name.split("/"):
                        skipped.append(SkippedMember(name, "archive member with an absolute or '..' path: refused"))
                        continue
                    relative = strip_root(name)
                    if member.issym() or member.islnk():
                        skipped.append(SkippedMember(relative, "link inside the archive: not followed"))
                        continue
                    if not member.isfile():
                        skipped.append(SkippedMember(relative, "special file inside the archive (device or fifo): refused"))
                        continue
                    if member.size > MAX_MEMBER_BYTES:
                        skipped.append(SkippedMember(relative, f"file larger than {MAX_MEMBER_BYTES // 2**20} MiB: refused"))
                        continue
                    total += member.size
                    if total > max_source_bytes:
                        raise SourceError(
                            f"archive {path.name} expands beyond {max_source_bytes / 2**30:g} GiB: refused as a decompression bomb "
                            "(MLPERF_max_source_bytes raises the limit)"
                        )
                    yield relative, reader_of(archive.extractfile(member)), member.size
            # the rest of the gzip stream (padding) must be hashed too
            while reader.read(1 << 20):
                pass
        provenance.sha256 = reader.digest.hexdigest()

    def fraction_read() -> float:
        reader = state.get("reader")
        return 0.0 if reader is None else min(reader.consumed / size, 1.0)

    return MemberStream(generate(), provenance, skipped, fraction_read)
