"""Flow runs on the temporary local API, without the cost meant for a served one."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import prefect.settings
from prefect.settings import PREFECT_API_URL, temporary_settings


@contextmanager
def lean_local_runs() -> Iterator[None]:
    """With no served API (PREFECT_API_URL unset), flows run on a temporary local API that ends with this process.
    Flow-run heartbeats, which let a server notice a crashed run, serve nothing there, and every flow run waits up
    to a second on exit for the heartbeat thread's sleep (about 1 s of each 1.2 s subflow): they are turned off.
    With a served API they stay on."""
    if PREFECT_API_URL.value():
        yield
        return
    with without_heartbeats():
        yield


@contextmanager
def without_heartbeats() -> Iterator[None]:
    """Flow runs without heartbeats, for an API that lives no longer than this process (the tests' too)."""
    heartbeat = getattr(prefect.settings, "PREFECT_FLOWS_HEARTBEAT_FREQUENCY")  # noqa: B009  # defined dynamically
    with temporary_settings(updates={heartbeat: None}):
        yield
