"""Ctrl-C (SIGINT) and SIGTERM end a command at once, in one line, with the warehouse as it was.

Left to Prefect and Python, an interrupt becomes a KeyboardInterrupt in the middle of a flow run: the run is marked
Crashed, the engine then retries an API that the same signal has stopped, and worker processes print their own
tracebacks, for minutes. Nothing needs that care here: a round is written to a draft copy and swapped in only once
complete (warehouse/connection.py), so a process that simply stops leaves every loaded round as it was and no round
half-written. The signal is seen where Python's C handler writes it (`signal.set_wakeup_fd`), whichever Python handler
Prefect has installed for the flow run meanwhile, by a thread that says what was interrupted and ends the process.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_SIGNALS: dict[int, str] = {signal.SIGINT.value: "SIGINT", signal.SIGTERM.value: "SIGTERM"}
_doing = {"what": ""}  # what the command is busy with, for the one line


def now_doing(what: str) -> None:
    """Say what the command is busy with (`ingesting v4.1`), for the line an interrupt prints."""
    _doing["what"] = what


def _ignore(signum, frame) -> None:  # noqa: ANN001
    """The Python-level handler: nothing; the watcher ends the process (no KeyboardInterrupt unwinding)."""


def _message(command: str, signum: int) -> bytes:
    busy = f" while {_doing['what']}" if _doing["what"] else ""
    return (f"mlperf-scaling: {command} interrupted ({_SIGNALS[signum]}){busy}: nothing half-written is kept, "
            "the rounds loaded before are as they were\n").encode()


@contextmanager
def end_at_once_on_signals(command: str) -> Iterator[None]:
    """While the block runs, SIGINT or SIGTERM print one line and end the process with 130 or 143."""
    try:
        previous = {number: signal.signal(number, _ignore) for number in _SIGNALS}
    except ValueError:  # not the main thread (an embedding application): leave signals to it
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous_fd = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    stop = threading.Event()

    def watch() -> None:
        while True:
            try:
                received = os.read(read_end, 64)
            except OSError:
                return
            if stop.is_set() or not received:
                return
            for signum in received:
                if signum in _SIGNALS:
                    # the line is the last one: stderr goes to /dev/null first, for the other threads (Prefect logs
                    # "Crashed" as the same signal reaches its engine, and could otherwise print after it)
                    own = os.dup(sys.stderr.fileno())
                    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stderr.fileno())
                    context = sys.modules.get("mlperf_scaling.runtime.run_context")  # only where flows ran: Prefect is loaded
                    if context is not None:
                        context.cancel_noted_flow_runs(f"interrupted ({_SIGNALS[signum]})")
                    os.write(own, _message(command, signum))
                    os._exit(128 + signum)  # the draft of a round being written is dropped by the next writer

    watcher = threading.Thread(target=watch, name="interrupts", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous_fd)
        for number, handler in previous.items():
            signal.signal(number, handler)
        stop.set()
        os.write(write_end, b"\0")  # wakes the watcher, which sees `stop` and ends
        watcher.join(timeout=1)
        os.close(write_end)
        os.close(read_end)
        _doing["what"] = ""
