"""Logging and progress that work inside a Prefect run and outside one (a plain `.fn` call in a test)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any

from prefect import get_run_logger
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.context import FlowRunContext, TaskRunContext
from prefect.exceptions import MissingContextError
from prefect.runtime import task_run


def run_logger() -> logging.Logger | logging.LoggerAdapter:
    try:
        return get_run_logger()
    except MissingContextError:
        return logging.getLogger("mlperf_scaling")


def named_for_round(prefix: str, parameters: dict[str, Any]) -> str:
    """A run's name carrying the round of its `round_name` parameter: compute-metrics-v4-1 (no dots in Prefect names)."""
    return f"{prefix}-{str(parameters.get('round_name', 'round')).replace('.', '-')}"


def round_task_run_name(prefix: str) -> Callable[[], str]:
    """Task-run names that carry the round (`named_for_round`)."""
    return lambda: named_for_round(prefix, task_run.parameters)


def in_run() -> bool:
    return TaskRunContext.get() is not None or FlowRunContext.get() is not None


class ProgressBar:
    """A progress artifact in the Prefect UI, updated every 5 %; nothing outside a run."""

    def __init__(self, key: str, description: str):
        self._id: Any = None  # the artifact's id (a run is synchronous here: never a coroutine)
        self._shown = -1
        if in_run():
            self._id = create_progress_artifact(progress=0.0, key=key, description=description)

    def update(self, fraction: float) -> None:
        percent = round(100 * fraction)
        if self._id is not None and percent >= self._shown + 5:  # a few updates, not one per file
            update_progress_artifact(self._id, progress=float(percent))
            self._shown = percent

    def finish(self) -> None:
        if self._id is not None:
            update_progress_artifact(self._id, progress=100.0)


def artifact_key(*parts: str) -> str:
    """Prefect keys allow lowercase letters, digits and dashes only: `v4.1`, `llama2_70b_lora` -> `v4-1`, `llama2-70b-lora`."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", "-".join(parts).lower())).strip("-")


# The flow runs this process has running: an interrupt records them as Cancelled before the process ends, so that the
# API (served or temporary) is not left showing them Running for ever
_running_flow_runs: set[Any] = set()


def note_flow_run(flow: Any, flow_run: Any, state: Any) -> None:
    """A flow's `on_running` hook: remember the run, to say it was cancelled should the command be interrupted."""
    _running_flow_runs.add(flow_run.id)


def cancel_noted_flow_runs(reason: str, timeout_s: float = 3.0) -> None:
    """Record every flow run this process started as Cancelled, within `timeout_s`; a run that ended already keeps its
    state (the change is not forced), and an API that does not answer in time is left as it is."""
    if not _running_flow_runs:
        return
    import threading

    from prefect.client.orchestration import get_client
    from prefect.states import Cancelled

    def cancel() -> None:
        try:
            with get_client(sync_client=True) as client:
                for flow_run_id in list(_running_flow_runs):
                    client.set_flow_run_state(flow_run_id, Cancelled(message=reason))
        except Exception:  # noqa: BLE001 - ending anyway: the API may be gone with the interrupt
            pass

    worker = threading.Thread(target=cancel, name="cancel-runs", daemon=True)
    worker.start()
    worker.join(timeout_s)
