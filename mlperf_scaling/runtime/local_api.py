"""Flow runs on Prefect's temporary local API when no served one is configured, started at once, beside the imports.

Left to itself, Prefect starts its temporary API at the first flow run: after this process has imported everything,
and after importing the whole server package here too just to launch it; then the run waits for it to boot. Started
here instead, with Prefect's public command (`prefect server start`, no UI, the services nobody
reads turned off by their settings), the server boots in its own process while this one imports the flows. With
PREFECT_API_URL set (in the environment, a profile or prefect.toml: a served API), nothing temporary is started, and
heartbeats are sent when the user set PREFECT_FLOWS_HEARTBEAT_FREQUENCY.
"""

from __future__ import annotations

import atexit
import ctypes
import importlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mlperf_scaling.failures import ExpectedFailure

_PR_SET_PDEATHSIG = 1
# Services of a temporary API that nobody reads, each a writer to its SQLite file: automations (triggers and their
# actions), the event feed (event_persister; task runs are recorded from the event stream by task_run_recorder, which
# stays), and what only deployments and workers need (the scheduler, late and paused runs, the foreman, the
# repossessor, the cleanups). With the triggers, a main job stood still on "database is locked" in their evaluation.
_QUIET_SERVICES = {f"PREFECT_SERVER_SERVICES_{name}_ENABLED": "false" for name in (
    "TRIGGERS", "EVENT_PERSISTER", "SCHEDULER", "LATE_RUNS", "PAUSE_EXPIRATIONS", "FOREMAN", "REPOSSESSOR", "CANCELLATION_CLEANUP",
    "CLEANUP_RECONCILER")}
DAY_S = 86_400


def history_kept(days: float) -> dict[str, str]:
    """The temporary API deletes the flow runs (with their task runs and logs) that ended more than `days` ago, each
    time it starts (Prefect's database vacuum; at least an hour): its database keeps a bounded history."""
    return {"PREFECT_SERVER_SERVICES_DB_VACUUM_ENABLED": "flow_runs,orphans",
            "PREFECT_SERVER_SERVICES_DB_VACUUM_RETENTION_PERIOD": str(max(3601, round(days * DAY_S)))}  # Prefect: over an hour
# Registering Prefect's block types at every start first imports every installed Prefect collection, prefect-dask and
# with it dask.distributed, for types the database has held since its first start.
_BLOCK_TYPES_REGISTERED = {"PREFECT_API_BLOCKS_REGISTER_ON_START": "false", "PREFECT_MEMOIZE_BLOCK_AUTO_REGISTRATION": "false"}


class ApiDidNotStart(ExpectedFailure):
    """The temporary Prefect API could not start: the command says why in one line and ends."""


# Prefect's database grows by megabytes per run: below this, a start that failed is put down to the disk
LOW_SPACE_BYTES = 64 * 1024 * 1024


def home_problem() -> str | None:
    """What about Prefect's home keeps its database from being written (too little space left there), or None."""
    from prefect.settings import get_current_settings

    home = Path(get_current_settings().home).expanduser()
    existing = next((folder for folder in (home, *home.parents) if folder.exists()), home)
    free = shutil.disk_usage(existing).free
    if free < LOW_SPACE_BYTES:
        return (f"Prefect's home (PREFECT_HOME) {home} has {free / 1e6:.1f} MB free, too little for its database: free space "
                "there, or set PREFECT_HOME to a folder on another disk")
    return None


def api_problem(exc: BaseException) -> str | None:
    """Why Prefect's API failed this command midway, in one line, when the machine is the cause (Prefect's home full)
    or the API stopped answering; None for anything else."""
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    if not isinstance(exc, PrefectHTTPStatusError | httpx.TransportError):
        return None
    if (home := home_problem()) is not None:
        return f"Prefect's API failed midway: {home}"
    where = os.environ.get("PREFECT_API_URL") or "the temporary API"
    if isinstance(exc, httpx.TransportError):
        return f"Prefect's API at {where} stopped answering ({type(exc).__name__}): start it again, or unset PREFECT_API_URL to use a temporary one"
    return f"Prefect's API at {where} failed midway ({str(exc).split(' - ')[0]}): see its log"


