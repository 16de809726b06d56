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


def _end_now() -> None:
    if _code is None:
        return
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader that went away, a stream already closed: nothing left to say
            pass
    os._exit(_code)


atexit.register(_end_now)
