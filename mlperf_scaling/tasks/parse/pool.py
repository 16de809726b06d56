"""Parse result logs on every core while the source is still being read.

Decompressing an archive keeps one core busy; the logs it yields are parsed in worker
processes in batches, with a cap on the bytes in flight so memory stays bounded. A judge
(any picklable callable with `keep` and `decode` key sets, such as the score step's
compliance judge) may run on each parsed log in the worker, where its lines are.

On this machine's pool the logs reach the workers through shared memory: a batch is copied once into a slot that the
workers map, and only its offsets travel. Sent through the pool's pipe, each byte was copied four times over (pickled,
written, read, unpickled), half of it in the reading process.
"""

from __future__ import annotations

import gc
import hashlib
import os
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing.shared_memory import SharedMemory
from pathlib import Path
from typing import Any, Protocol

from mlperf_scaling.runtime.cores import cpu_workers
from mlperf_scaling.runtime.pools import preload_in_workers, shared_pool
from mlperf_scaling.runtime.runners import Outcome
from mlperf_scaling.tasks.parse.power_log import PowerSummary, parse_power_log, summarize_power
from mlperf_scaling.tasks.parse.result_log import LogFacts, parse_log

BATCH_BYTES = 4 * 1024 * 1024
# On Dask each batch is a Prefect task run, whose bookkeeping (a few API calls, a trip through the scheduler) is paid
# per batch: coarse batches keep it a small share of the work
DASK_BATCH_BYTES = 32 * 1024 * 1024
MAX_IN_FLIGHT_BYTES = 128 * 1024 * 1024
# a batch closes once it holds BATCH_BYTES, so it fits a slot twice that size unless one log is larger than a slot (no
# published log is over 4 MiB): such a log goes through the pipe, as its own batch
SLOT_BYTES = 2 * BATCH_BYTES
preload_in_workers(__name__)  # the workers' parsing code, imported once in the fork server


RESULT = "result"
POWER = "power"


class Judge(Protocol):
    """What may judge a parsed log in the worker: the keys whose lines it reads, and a verdict."""

    @property
    def keep(self) -> frozenset[str]: ...

    @property
    def decode(self) -> frozenset[str]: ...

    def __call__(self, facts: LogFacts) -> Any: ...


Parsed = tuple[LogFacts | PowerSummary, Any, str]


def parse_batch(logs: list[tuple[str, bytes | memoryview]], judge: Judge | None = None) -> list[Parsed]:
    """Worker entry point: (parsed content, the judge's verdict, content hash) of each (kind, bytes).

    The lines a judge reads stay in the worker, only its verdict travels back. A power log comes back summarized:
    its readings stay in the worker too.
    """
    parsed: list[Parsed] = []
    # Millions of short-lived, acyclic dicts per batch: the cycle collector would only walk them again and again.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for kind, data in logs:
            parsed.append(_parse_one(kind, data, judge))
    finally:
        if collecting:
            gc.enable()
    return parsed


_ATTACHED: dict[str, SharedMemory] = {}  # in a worker: the shared slots of the round being read, mapped once


def parse_shared_batch(memory_name: str, logs: list[tuple[str, int, int]], judge: Judge | None = None) -> list[Parsed]:
    """Worker entry point for logs left in shared memory: (kind, offset, length) each, parsed where they lie."""
    memory = _ATTACHED.get(memory_name)
    if memory is None:
        for name in list(_ATTACHED):  # an earlier round's slots, unlinked by now
            try:
                _ATTACHED.pop(name).close()
            except BufferError:  # a view kept by a failed batch's traceback: the mapping goes with this process
                pass
        memory = _ATTACHED[memory_name] = SharedMemory(memory_name)
    view = memory.buf
    assert view is not None
    try:
        return parse_batch([(kind, view[offset:offset + length]) for kind, offset, length in logs], judge)
    finally:
        del view  # no view may outlive the batch: the slot is written again once this batch is collected


class SharedSlots:
    """Slots of shared memory for the batches in flight, taken and given back in the order the batches are sent."""

    def __init__(self, slots: int, slot_bytes: int = SLOT_BYTES):
        size = slots * slot_bytes
        room = os.statvfs("/dev/shm") if os.path.isdir("/dev/shm") else None
        if room is not None and room.f_bavail * room.f_frsize < 2 * size:
            raise OSError(f"/dev/shm has less than {2 * size // 2**20} MiB free")
        self.memory = SharedMemory(create=True, size=size)
        try:
            if hasattr(os, "posix_fallocate"):  # a full /dev/shm fails here, as an OSError, not as SIGBUS mid-copy
                os.posix_fallocate(self.memory._fd, 0, size)  # type: ignore[attr-defined]  # the segment's descriptor
        except OSError:
            self.close()
            raise
        self.slot_bytes = slot_bytes
        self.free: deque[int] = deque(range(slots))

    @property
    def name(self) -> str:
        return self.memory.name

    def place(self, slot: int, used: int, data: bytes) -> int:
        """Copy `data` into a slot after `used` bytes; its offset in the memory."""
        offset = slot * self.slot_bytes + used
        assert self.memory.buf is not None
        self.memory.buf[offset:offset + len(data)] = data
        return offset

    def close(self) -> None:
        self.memory.close()
        self.memory.unlink()


