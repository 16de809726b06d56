"""Whether the machine lets a command write where it must, asked before any work: a folder that cannot be made or
written, or a file where a folder must be, is one line naming the path and what to do, not tracebacks after minutes
of work. Nothing is created to find out (the nearest existing folder is asked)."""

from __future__ import annotations

import os
from pathlib import Path


def folder_problem(folder: Path | str, what: str) -> str | None:
    """Why `folder` cannot be made (or written) for `what` (e.g. "--reports"), or None when it can."""
    target = Path(folder).expanduser()
    if target.exists() and not target.is_dir():
        return f"{what} {folder} is a file, where a folder must be: give a folder, or move the file away"
    existing = target
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        return f"{what} {folder} cannot be made: {existing} is a file, where a folder must be"
    if not os.access(existing, os.W_OK | os.X_OK):
        made = "written in" if existing == target else "made inside"
        return f"{what} {folder} cannot be {made} ({existing} is not writable by this user): give a folder that is, or fix its permissions"
    return _writable_filesystem_problem(existing, folder, what)


def _writable_filesystem_problem(existing: Path, folder: Path | str, what: str) -> str | None:
    # root passes every permission check; a read-only or virtual file system (/proc, /sys, a read-only mount) does not
    # let even root write, which only trying tells: a file made and removed at once in the nearest existing folder
    probe = existing / f".mlperf-scaling-probe-{os.getpid()}"
    try:
        probe.touch(exist_ok=False)
    except FileExistsError:
        return None
    except OSError as exc:
        return f"{what} {folder} cannot be written ({existing}: {exc.strerror or exc}): give a folder on a writable disk"
    probe.unlink(missing_ok=True)
    return None


# the files the pages are made of, which a command writes again; anything else there (a CNAME, a README) it never touches
_WRITTEN = {".html", ".csv", ".svg", ".png", ".json", ".js", ".parquet"}


def tree_problem(folder: Path | str, what: str) -> str | None:
    """The first folder or page file under `folder` that a command rewriting it could not write (a round's report made
    read-only), or None. Hidden folders (a .git of the reports) are not the command's. A few hundred names, a millisecond."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        return None
    for here, folders, files in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in [*folders, *(f for f in files if Path(f).suffix in _WRITTEN)]:
            path = Path(here) / name
            if not path.is_symlink() and not os.access(path, os.W_OK | (os.X_OK if name in folders else 0)):
                return (f"{what} {folder}: {path} is not writable by this user: make it writable (chmod -R u+w {folder}), "
                        f"or point {what} at another folder")
    return None
