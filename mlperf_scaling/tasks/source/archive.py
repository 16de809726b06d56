"""A round from a `.tar.gz` archive, read as a stream: nothing is extracted to disk."""

from __future__ import annotations

import hashlib
import io
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import cast

from isal import isal_zlib

from mlperf_scaling.rounds import repository_name
from mlperf_scaling.tasks.source.members import (
    MAX_MEMBER_BYTES,
    MemberStream,
    Provenance,
    SkippedMember,
    SourceError,
    root_round,
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


_GZIP_MAGIC = b"\x1f\x8b"
_INFLATE_ERROR = cast(type[Exception], isal_zlib.error)  # ISA-L's own error class, not an OSError (its stub says otherwise)
_CHUNK = 1 << 20


class _GzipMembers(io.RawIOBase):
    """The inflated bytes of a gzip file as `gzip -d` reads them: member after member, and bytes after the last
    member that do not start another one ignored and counted in `trailing` (gzip -d: "trailing garbage ignored").

    ISA-L inflates about twice as fast as zlib. Seeks go forward only, by reading: a tar read as a plain (not stream)
    archive visits its members in order, and whole-member reads avoid the stream reader's 10 kB copying loop.
    """

    def __init__(self, raw: io.RawIOBase):
        self._raw = raw
        self._inflate = isal_zlib.decompressobj(wbits=31)  # 31: the gzip wrapper
        self._position = 0
        self._done = False
        self.trailing = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._position + offset if whence == io.SEEK_CUR else -1
        if target < self._position:
            raise io.UnsupportedOperation("a gzip stream is read forward only")
        skip = bytearray(min(_CHUNK, max(target - self._position, 1)))
        while self._position < target:
            view = memoryview(skip)[: min(len(skip), target - self._position)]
            if not self.readinto(view):
                break
        return self._position

    def readinto(self, buffer) -> int:
        size = len(buffer)
        while size and not self._done:
            if self._inflate.eof:
                data = self._inflate.unused_data
                while len(data) < 2 and (more := self._raw.read(_CHUNK)):
                    data += more
                if not data:
                    self._done = True
                    break
                if data[:2] != _GZIP_MAGIC:
                    self.trailing += len(data)
                    self._done = True
                    break
                self._inflate = isal_zlib.decompressobj(wbits=31)  # a further member, as gzip -d reads it
            else:
                data = self._inflate.unconsumed_tail or self._raw.read(_CHUNK)
                if not data:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            out = self._inflate.decompress(data, size)
            if out:
                buffer[: len(out)] = out
                self._position += len(out)
                return len(out)
        return 0


def archive_members(path: Path, max_source_bytes: int, round_name: str | None = None) -> MemberStream:
    """The archive's members in order, each read on demand; its sha256 is known once the stream is read. An archive
    whose top folder names another round than `round_name` (training_results_v4.0 in training_results_v4.1.tar.gz) is
    refused: its data would load under the wrong name."""
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
        except (tarfile.TarError, EOFError, OSError, ValueError, _INFLATE_ERROR) as exc:
            raise corrupt(exc) from None

    def reader_of(handle) -> Callable[[], bytes]:
        def load() -> bytes:
            # the consumer reads a member's bytes, so a broken stream surfaces here too
            try:
                return handle.read()
            except (tarfile.TarError, EOFError, OSError, ValueError, _INFLATE_ERROR) as exc:
                raise corrupt(exc) from None

        return load

    def read_members():
        total = 0
        with open(path, "rb") as raw:
            reader = state["reader"] = _HashingReader(raw)
            members = _GzipMembers(reader)
            inflated = io.BufferedReader(members, buffer_size=_CHUNK)
            with tarfile.open(fileobj=inflated, mode="r:") as archive:
                for member in archive:
                    name = member.name
                    if member.isdir():
                        continue
                    if name.startswith("/") or ".." in name.split("/"):
                        skipped.append(SkippedMember(name, "archive member with an absolute or '..' path: refused"))
                        continue
                    named = root_round(name)
                    if round_name is not None and named is not None and named != round_name:
                        raise SourceError(
                            f"archive {path.name} holds {repository_name(named)}, another round than {round_name}: refused "
                            f"(rename it {repository_name(named)}.tar.gz, or pack the {repository_name(round_name)} folder)"
                        )
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
            # the rest of the gzip stream (padding, and bytes after it) must be hashed too
            while inflated.read(_CHUNK):
                pass
            while chunk := reader.read(_CHUNK):
                members.trailing += len(chunk)
        if members.trailing:
            skipped.append(SkippedMember(path.name, f"{members.trailing:,} bytes after the end of the gzip stream: ignored, as gzip -d does"))
        provenance.sha256 = reader.digest.hexdigest()

    def fraction_read() -> float:
        reader = state.get("reader")
        return 0.0 if reader is None else min(reader.consumed / size, 1.0)

    return MemberStream(generate(), provenance, skipped, fraction_read)
