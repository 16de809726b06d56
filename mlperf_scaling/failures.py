"""Failures the pipeline expects (a source that cannot be read, a load refused): said in one line, never as a
traceback, wherever they are raised: in a task, a flow or the command line."""

from __future__ import annotations

import errno
import functools
import inspect
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


class ExpectedFailure(Exception):
    """A failure whose message is the whole story: the user can act on it, no stack trace helps."""


def said(exc: BaseException) -> str:
    """One line for a failure: an expected one in its own words, anything else with its type."""
    return str(exc) if isinstance(exc, ExpectedFailure) else f"{type(exc).__name__}: {exc}"


class _WithoutTraceback(logging.Filter):
    """Prefect logs a failed task with its traceback; for an expected failure the message alone is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and _said_whole(record.exc_info[1]):
            record.exc_info = None
            record.exc_text = None
        return True


def _said_whole(exc: BaseException | None) -> bool:
    """An expected failure, or one of Prefect's API (an HTTP error through its client): the message is the story."""
    if isinstance(exc, ExpectedFailure):
        return True
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    return isinstance(exc, PrefectHTTPStatusError | httpx.TransportError)


_FILTER = _WithoutTraceback()


def quiet_expected_failures() -> None:
    """Install the filter on Prefect's run loggers (idempotent)."""
    for name in ("prefect.task_runs", "prefect.flow_runs", "prefect.task_engine", "prefect.flow_engine"):
        logger = logging.getLogger(name)
        if _FILTER not in logger.filters:
            logger.addFilter(_FILTER)


class MachineFault(ExpectedFailure):
    """The machine refused a write or a read midway (no space, a read-only or immutable place, a failing disk): no
    retry helps and every later round would meet it too, so the command stops, saying where and what to do."""


_FAULTS = {
    errno.ENOSPC: ("no space left on the device", "free space there, or point {option} at another disk"),
    errno.EDQUOT: ("the disk quota is used up", "free space there, or point {option} at another disk"),
    errno.EROFS: ("the file system is read-only", "make it writable, or point {option} at a writable folder"),
    errno.EACCES: ("permission denied", "make it writable by this user, or point {option} at a folder that is"),
    errno.EPERM: ("the operation is not permitted (an immutable file or folder?)", "lift that (chattr -i), or point {option} elsewhere"),
    errno.EIO: ("an input/output error (a failing disk?)", "check the disk, or point {option} at another one"),
}
# the same faults as DuckDB (and other libraries that wrap the system's error in their own) word them
_WORDS = {os.strerror(code): code for code in _FAULTS}
_QUOTED_PATH = re.compile(r"""["'](/[^"']+)["']""")
# Rust's way of naming the system's error (polars: an OSError with no errno, "No space left on device (os error 28)")
_OS_ERROR = re.compile(r"\(os error (\d+)\)")


def _fault_code(exc: BaseException) -> int | None:
    """The system's error number a failure carries: its errno, the number Rust writes in its message, or the words the
    system gives that number; None for anything else."""
    if isinstance(exc, OSError) and exc.errno in _FAULTS:
        return exc.errno
    text = str(exc)
    if (found := _OS_ERROR.search(text)) is not None and int(found.group(1)) in _FAULTS:
        return int(found.group(1))
    return next((code for words, code in _WORDS.items() if words in text), None)


def machine_fault(exc: BaseException, what: str, where: object, option: str) -> MachineFault | None:
    """`exc` as a one-line MachineFault naming `what` (e.g. "the warehouse") at `where`, the file the system named and
    what to do with `option` (e.g. "--warehouse"); None when `exc` is not a fault of the machine."""
    seen: BaseException | None = exc
    while seen is not None:
        code = _fault_code(seen)
        if code is not None:
            found = _QUOTED_PATH.search(str(seen))
            path = getattr(seen, "filename", None) or (found.group(1) if found else None)
            fault, todo = _FAULTS[code]
            at = f" ({path})" if path and str(path) != str(where) else ""
            return MachineFault(f"{what} {where}: {fault}{at}: {todo.format(option=option)}")
        seen = seen.__cause__ or seen.__context__
    return None


@contextmanager
def faults_named(what: str, where: object, option: str) -> Iterator[None]:
    """Within the block, a fault of the machine is raised again as a one-line MachineFault (see machine_fault)."""
    try:
        yield
    except MachineFault:
        raise
    except Exception as exc:
        fault = machine_fault(exc, what, where, option)
        if fault is None:
            raise
        raise fault from None


def names_faults(what: str, argument: str, option: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """A function whose faults of the machine are one-line MachineFaults naming `what` at its `argument`'s value."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        signature = inspect.signature(function)

        @functools.wraps(function)
        def named(*args: P.args, **kwargs: P.kwargs) -> R:
            with faults_named(what, signature.bind_partial(*args, **kwargs).arguments.get(argument), option):
                return function(*args, **kwargs)

        return named

    return decorate