def _parse_one(kind: str, data: bytes | memoryview, judge: Judge | None) -> Parsed:
    sha = hashlib.sha256(data).hexdigest()
    if kind != RESULT:
        return summarize_power(parse_power_log(data)), None, sha
    if judge is None:
        return parse_log(data), None, sha
    facts = parse_log(data, judge.keep, judge.decode)
    verdict = judge(facts)
    facts.lines = []  # thousands of lines per log: they stay in the worker
    return facts, verdict, sha


def default_workers() -> int:
    return cpu_workers() if _main_is_importable() else 1


def _main_is_importable() -> bool:
    # Workers re-import the caller's main module; one read from stdin cannot be, so parse in-process then.
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    return path is None or getattr(main, "__spec__", None) is not None or Path(path).is_file()


class LogParser:
    """Collects logs in reading order and gives back (facts, sha256) in the same order.

    Small sources never start a process: the pool starts with the first full batch.
    """

    def __init__(self, workers: int | None = None, judge: Judge | None = None):
        from mlperf_scaling.runtime.runners import on_dask

        self._on_dask = workers is None and on_dask()  # each batch a Prefect task run on the Dask cluster
        self._workers = default_workers() if workers is None else workers
        self._judge = judge  # run on every parsed result log, in the worker; None: parse only
        self._executor: ProcessPoolExecutor | None = None
        self._batch: list[tuple[str, bytes | memoryview]] = []
        self._batch_bytes = 0
        self._slots: SharedSlots | None = None  # once the pool runs; None on Dask, in-process, or without /dev/shm room
        self._slot: int | None = None  # the slot the batch being filled lies in
        self._shared: list[tuple[str, int, int]] = []  # that batch: (kind, offset, length)
        self._pending: deque[tuple[Future | list | Outcome, int, int | None]] = deque()
        self._in_flight = 0
        self._results: list[Parsed] = []

    def add(self, data: bytes, kind: str = RESULT) -> None:
        if self._slots is not None:
            if len(data) > self._slots.slot_bytes:  # larger than a slot: through the pipe, alone
                self._flush()
                self._batch.append((kind, data))
                self._batch_bytes = len(data)
                self._flush()
                return
            if self._slot is None or self._batch_bytes + len(data) > self._slots.slot_bytes:
                self._flush()
                self._slot = self._free_slot()
            self._shared.append((kind, self._slots.place(self._slot, self._batch_bytes, data), len(data)))
            self._batch_bytes += len(data)
            if self._batch_bytes >= BATCH_BYTES:
                self._flush()
            return
        self._batch.append((kind, data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= (DASK_BATCH_BYTES if self._on_dask else BATCH_BYTES):
            self._flush()

    def _free_slot(self) -> int:
        assert self._slots is not None
        while not self._slots.free:
            self._collect_oldest()
        return self._slots.free.popleft()

    def _flush(self) -> None:
        if self._shared:
            assert self._executor is not None and self._slots is not None
            shared, size, slot = self._shared, self._batch_bytes, self._slot
            self._shared, self._batch_bytes, self._slot = [], 0, None
            self._pending.append((self._executor.submit(parse_shared_batch, self._slots.name, shared, self._judge), size, slot))
            self._in_flight += size
            return
        if not self._batch:
            return
        batch, size = self._batch, self._batch_bytes
        self._batch, self._batch_bytes = [], 0
        if self._on_dask:
            from mlperf_scaling.runtime.pools import PARSE
            from mlperf_scaling.runtime.runners import submit

            self._pending.append((submit(PARSE, parse_batch, (batch, self._judge)), size, None))
            self._in_flight += size
            while self._in_flight > MAX_IN_FLIGHT_BYTES:
                self._collect_oldest()
            return
        if self._workers < 2:
            self._pending.append((parse_batch(batch, self._judge), 0, None))
            return
        if self._executor is None:
            self._executor = shared_pool(self._workers)
            try:  # the batches after this first one: through shared memory
                self._slots = SharedSlots(max(8, 2 * self._workers + 2), SLOT_BYTES)
            except (OSError, ValueError):  # no room, or no shared memory here: the pipe, as before
                self._slots = None
        self._pending.append((self._executor.submit(parse_batch, batch, self._judge), size, None))
        self._in_flight += size
        while self._in_flight > MAX_IN_FLIGHT_BYTES:
            self._collect_oldest()

    def _collect_oldest(self) -> None:
        pending, size, slot = self._pending[0]
        self._results.extend(pending if isinstance(pending, list) else pending.result())
        self._pending.popleft()
        self._in_flight -= size
        if slot is not None and self._slots is not None:
            self._slots.free.append(slot)

    def results(self) -> list[Parsed]:
        """All results, in the order the logs were added."""
        if self._executor is None and not self._pending and not self._on_dask:
            # nothing was big enough for a pool: parse here
            self._results.extend(parse_batch(self._batch, self._judge))
            self._batch, self._batch_bytes = [], 0
        else:
            self._flush()
        try:
            while self._pending:
                self._collect_oldest()
        finally:
            self.close()
        return self._results

    def close(self) -> None:
        """Forget unfinished work; the shared workers stay for the next round."""
        for pending, _, _ in self._pending:
            if not isinstance(pending, list):
                pending.cancel()
        self._pending.clear()
        self._executor = None
        if self._slots is not None:
            # a batch still running keeps its mapping; unlinking only takes the name away
            self._slots.close()
            self._slots = None
            self._slot, self._shared = None, []
