"""A round from a plain folder or a git checkout, walked in a fixed order."""

from __future__ import annotations

import os
from pathlib import Path

from mlperf_scaling.tasks.source.members import MAX_MEMBER_BYTES, MemberStream, Provenance, SkippedMember, strip_root


def directory_members(root: Path, provenance: Provenance) -> MemberStream:
    """Every file under the folder (git's own files left out), symbolic links and special files refused."""
    skipped: list[SkippedMember] = []
    counts = {"done": 0, "total": 0}

    def generate():
        walk = [(folder, sorted(d for d in subfolders if d != ".git"), sorted(files)) for folder, subfolders, files in _walk(root)]
        counts["total"] = sum(len(files) for _, _, files in walk) or 1
        for folder, _, files in walk:
            for name in files:
                counts["done"] += 1
                full = Path(folder) / name
                relative = strip_root(full.relative_to(root).as_posix())
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
