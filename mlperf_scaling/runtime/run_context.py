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
