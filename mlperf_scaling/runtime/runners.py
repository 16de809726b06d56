"""Where the heavy work runs: parsing batches and figures, on this machine's pools or, as Prefect tasks, on a Dask
cluster through Prefect's own task runner (`prefect-dask`).

`MLPERF_TASK_RUNNER`:

* `local` (default): the project's worker pools (mlperf_scaling.runtime.pools), one per kind of work, on every CPU this
  process may use. No per-batch bookkeeping: a Prefect task run costs a few API calls, which on a two-core machine is
  more than a batch of logs takes to parse.
* `dask`: each parsing batch (`parse-logs`) and each benchmark's figures (`draw-plots`) is a Prefect task run on a
  `DaskTaskRunner`, shown in the Prefect UI with its state, retried once where a worker is lost. With
  `MLPERF_DASK_ADDRESS` (`tcp://scheduler:8786`), on that cluster, whose workers need this package installed (the
  same version); without it, on a `LocalCluster` of `MLPERF_WORKERS` processes started for this command.

The runner is entered once per process and kept for every round, like the local pools.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from mlperf_scaling.failures import MachineFault

LOCAL = "local"
DASK = "dask"
RUNNERS = (LOCAL, DASK)
RUNNER_VARIABLE = "MLPERF_TASK_RUNNER"
ADDRESS_VARIABLE = "MLPERF_DASK_ADDRESS"
TIMEOUT_VARIABLE = "MLPERF_DASK_TIMEOUT_S"

_entered: dict[str, Any] = {}
_lock = threading.Lock()


class Outcome(Protocol):
    """A concurrent.futures.Future, or a Prefect future of a task run on Dask."""

    def result(self) -> Any: ...

    def cancel(self) -> Any: ...


def runner_name() -> str:
    name = os.environ.get(RUNNER_VARIABLE, LOCAL).strip() or LOCAL
    if name not in RUNNERS:  # the settings refuse it earlier, with the variable named; here for code that skipped them
        raise ValueError(f"{RUNNER_VARIABLE}: {name!r} is not one of {', '.join(RUNNERS)}")
    return name


def on_dask() -> bool:
    """True when heavy work goes to Dask as Prefect tasks, and this process is inside a Prefect run to report them."""
    if runner_name() != DASK:
        return False
    from prefect.context import FlowRunContext, TaskRunContext

    return FlowRunContext.get() is not None or TaskRunContext.get() is not None


def _dask_runner():
    with _lock:
        runner = _entered.get(DASK)
        if runner is None:
            from prefect_dask import DaskTaskRunner

            from mlperf_scaling.runtime.cores import cpu_workers

            address = os.environ.get(ADDRESS_VARIABLE, "").strip() or None
            import dask

            # a scheduler gone midway is given as long to come back as it had to answer at first, not Dask's 30 s
            dask.config.set({"distributed.comm.timeouts.connect": f"{float(os.environ.get(TIMEOUT_VARIABLE) or 10):g}s"})
            if address:
                runner = DaskTaskRunner(address=address)
            else:  # a cluster of this machine's CPUs, for this command only
                runner = DaskTaskRunner(cluster_kwargs={"n_workers": cpu_workers(), "threads_per_worker": 1, "processes": True,
                                                        "dashboard_address": None})
            runner.__enter__()
            _entered[DASK] = runner
            atexit.register(close)
        return runner


def close() -> None:
    """Leave the Dask runner (a local cluster stops with it); the next submit starts again."""
    with _lock:
        runner = _entered.pop(DASK, None)
    if runner is not None:
        runner.__exit__(None, None, None)


READ = "read"  # a worker reading its share of a round from the source itself (mlperf_scaling.tasks.parse.shares)
# The Prefect task each kind of work runs as: its name is what the UI shows
TASK_NAMES = {"parse": "parse-logs", "draw": "draw-plots", READ: "read-share"}


def _task(kind: str):
    with _lock:
        made = _entered.get(f"task:{kind}")
        if made is None:
            from prefect import task
            from prefect.cache_policies import NO_CACHE

            # one retry: a worker lost with its batch (a node gone) is the failure a cluster has that a pool has not
            # a share a worker cannot see is no better on a retry: the command reads the round itself
            retries = 0 if kind == READ else 1
            made = _entered[f"task:{kind}"] = task(name=TASK_NAMES[kind], cache_policy=NO_CACHE, retries=retries, log_prints=False)(_call)
        return made


class Arguments:
    """A call's arguments, carried past Prefect's walk of task parameters: it looks for futures inside lists, tuples,
    dicts and dataclasses (a batch's every log), not inside an object of its own class."""

    __slots__ = ("values",)

    def __init__(self, values: tuple):
        self.values = values


def _call(function: Callable, arguments: Arguments) -> Any:
    """What a `parse-logs` or `draw-plots` task run does: one call of a module-level function, on a Dask worker."""
    return function(*arguments.values)


class ClusterLost(MachineFault):
    """The Dask scheduler went away midway (stopped, its machine lost): no round can go on there."""


def _lost(exc: BaseException) -> ClusterLost | None:
    """`exc` as ClusterLost when it says the scheduler is gone, else None."""
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    text = str(exc)
    # a future cancelled under us: the scheduler went away (its reason "scheduler-connection-lost", or "unknown" once
    # the client has noticed); this process cancels only futures it no longer asks for
    if not (isinstance(exc, CommClosedError | FutureCancelledError) or any(words in text for words in (
            "scheduler-connection-lost", "Timed out trying to connect", "lost the connection to the scheduler"))):
        return None
    address = os.environ.get(ADDRESS_VARIABLE, "").strip() or "of this command's local cluster"
    close_quietly()
    said = (text.splitlines() or [type(exc).__name__])[0][:160]  # distributed raises some errors with no message
    return ClusterLost(f"the Dask scheduler {'at ' if '://' in address else ''}{address} was lost midway ({said}): "
                       "start it again and run the command again, or unset MLPERF_DASK_ADDRESS to run on this machine")


@contextlib.contextmanager
def _said_as_lost() -> Iterator[None]:
    """Within the block, an error that says the scheduler is gone is raised again as ClusterLost."""
    try:
        yield
    except Exception as exc:
        lost = _lost(exc)
        if lost is None:
            raise
        raise lost from None


class _Watched:
    """A Prefect future of a task run on Dask whose result says so, in one line, when the scheduler is gone."""

    def __init__(self, future: Outcome):
        self.future = future

    def result(self) -> Any:
        with _said_as_lost():
            return self.future.result()

    def cancel(self) -> Any:
        # a Prefect future of a Dask task has no cancel of its own: the Dask future it wraps has
        wrapped = getattr(self.future, "wrapped_future", self.future)
        return wrapped.cancel() if hasattr(wrapped, "cancel") else None


def submit(kind: str, function: Callable, arguments: tuple) -> Outcome:
    """function(*arguments) as a Prefect task run on the Dask runner; `.result()` gives its value (or raises its error:
    ClusterLost when the scheduler is gone)."""
    with _said_as_lost():
        return _Watched(_dask_runner().submit(_task(kind), {"function": function, "arguments": Arguments(arguments)}))


def close_quietly() -> None:
    """Leave a runner whose scheduler is gone: its client would only wait for it again."""
    with contextlib.suppress(Exception):
        close()


def worker_count() -> int:
    """The Dask workers that take this command's work: those of the named cluster now, or the local cluster's."""
    from mlperf_scaling.runtime.cores import cpu_workers

    address = os.environ.get(ADDRESS_VARIABLE, "").strip()
    if not address:
        return cpu_workers()
    from distributed import Client

    # worker processes, not threads: each share decompresses the whole archive, and parsing holds the GIL
    with _said_as_lost():  # the scheduler may have gone between two rounds
        with Client(address, timeout=float(os.environ.get(TIMEOUT_VARIABLE) or 10), set_as_default=False) as client:
            return max(1, len(client.nthreads()))


def cluster_problem(address: str, timeout_s: float) -> str | None:
    """Why the Dask cluster at `address` cannot take work (its scheduler does not answer, or shows no worker, within
    `timeout_s`), in one line naming the address and what to do; None when it can. Asked before any work starts."""
    import time

    from distributed import Client

    started = time.monotonic()
    try:
        client = Client(address, timeout=timeout_s, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        return (f"the Dask scheduler at {address} did not answer within {timeout_s:g} s ({type(exc).__name__}): start it "
                "(`dask scheduler`), or unset MLPERF_DASK_ADDRESS to run on this machine")
    try:
        client.wait_for_workers(1, timeout=max(timeout_s - (time.monotonic() - started), 0.5))
    except TimeoutError:
        return (f"the Dask scheduler at {address} has no worker after {timeout_s:g} s: start one (`dask worker {address}`), "
                "or unset MLPERF_DASK_ADDRESS to run on this machine")
    finally:
        client.close()
    return None
