"""One call per item of work, wherever the settings say the heavy work runs: this machine's pools or a Dask cluster."""

from __future__ import annotations

from pathlib import Path

from mlperf_scaling.runtime.cores import cpu_workers
from mlperf_scaling.runtime.files_back import call_with_files_back, write_files_back
from mlperf_scaling.runtime.pools import PARSE, shared_pool
from mlperf_scaling.runtime.runners import on_dask, submit


def map_on_cores(function, calls: list[tuple], kind: str = PARSE, writes_into: int | None = None) -> list:
    """function(*call) for every call, on the workers of the `kind` pool when there is more than one call, in order;
    on Dask, as Prefect task runs, when the settings say so (mlperf_scaling.runtime.runners).

    `function` must be importable by name (a module-level function): the workers import it. `writes_into`: the
    position of the argument naming the folder the function writes files into. On Dask those files come back as bytes
    and are written there by this process, so a worker elsewhere never writes where nobody looks.
    """
    if on_dask():
        if writes_into is None:
            return [future.result() for future in [submit(kind, function, call) for call in calls]]
        futures = [submit(kind, call_with_files_back, (function, writes_into, call)) for call in calls]
        return [write_files_back(future.result(), Path(call[writes_into])) for future, call in zip(futures, calls, strict=True)]
    if len(calls) <= 1 or cpu_workers() == 1:
        return [function(*call) for call in calls]
    pool = shared_pool(cpu_workers(), kind)
    return [future.result() for future in [pool.submit(function, *call) for call in calls]]
