"""Files a remote call writes, brought back to the command as bytes: a Dask worker on another machine (or in another
folder) draws into a scratch folder of its own, and the command writes the files where its pages link them. No
folder has to be shared, and none is guessed."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class FilesBack:
    value: Any  # what the call returned; its paths name the scratch folder
    scratch: Path  # the folder the call wrote into, on the worker
    files: dict[str, bytes]  # every file written there, by path relative to it


def call_with_files_back(function: Callable, folder_at: int, arguments: tuple) -> FilesBack:
    """function(*arguments) with argument `folder_at` (the folder it writes into) replaced by a scratch folder."""
    with tempfile.TemporaryDirectory(prefix="mlperf-files-") as scratch:
        values = list(arguments)
        values[folder_at] = Path(scratch)
        value = function(*values)
        files = {path.relative_to(scratch).as_posix(): path.read_bytes() for path in Path(scratch).rglob("*") if path.is_file()}
    return FilesBack(value, Path(scratch), files)


def write_files_back(returned: FilesBack, folder: Path) -> Any:
    """Write a remote call's files into `folder` and give its value with its paths naming them there."""
    for name, data in returned.files.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return _moved(returned.value, returned.scratch, folder)


def _moved(value: Any, old: Path, new: Path) -> Any:
    if isinstance(value, Path):
        return new / value.relative_to(old) if value.is_relative_to(old) else value
    if isinstance(value, dict):
        return {key: _moved(item, old, new) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_moved(item, old, new) for item in value)
    return value
