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
import time

_code: int | None = None


def arm(code: int) -> None:
    """End the process with `code` once the other exit handlers have run."""
    global _code
    _code = code


def _stop_helpers(wait_s: float = 2.0) -> None:
    """Stop multiprocessing's forkserver and resource tracker, and reap them: left to find our end on their own, they
    outlive the command for about a second, then linger as zombies until something reaps them. Each ends when the
    pipe we hold to it closes; it is waited for at most `wait_s` (a helper that a surviving process keeps alive is
    then left to end on its own, rather than hang the exit)."""
    for module, attribute, pid_name, fd_name in (("multiprocessing.forkserver", "_forkserver", "_forkserver_pid", "_forkserver_alive_fd"),
                                                 ("multiprocessing.resource_tracker", "_resource_tracker", "_pid", "_fd")):
        helper = getattr(sys.modules.get(module), attribute, None)  # never imported here: only what the command started
        pid, fd = getattr(helper, pid_name, None), getattr(helper, fd_name, None)  # Python's own (3.8 to 3.13)
        if not isinstance(pid, int) or not isinstance(fd, int):
            continue
        try:
            os.close(fd)
            setattr(helper, fd_name, None)
            setattr(helper, pid_name, None)
            deadline = time.monotonic() + wait_s
            while os.waitpid(pid, os.WNOHANG)[0] == 0 and time.monotonic() < deadline:
                time.sleep(0.005)
        except OSError:  # gone already, or reaped by someone else: nothing left to wait for
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
