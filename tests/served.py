"""Processes a test starts and stops: a free port, a process in a session of its own stopped with its children
whatever happens, a wait with every log's tail when it times out."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from contextlib import ExitStack
from pathlib import Path

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def started(stack: ExitStack, command: list[str], cwd: Path, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A process in a session of its own, stopped with its children when the test ends, whatever happens."""
    output = stack.enter_context(log.open("ab"))
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)

    def stop() -> None:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()

    stack.callback(stop)
    return process


def wait_for(what: str, ready, timeout_s: float, logs: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while not ready():
        if time.monotonic() > deadline:
            tail = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in sorted(logs.glob("*.log")))
            pytest.fail(f"{what} not ready within {timeout_s:g} s\n{tail}")
        time.sleep(0.5)


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except OSError:
        return False
