"""The command's last step: once every exit handler has run, end the process without tearing the interpreter down.

Tearing down frees every object one at a time: time spent on memory the system takes back at once. This handler is registered when the command line is imported, before Prefect, multiprocessing or the temporary
API register theirs, so it runs after all of them (handlers run last registered, first run): Prefect has sent its
logs and events, the parsing workers and the API have stopped, every warehouse connection was closed where it was
opened. Armed only by the `mlperf-scaling` program itself; `main()` called in-process (tests) exits as Python does.
"""

from __future__ import annotations

import atexit
import logging
import os
import sys

_code: int | None = None


def arm(code: int) -> None:
    """End the process with `code` once the other exit handlers have run."""
    global _code
    _code = code


def _stop_helpers() -> None:
    """Stop multiprocessing's forkserver and resource tracker, and wait for them: left to find our end on their own,
    they outlive the command for about a second, then linger as zombies until something reaps them."""
    for module, attribute in (("multiprocessing.forkserver", "_forkserver"), ("multiprocessing.resource_tracker", "_resource_tracker")):
        helper = getattr(sys.modules.get(module), attribute, None)  # never imported here: only what the command started
        try:
            helper._stop()  # type: ignore[union-attr]  # Python's own, as its tests stop them (3.8 to 3.13)
        except Exception:  # noqa: BLE001  # an exit must not fail for a private method gone: the helper then ends on its own
            pass


def _end_now() -> None:
    if _code is None:
        return
    _stop_helpers()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, a stream already closed: nothing left to say
            pass
    os._exit(_code)


atexit.register(_end_now)