class TemporaryApi:
    """Prefect's temporary API server in a child process that ends with this one, killed or not."""

    def __init__(self, history_days: float = 7.0, serving: bool = False) -> None:
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.history_days = history_days
        self.serving = serving  # for `serve`: every service, the scheduler of the deployments' schedules above all
        self._errors = tempfile.TemporaryFile()  # what the server says on stderr, read only when it fails to start
        self._start()
        atexit.register(self.stop)  # before Prefect's own exit handlers, so it runs after their last flush of logs

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api"

    def _start(self) -> None:
        self.port = _free_port()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(self.port), "--no-ui",
             "--log-level", "ERROR"],
            env={**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", **({} if self.serving else _QUIET_SERVICES),
                 **history_kept(self.history_days),
                 **(_BLOCK_TYPES_REGISTERED if database_started_before() else {})},
            stdout=self._errors, stderr=subprocess.STDOUT,  # its banner is not this command's output; read if it fails
            # a session of its own: Ctrl-C reaches the command, which records its runs as Cancelled here before it ends
            # (and with it, this server: _end_with_parent)
            start_new_session=True,
            preexec_fn=_end_with_parent,  # noqa: PLW1509  # a prctl call only (Linux), nothing that takes a lock
        )

    def wait_until_ready(self, timeout_s: float) -> None:
        """Return once the API answers; raise ApiDidNotStart (one line: why, where, what to do) if it does not within
        `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process is not None
            code = self.process.poll()
            if code is not None and self._port_taken():  # by another process meanwhile: another one
                self._start()
                continue
            if code is not None:
                raise ApiDidNotStart(f"the temporary Prefect API exited with status {code} before it answered: "
                                     f"{home_problem() or self._last_error()}")
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=2) as response:
                    if response.status == 200:
                        lower_priority(self.process.pid)
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.05)
        self.stop()
        raise ApiDidNotStart(f"the temporary Prefect API did not answer within {timeout_s:.0f} s "
                             f"(PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS){': ' + problem if (problem := home_problem()) else ''}")

    def _last_error(self) -> str:
        self._errors.seek(0)
        lines = [line for line in self._errors.read().decode(errors="replace").splitlines() if line.strip()]
        return lines[-1].strip() if lines else "it said nothing"

    def _port_taken(self) -> bool:
        self._errors.seek(0)
        taken = b"address already in use" in self._errors.read().lower()
        self._errors.seek(0)
        self._errors.truncate()
        return taken

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def lower_priority(pid: int) -> None:
    # Booted, the server mostly records what the runs already sent (events, logs): below the reading and the analysis
    # it waits for their spare moments; a request that holds up a run still gets a core at once
    try:
        os.setpriority(os.PRIO_PROCESS, pid, min(19, os.getpriority(os.PRIO_PROCESS, pid) + 5))  # 5 below where it runs
    except (OSError, AttributeError):  # gone already, or not a POSIX system
        pass


def database_started_before() -> bool:
    """Whether the temporary API's database is Prefect's default file and exists (its first start registered the block
    types); a database named in the environment is left to Prefect's defaults."""
    if any(name in os.environ for name in ("PREFECT_API_DATABASE_CONNECTION_URL", "PREFECT_SERVER_DATABASE_CONNECTION_URL")):
        return False
    home = Path(os.environ.get("PREFECT_HOME", "~/.prefect")).expanduser()
    return (home / "prefect.db").is_file()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# looked up here, not in the child between fork and exec, where loading a library could wait on a lock forever
_PRCTL = ctypes.CDLL(None, use_errno=True).prctl if sys.platform.startswith("linux") else None


def _end_with_parent() -> None:
    # in the child, before exec: SIGTERM when the parent ends, so a killed run leaves no server behind
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGTERM)


def start_early(history_days: float = 7.0) -> TemporaryApi | None:
    """A temporary API, started now, unless PREFECT_API_URL is set in the environment or Prefect is already
    configured in this process (a test harness). `local_runs` stops it again if a profile names a served API."""
    if os.environ.get("PREFECT_API_URL") or "prefect.settings" in sys.modules:
        return None
    return TemporaryApi(history_days)


@contextmanager
def local_runs(early: TemporaryApi | None, preload: list[str] = ()) -> Iterator[None]:  # type: ignore[assignment]
    """Flow runs on a served API when one is configured, else on a temporary one (`early`, or one started now):
    imports `preload` (the flows about to run) while it boots, and turns heartbeats off on it (on a served API, unless
    the user asked for them)."""
    from prefect.settings import PREFECT_API_URL, PREFECT_UI_URL, temporary_settings

    served = PREFECT_API_URL.value()
    if served:
        if early is not None:
            early.stop()
        for module in preload:
            importlib.import_module(module)
        with heartbeats_if_asked():
            yield
        return
    api = early or TemporaryApi()
    for module in preload:
        importlib.import_module(module)
    api.wait_until_ready(float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")))
    # stopped at exit (TemporaryApi registers it), after Prefect has sent its last logs and events; no UI is served
    # there, so no "View at" links to one
    with temporary_settings(updates={PREFECT_API_URL: api.url, PREFECT_UI_URL: ""}), without_heartbeats():
        yield


def heartbeats_asked() -> bool:
    """Whether the user set PREFECT_FLOWS_HEARTBEAT_FREQUENCY (environment, profile or prefect.toml), as Prefect's guide
    to detecting crashed ("zombie") runs tells them to, rather than leaving Prefect's default."""
    from prefect.settings import get_current_settings

    return "heartbeat_frequency" in get_current_settings().flows.model_fields_set


@contextmanager
def heartbeats_if_asked() -> Iterator[None]:
    """A command's flow runs on a served API send heartbeats only when the user asked for them.

    Prefect sends them by default, and a flow run that ends waits for its heartbeat thread to wake from its sleep, up
    to a second at the end of every flow run and subflow, on a served API. Nothing reads them but an automation the user creates to mark a silent run Crashed, and
    Prefect's guide to it has the user set PREFECT_FLOWS_HEARTBEAT_FREQUENCY: then they are sent. Deployment runs
    (`serve`, a worker) are not started here and keep Prefect's default."""
    if heartbeats_asked():
        yield
        return
    with without_heartbeats():
        yield


@contextmanager
def without_heartbeats() -> Iterator[None]:
    """Flow runs without heartbeats, for an API that lives no longer than this process (the tests' too).

    Flow-run heartbeats let a server notice a crashed run: they serve nothing there, and every flow run waits up to a
    second on exit for the heartbeat thread's sleep."""
    import prefect.settings
    from prefect.settings import temporary_settings

    heartbeat = getattr(prefect.settings, "PREFECT_FLOWS_HEARTBEAT_FREQUENCY")  # noqa: B009  # defined dynamically
    with temporary_settings(updates={heartbeat: None}):
        yield
