"""Failures the pipeline expects (a source that cannot be read, a load refused): said in one line, never as a
traceback, wherever they are raised: in a task, a flow or the command line."""

from __future__ import annotations

import logging


class ExpectedFailure(Exception):
    """A failure whose message is the whole story: the user can act on it, no stack trace helps."""


def said(exc: BaseException) -> str:
    """One line for a failure: an expected one in its own words, anything else with its type."""
    return str(exc) if isinstance(exc, ExpectedFailure) else f"{type(exc).__name__}: {exc}"


class _WithoutTraceback(logging.Filter):
    """Prefect logs a failed task with its traceback; for an expected failure the message alone is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], ExpectedFailure):
            record.exc_info = None
            record.exc_text = None
        return True


_FILTER = _WithoutTraceback()


def quiet_expected_failures() -> None:
    """Install the filter on Prefect's run loggers (idempotent)."""
    for name in ("prefect.task_runs", "prefect.flow_runs", "prefect.task_engine", "prefect.flow_engine"):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)
