"""Open the DuckDB warehouse: one writer at a time, readers read-only, no extension downloads."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import duckdb

from mlperf_scaling.failures import faults_named

log = logging.getLogger(__name__)

# Offline machines: fail at once instead of trying to download an extension.
# Files are written in DuckDB 1.0's storage format, which every DuckDB from 1.0 on reads (the 1.x command-line tool,
# pandas via duckdb 1.x, BI tools); DuckDB 2.0's own format is unreadable before 2.0.
STORAGE_VERSION = "v1.0.0"
_CONFIG: dict[str, str | bool] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_NEW_FILE_CONFIG: dict[str, str | bool] = {**_CONFIG, "storage_compatibility_version": STORAGE_VERSION}


def connect(path: Path | str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    config = _CONFIG if read_only or Path(path).exists() else _NEW_FILE_CONFIG
    return duckdb.connect(str(path), read_only=read_only, config=dict(config))


def sql_files() -> list[tuple[str, str]]:
    """The warehouse's DDL: every table, generated from its contract (warehouse/ddl.py), then every view (sql/views/),
    in file-name order."""
    from mlperf_scaling.warehouse.ddl import tables_ddl

    found = [(f"tables/{table}", text) for table, text in tables_ddl()]
    folder = resources.files("mlperf_scaling.warehouse").joinpath("sql", "views")
    for name in sorted(entry.name for entry in folder.iterdir() if entry.name.endswith(".sql")):
        found.append((f"views/{name}", folder.joinpath(name).read_text(encoding="utf-8")))
    return found


def schema_version() -> str:
    """A digest of the DDL: a warehouse written under other table definitions is rebuilt, not patched."""
    digest = hashlib.sha256(STORAGE_VERSION.encode())  # a file in another storage format is rebuilt too
    for name, text in sql_files():
        digest.update(name.encode() + b"\0" + text.encode())
    return digest.hexdigest()[:16]


def ensure_schema(connection: duckdb.DuckDBPyConnection) -> None:
    for _name, text in sql_files():
        connection.execute(text)
    connection.execute("delete from warehouse_info")
    connection.execute("insert into warehouse_info values (?)", [schema_version()])


def stored_schema_version(path: Path | str) -> str | None:
    """The schema version a warehouse file was written with; None for a file from before versions were kept."""
    connection = connect(path, read_only=True)
    try:
        found = connection.execute("select count(*) from information_schema.tables where table_name = 'warehouse_info'").fetchall()
        if not found[0][0]:
            return None
        return connection.execute("select schema_version from warehouse_info").fetchall()[0][0]
    finally:
        connection.close()


# A DuckDB database file: an 8-byte checksum, then this magic
_DUCKDB_MAGIC = b"DUCK"


def file_problem(path: Path | str) -> str | None:
    """Why the path cannot hold a warehouse (a folder, a file that is not a DuckDB database, unreadable), or None; an
    absent file is no problem here: a writer creates it."""
    target = Path(path)
    if target.is_dir():
        return f"--warehouse {path} is a folder: give the path of a DuckDB file, e.g. {target / 'mlperf.duckdb'}"
    if not target.exists():
        return None
    try:
        with open(target, "rb") as handle:
            head = handle.read(12)
    except OSError as exc:
        return f"--warehouse {path} cannot be read: {exc.strerror or exc}"
    if head[8:12] != _DUCKDB_MAGIC:
        return f"--warehouse {path} is not a DuckDB database file (an mlperf-scaling warehouse is one): give another path"
    try:  # a file cut short (a crash, a copy that did not finish) has the right header and no tables behind it
        duckdb.connect(str(target), read_only=True, config=dict(_CONFIG)).close()
    except duckdb.Error as exc:
        said = str(exc).splitlines()[0]
        if "could not set lock" in said.lower() or "conflicting lock" in said.lower():
            return f"--warehouse {path} is held by another program that writes to it ({said}): close that program, or give another path"
        return (f"--warehouse {path} is damaged ({said}): restore it from a copy, or move it away and run `mlperf-scaling run` "
                "to rebuild it (every table is re-read from the sources)")
    return None


def is_current(path: Path | str) -> bool:
    """True when the warehouse exists and was written with today's table definitions."""
    try:
        version = _file_version(path)
    except OSError:
        return False
    if version not in _CURRENT_VERSIONS:
        if stored_schema_version(path) != schema_version():
            return False
        _remember_current(version)
    return True


