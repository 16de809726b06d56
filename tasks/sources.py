"""Where a round's files come from: a git URL, a local git repository, a directory or a .tar.gz.

Every source yields the same thing, (path relative to the round root, bytes), so parsing never
knows where data came from. Archives are read as a stream and never extracted to disk.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from isal import igzip


_ROUND_IN_NAME = re.compile(r"training_results_(v\d+\.\d+)")
_ROOT_FOLDER = re.compile(r"^training_results_v\d+\.\d+([-_.][^/]*)?$")
_GIT_URL = re.compile(r"^(https?://|ssh://|git://|file://|git@[\w.-]+:)")
# Folders a result repository keeps data in; the benchmark code next to them is never fetched.
SPARSE_PATTERNS = ["/*/systems/", "/*/results/", "/v*/*/*/results/", "/v*/*/*/*/results/"]
MAX_MEMBER_BYTES = 256 * 1024 * 1024  # the largest published log is under 4 MiB
# A published round expands to under 1 GiB; far beyond that is a decompression bomb, not data.
MAX_SOURCE_BYTES = int(os.environ.get("MLPERF_MAX_SOURCE_BYTES", 16 * 1024**3))

GIT_URL = "git_url"
GIT_REPO = "git_repo"
DIRECTORY = "directory"
ARCHIVE = "archive"


class SourceError(ValueError):
    """A source that cannot be read at all; the message says why."""


@dataclass
class Source:
    spec: str
    kind: str
    round: str
    location: str  # URL or absolute path


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


def round_from_name(text: str) -> str | None:
    match = _ROUND_IN_NAME.search(text)
    return match.group(1) if match else None


def resolve_source(spec: str, round_name: str | None = None) -> Source:
    """Decide what kind of source `spec` is and which round it holds."""
    if spec.startswith("-"):
        raise SourceError(f"refusing a source that starts with '-': {spec!r}")
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
        raise SourceError(f"cannot tell the round from {spec!r}: name it training_results_vX.Y or pass --round vX.Y")
    if not re.match(r"^v\d+\.\d+$", found):
        raise SourceError(f"not a round name (expected vX.Y): {found!r}")
    return Source(spec, kind, found, location)


def _strip_root(path: str) -> str:
    first, _, rest = path.partition("/")
    return rest if _ROOT_FOLDER.match(first) else path


@contextmanager
def open_source(source: Source, work_dir: Path | None = None, git_timeout_s: float = 900):
    """Yield a MemberStream over the source's files; temporary checkouts are removed afterwards."""
    if source.kind == ARCHIVE:
        yield _archive_members(Path(source.location))
    elif source.kind == DIRECTORY:
        yield _directory_members(Path(source.location), Provenance())
    elif source.kind == GIT_REPO:
        yield _directory_members(Path(source.location), Provenance(commit=_git_head(Path(source.location))))
    else:
        checkout = Path(tempfile.mkdtemp(prefix="mlperf-clone-", dir=work_dir))
        try:
            clone_sparse(source.location, checkout, timeout_s=git_timeout_s)
            yield _directory_members(checkout, Provenance(commit=_git_head(checkout)))
        finally:
            shutil.rmtree(checkout, ignore_errors=True)


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


def _archive_members(path: Path) -> MemberStream:
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
                    relative = _strip_root(name)
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
                    if total > MAX_SOURCE_BYTES:
                        raise SourceError(
                            f"archive {path.name} expands beyond {MAX_SOURCE_BYTES / 2**30:g} GiB: refused as a decompression bomb "
                            "(MLPERF_MAX_SOURCE_BYTES raises the limit)"
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


def _directory_members(root: Path, provenance: Provenance) -> MemberStream:
    skipped: list[SkippedMember] = []
    counts = {"done": 0, "total": 0}

    def generate():
        walk = [(folder, sorted(d for d in subfolders if d != ".git"), sorted(files)) for folder, subfolders, files in _walk(root)]
        counts["total"] = sum(len(files) for _, _, files in walk) or 1
        for folder, _, files in walk:
            for name in files:
                counts["done"] += 1
                full = Path(folder) / name
                relative = _strip_root(full.relative_to(root).as_posix())
                if full.is_symlink():
                    skipped.append(SkippedMember(relative, "symbolic link: not followed"))
                    continue
                if not full.is_file():
                    skipped.append(SkippedMember(relative, "special file (device or fifo): refused"))
                    continue
                size = full.stat().st_size
                if size > MAX_MEMBER_BYTES:
                    skipped.append(SkippedMember(relative, f"file larger than {MAX_MEMBER_BYTES // 2**20} MiB: refused"))
                    continue
                yield relative, full.read_bytes, size

    return MemberStream(generate(), provenance, skipped, lambda: counts["done"] / max(counts["total"], 1))


def _walk(root: Path):
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != ".git")
        yield folder, subfolders, files


def _run_git(args: list[str], cwd: Path | None, timeout_s: float) -> str:
    # No shell, and `--` before any user-given URL, so input can never become an option.
    # never prompt; give up on a transfer that stalls below 1 kB/s for a minute
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true",
           "GIT_HTTP_LOW_SPEED_LIMIT": "1000", "GIT_HTTP_LOW_SPEED_TIME": "60"}
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout_s, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        raise SourceError(f"git {args[0]} did not finish within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        raise SourceError(f"git {args[0]} failed: {done.stderr.strip()[-500:]}")
    return done.stdout


def _git_head(repo: Path) -> str:
    return _run_git(["rev-parse", "HEAD"], repo, 60).strip()


def clone_sparse(url: str, target: Path, timeout_s: float = 900) -> None:
    """Shallow, sparse clone holding only systems/ and results/ folders."""
    if url.startswith("-"):
        raise SourceError(f"refusing a git URL that starts with '-': {url!r}")
    _run_git(["clone", "--depth", "1", "--filter=blob:none", "--no-checkout", "--", url, str(target)], None, timeout_s)
    _run_git(["sparse-checkout", "set", "--no-cone", *SPARSE_PATTERNS], target, 120)
    _run_git(["checkout"], target, timeout_s)


def source_version(source: Source, timeout_s: float = 60) -> Provenance:
    """The version of a source without reading its data: a commit, or the archive's sha256; empty for a plain directory."""
    if source.kind == GIT_URL:
        return Provenance(commit=remote_head(source.location, timeout_s))
    if source.kind == GIT_REPO:
        return Provenance(commit=_git_head(Path(source.location)))
    if source.kind == ARCHIVE:
        digest = hashlib.sha256()
        with open(source.location, "rb") as handle:
            while chunk := handle.read(1 << 22):
                digest.update(chunk)
        return Provenance(sha256=digest.hexdigest())
    return Provenance()


def remote_head(url: str, timeout_s: float = 60) -> str:
    """The commit a remote's HEAD points at, without cloning."""
    if url.startswith("-"):
        raise SourceError(f"refusing a git URL that starts with '-': {url!r}")
    out = _run_git(["ls-remote", "--", url, "HEAD"], None, timeout_s)
    if not out.strip():
        raise SourceError(f"remote has no HEAD: {url}")
    return out.split()[0]
