"""Parse result logs on every core while the source is still being read.

Decompressing an archive keeps one core busy; the logs it yields are parsed in worker
processes in batches, with a cap on the bytes in flight so memory stays bounded. A judge
(any picklable callable with `keep` and `decode` key sets, such as the score step's
compliance judge) may run on each parsed log in the worker, where its lines are.
"""

from __future__ import annotations

import gc
import hashlib
import sys
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from mlperf_scaling.processes import cpu_workers, shared_pool
from mlperf_scaling.runners import Outcome
from mlperf_scaling.tasks.parse.power_log import PowerSummary, parse_power_log, summarize_power
from mlperf_scaling.tasks.parse.result_log import LogFacts, parse_log

BATCH_BYTES = 4 * 1024 * 1024
# On Dask each batch is a Prefect task run, whose bookkeeping (a few API calls, a trip through the scheduler) is paid
# per batch: coarse batches keep it a small share of the work
DASK_BATCH_BYTES = 32 * 1024 * 1024
MAX_IN_FLIGHT_BYTES = 128 * 1024 * 1024


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


def parse_batch(logs: list[tuple[str, bytes]], judge: Judge | None = None) -> list[Parsed]:
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


def _parse_one(kind: str, data: bytes, judge: Judge | None) -> Parsed:
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
        from mlperf_scaling.runners import on_dask

        self._on_dask = workers is None and on_dask()  # each batch a Prefect task run on the Dask cluster
        self._workers = default_workers() if workers is None else workers
        self._judge = judge  # run on every parsed result log, in the worker; None: parse only
        self._executor: ProcessPoolExecutor | None = None
        self._batch: list[tuple[str, bytes]] = []
        self._batch_bytes = 0
        self._pending: deque[tuple[Future | list | Outcome, int]] = deque()
        self._in_flight = 0
        self._results: list[Parsed] = []

    def add(self, data: bytes, kind: str = RESULT) -> None:
        self._batch.append((kind, data))
        self._batch_bytes += len(data)
        if self._batch_bytes >= (DASK_BATCH_BYTES if self._on_dask else BATCH_BYTES):
            self._flush()

    def _flush(self) -> None:
        if not self._batch:
            return
        batch, size = self._batch, self._batch_bytes
        self._batch, self._batch_bytes = [], 0
        if self._on_dask:
            from mlperf_scaling.processes import PARSE
            from mlperf_scaling.runners import submit

            self._pending.append((submit(PARSE, parse_batch, (batch, self._judge)), size))
            self._in_flight += size
            while self._in_flight > MAX_IN_FLIGHT_BYTES:
                self._collect_oldest()
            return
        if self._workers < 2:
            self._pending.append((parse_batch(batch, self._judge), 0))
            return
        if self._executor is None:
            self._executor = shared_pool(self._workers)
        self._pending.append((self._executor.submit(parse_batch, batch, self._judge), size))
        self._in_flight += size
        while self._in_flight > MAX_IN_FLIGHT_BYTES:
            self._collect_oldest()

    def _collect_oldest(self) -> None:
        pending, size = self._pending.popleft()
        self._results.extend(pending if isinstance(pending, list) else pending.result())
        self._in_flight -= size

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
        for pending, _ in self._pending:
            if not isinstance(pending, list):
                pending.cancel()
        self._pending.clear()
        self._executor = None
