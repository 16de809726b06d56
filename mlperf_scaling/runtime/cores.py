"""How many worker processes a pool (or a local Dask cluster) gets: the one place the count is decided."""

from __future__ import annotations

import os

WORKERS_VARIABLE = "MLPERF_WORKERS"


def cpu_workers() -> int:
    """Worker processes per pool: MLPERF_WORKERS when set, else every CPU this process may run on (its affinity mask,
    as a container or `taskset` limits it), else every CPU of the machine."""
    configured = os.environ.get(WORKERS_VARIABLE, "").strip()
    if configured:
        return max(1, int(configured))  # validated where the settings are read (mlperf_scaling.settings)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
