"""Pools of worker processes, one per kind of work, kept for the whole process: parsing logs, and drawing plots.

Two pools, not one: a round's plots are drawn while the next round is read, and a parse batch must not queue behind
a figure. Drawing runs at a lower priority (nice), so the reading that everything after it waits for keeps the cores
it needs and the figures fill what it leaves idle.

Not fork: the parent runs Prefect's threads, which a fork would copy mid-lock. A fork server, started once, preloads
the parser and forks the workers from that clean process; each worker
ends with the process that started the pool, killed or not.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import select
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor

# imported once in the fork server, not in every worker (preload_in_workers); matplotlib is not: a worker imports it
# with its first plot, and a command that draws nothing never waits for it
_PRELOAD: list[str] = []

PARSE = "parse"
DRAW = "draw"
# Drawing is background work: at the lowest priority it takes the cores the reading and the analysis leave (at nice 10
# it still took a share of a core from them while a round was read)
_NICENESS = {PARSE: 0, DRAW: 19}

_shared: dict[tuple[str, int], ProcessPoolExecutor] = {}
_QUIET_TRACKER = "ignore:resource_tracker:UserWarning"
_shared_lock = threading.Lock()


def preload_in_workers(*modules: str) -> None:
    """Modules the fork server imports once before it forks the workers: a stage's worker functions, named by the stage."""
    _PRELOAD.extend(module for module in modules if module not in _PRELOAD)


def shared_pool(workers: int, kind: str = PARSE) -> ProcessPoolExecutor:
    """The pool of `workers` processes of this process for one kind of work, kept for every round."""
    with _shared_lock:
        executor = _shared.get((kind, workers))
        if executor is None or getattr(executor, "_broken", False):
            # An interrupted command ends at once (mlperf_scaling.runtime.interrupts) and the resource tracker then releases the
            # pools' semaphores itself, warning about each; it takes its warning filters from this list when it starts.
            if _QUIET_TRACKER not in sys.warnoptions:
                sys.warnoptions.append(_QUIET_TRACKER)
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            executor = _shared[kind, workers] = ProcessPoolExecutor(workers, mp_context=context, initializer=start_worker,
                                                                    initargs=(os.getpid(), _NICENESS[kind]))
        return executor


def start_worker(parent_pid: int, niceness: int = 0) -> None:
    if niceness:
        os.nice(niceness)
    # Ctrl-C reaches the whole process group: the command decides (mlperf_scaling.runtime.interrupts), a worker ends with it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    exit_with_parent(parent_pid)


def exit_with_parent(parent_pid: int) -> None:
    """In a worker: end this process as soon as the process that started the pool is gone, killed or not.

    A worker's own parent is the fork server, which lives as long as any worker does (each holds its alive pipe), and
    a worker waiting for work never notices its caller died: without this, a SIGKILLed run leaves the fork server,
    the resource tracker and every worker behind.
    """
    try:
        handle = os.pidfd_open(parent_pid)
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+) or the parent already gone
        handle = None
        if not _alive(parent_pid):
            os._exit(1)

    def watch() -> None:
        if handle is not None:
            select.select([handle], [], [])  # readable once the process has ended
        else:
            while _alive(parent_pid):
                time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@atexit.register
def _shutdown_shared() -> None:
    for executor in _shared.values():
        executor.shutdown(wait=False, cancel_futures=True)
    _shared.clear()
