"""Python's cyclic garbage collector, run less often in a command that runs flows.

Such a command allocates millions of short-lived objects (Prefect's states and events, polars and pandera frames,
scikit-learn's arrays, report rows), nearly all freed by reference counting the moment they are dropped. At the default
thresholds the collector ran every 700 allocations and walked the young objects each time, for little: with the
thresholds below the command spends less CPU for a little more peak memory (bench/README.md has the figures).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

THRESHOLDS = (100_000, 50, 100)  # allocations before a young collection; young, then middle collections before an older one


@contextmanager
def collecting_less() -> Iterator[None]:
    """Inside: what is imported now is left out of every collection, and cycles are collected less often. After: the
    collector as it was, with those objects collectable again (a test process runs on; an extension checking for
    leaks at exit, as DuckDB's does, would otherwise find them still held)."""
    before = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