# one answer per version of the file: a run opens the warehouse about fifty times, each check was a connection; a file
# this process has just written with today's tables is known current without one
_CURRENT_VERSIONS: dict[tuple, None] = {}
_CURRENT_LOCK = threading.Lock()  # tasks check and write from several threads


def _file_version(path: Path | str) -> tuple:
    stat = os.stat(path)
    return str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size, stat.st_ino


def _remember_current(version: tuple) -> None:
    with _CURRENT_LOCK:
        _CURRENT_VERSIONS[version] = None
        while len(_CURRENT_VERSIONS) > 64:  # the oldest versions first
            del _CURRENT_VERSIONS[next(iter(_CURRENT_VERSIONS))]


@contextmanager
def writer_lock(path: Path | str, wait_s: float = 3600, poll_s: float = 0.5, say=log.warning) -> Iterator[None]:
    """Hold the warehouse's writer lock; a second writer waits and says so, then gives up after `wait_s`."""
    lock_path = Path(f"{path}.lock")
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    announced = False
    while True:
        with open(lock_path, "a+") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if not announced:
                        handle.seek(0)
                        holder = handle.read().strip() or "unknown"
                        say(f"warehouse {path} is being written by another run ({holder}); waiting for it to finish")
                        announced = True
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"gave up waiting {wait_s:.0f} s for the writer lock on {path}") from None
                    time.sleep(poll_s)
            # the file locked must be the one at the path: a writer whose first write failed removes it (below)
            try:
                current = os.stat(lock_path).st_ino == os.fstat(handle.fileno()).st_ino
            except FileNotFoundError:
                current = False
            if not current:
                continue
            handle.seek(0)
            handle.truncate()
            handle.write(f"pid {os.getpid()}")
            handle.flush()
            try:
                yield
            finally:
                if not Path(path).exists():  # a first write that failed: no warehouse, so no lock file beside nothing
                    lock_path.unlink(missing_ok=True)
                fcntl.flock(handle, fcntl.LOCK_UN)
            return


@contextmanager
def open_writer(path: Path | str, say=log.warning) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection to a copy of the warehouse, swapped in atomically when the block succeeds.

    A fault of the machine on the way (a full disk, a folder made read-only or immutable) is a one-line MachineFault
    naming the warehouse and what to do; the copy is removed and the warehouse is as it was.
    """
    with faults_named("the warehouse", path, "--warehouse (MLPERF_WAREHOUSE)"), _writer_on_a_copy(path, say) as connection:
        yield connection


@contextmanager
def _writer_on_a_copy(path: Path | str, say=log.warning) -> Iterator[duckdb.DuckDBPyConnection]:
    """open_writer's copy, written and swapped in.

    Writing to a copy leaves the warehouse file free: readers open it read-only at any time, even while
    a load runs, and see the previous version until the swap. A writer killed half-way leaves only its
    copy behind; the warehouse itself is never half-written. Held under the writer lock.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(target, say=say):
        draft = target.with_name(f"{target.name}.draft")
        for stale in (draft, Path(f"{draft}.wal")):  # left by a writer that was killed
            stale.unlink(missing_ok=True)
        current = target.exists() and is_current(target)
        if target.exists() and not current:
            # derived data, all of it re-readable from the sources: start again rather than migrate
            say(f"warehouse {target} was written by another version of mlperf-scaling (other table definitions): "
                "it is rebuilt from scratch, and every round is read again")
        connection = None
        try:  # whatever fails (a full disk while copying, loading or writing the checkpoint), the copy goes
            if current:
                shutil.copyfile(target, draft)
            connection = connect(draft)
            if not current:  # a copy of a current warehouse has every table and view already
                ensure_schema(connection)
            yield connection
            connection.execute("checkpoint")
            connection.close()
            version = _file_version(draft)  # the same inode, times and size once renamed
            os.replace(draft, target)  # atomic: readers see the old file or the new one, never a mix
        except BaseException:
            if connection is not None:
                with contextlib.suppress(Exception):  # after a fatal write error DuckDB may refuse even this
                    connection.close()
            draft.unlink(missing_ok=True)
            Path(f"{draft}.wal").unlink(missing_ok=True)
            raise
        _remember_current((str(target.resolve()), *version[1:]))
