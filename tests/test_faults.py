"""Faults: a killed load, a network that hangs or refuses. The warehouse stays whole; other rounds finish."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from conftest import PROJECT, RUN_SHARED, SHARED_MLPERF, archive, closed_port, descendants_of_dead, made_once, read_shipped_round

from mlperf_scaling.warehouse.connection import connect
from mlperf_scaling.warehouse.load import ROUND_TABLES

CHILD = """
import pickle
import sys

if len(sys.argv) > 5:
    # a round read, scored and validated once per test run: only the write, as the load-round step makes it, with
    # neither Prefect nor the parser imported (2 CPU-s per process killed)
    from mlperf_scaling.warehouse.connection import open_writer
    from mlperf_scaling.warehouse.load import replace_round

    with open(sys.argv[5], "rb") as handle:
        round_name, frames, ingestion = pickle.load(handle)
    print("loading", flush=True)
    with open_writer(sys.argv[3]) as connection:
        replace_round(connection, round_name, frames, ingestion)
else:
    from mlperf_scaling.tasks.parse.steps import read_round
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.rules import rules_for_round
    from mlperf_scaling.tasks.score.steps import score
    from mlperf_scaling.tasks.source.resolve import resolve_source
    from mlperf_scaling.tasks.load.steps import load_round, validate_round

    round_name = resolve_source(sys.argv[2]).round
    result = score.fn(read_round.fn(sys.argv[2], round_name, sys.argv[4], judge_for(rules_for_round(round_name))))
    print("loading", flush=True)
    load_round.fn(result, validate_round.fn(result), sys.argv[3])
print("committed", flush=True)
"""


def prepared_round(source: Path) -> Path:
    """A shipped round as the load step receives it, kept as a pickle for the run: read once per test run (shared
    with the other tests' `read_shipped_round`), scored and validated here."""
    from mlperf_scaling.contracts.enums import IngestionStatus
    from mlperf_scaling.tasks.load.steps import ingestion_row, validate_round
    from mlperf_scaling.tasks.score.steps import ScoredRound
    from mlperf_scaling.tasks.source.resolve import resolve_source

    kept = RUN_SHARED / f"{source.name}.prepared.pickle"
    with made_once(kept) as missing:
        if missing:
            resolved = resolve_source(str(source))
            data, provenance = read_shipped_round(resolved.round)
            scored = ScoredRound(resolved, provenance, data, dt.datetime.now(dt.UTC).replace(tzinfo=None))
            validated = validate_round.fn(scored)
            ingestion = ingestion_row(resolved, provenance, scored.started_at, IngestionStatus.SUCCEEDED,
                                      message=data.rules.note, validated=validated, data=data)
            part = kept.with_suffix(".part")
            part.write_bytes(pickle.dumps((resolved.round, validated.tables(), ingestion)))
            part.replace(kept)
    return kept


def ingest_command(source: Path, warehouse: Path, prepared: bool = True) -> list[str]:
    """The command of an ingestion in a separate process; `prepared`: a shipped round comes read and validated
    (`prepared_round`), where the test is about the load, not the reading."""
    command = [sys.executable, "-c", CHILD, str(PROJECT), str(source), str(warehouse), str(SHARED_MLPERF)]
    if prepared and source.parent == SHARED_MLPERF:
        command.append(str(prepared_round(source)))
    return command


def run_ingest(source: Path, warehouse: Path, kill_after_s: float | None = None, into_load: bool = False, mark: str = "") -> bool:
    """Ingest in a separate process; with `kill_after_s`, SIGKILL it that long after it starts (or, with
    `into_load`, after it starts writing). True when it ran to the end. Only a run killed while reading reads the
    round: reading v4.1 again for every kill aimed at the load took most of this file's minute and a half."""
    child = subprocess.Popen(ingest_command(source, warehouse, prepared=kill_after_s is None or into_load), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "MLPERF_TEST_MARK": mark})
    if kill_after_s is None:
        return child.wait(timeout=300) == 0
    if into_load:
        for line in child.stdout:
            if line.strip() == "loading":
                break
    try:
        child.wait(timeout=kill_after_s)
    except subprocess.TimeoutExpired:
        child.send_signal(signal.SIGKILL)
        child.wait()
        return False
    return child.returncode == 0


def checksums(warehouse: Path) -> dict[str, tuple]:
    """Row count and content hash per round table; a warehouse killed before its tables exist holds nothing."""
    with connect(warehouse, read_only=True) as connection:
        present = {row[0] for row in connection.execute("select table_name from information_schema.tables").fetchall()}
        if not set(ROUND_TABLES) <= present:
            return {table: (0, 0) for table in ROUND_TABLES}
        return {table: tuple(connection.execute(
            f"select count(*), coalesce(sum(hash(r)), 0) from (select * from {table} where round = 'v4.1') as r").fetchall()[0])
            for table in ROUND_TABLES}


def test_no_process_outlives_a_killed_ingestion(tmp_path):
    mark = uuid.uuid4().hex
    # killed while its parsing workers are busy: they, the fork server and the resource tracker must all go
    assert not run_ingest(archive("v4.1"), tmp_path / "w.duckdb", kill_after_s=2.0, mark=mark)
    deadline = time.monotonic() + 10
    while (left := descendants_of_dead(mark)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert left == []


def test_sigkill_during_ingestion_never_leaves_a_half_written_round(tmp_path):
    clean, crashed = tmp_path / "clean.duckdb", tmp_path / "crashed.duckdb"
    assert run_ingest(archive("v4.1"), clean)
    expected = checksums(clean)
    assert expected["scores"][0] == 154

    outcomes = []
    # kills while reading, then at points inside the write itself
    for delay, into_load in ((1.0, False), (0.0, True), (0.02, True), (0.05, True), (0.1, True), (0.15, True), (0.25, True)):
        finished = run_ingest(archive("v4.1"), crashed, kill_after_s=delay, into_load=into_load)
        state = checksums(crashed) if crashed.exists() else {t: (0, 0) for t in ROUND_TABLES}
        # either nothing of the round, or all of it: never a part
        assert state == expected or all(count == 0 for count, _ in state.values()), (delay, state)
        outcomes.append("finished" if finished else ("whole" if state == expected else "absent"))
        if state == expected:
            break
    assert "absent" in outcomes, outcomes  # at least one kill landed before the commit
    assert run_ingest(archive("v4.1"), crashed)  # the re-run after the kills
    assert checksums(crashed) == expected


def test_the_previous_version_stays_until_the_new_one_commits(tmp_path, real_slice):
    warehouse = tmp_path / "w.duckdb"
    assert run_ingest(real_slice, warehouse)  # the previous version: one system (and Clemson's logs listed as absent)
    previous = checksums(warehouse)
    assert previous["scores"][0] == 2
    assert run_ingest(archive("v4.1"), tmp_path / "clean.duckdb")
    new = checksums(tmp_path / "clean.duckdb")
    seen = []
    for delay in (0.0, 0.05, 0.1, 0.2, 0.4):
        run_ingest(archive("v4.1"), warehouse, kill_after_s=delay, into_load=True)
        state = checksums(warehouse)
        assert state in (previous, new), state
        seen.append("previous" if state == previous else "new")
        if state == new:
            break
    assert seen[0] == "previous"


class _SilentServer:
    """A TCP server that accepts connections and never answers: a remote that hangs."""

    def __init__(self):
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(16)
        self.port = self.socket.getsockname()[1]
        self.connections = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            self.connections.append(connection)

    def close(self):
        # shutdown() wakes the blocked accept(), close() alone does not: a thread still waiting at exit keeps its
        # frame, and through it the test module and DuckDB, alive, which nanobind reports as leaked instances
        with contextlib.suppress(OSError):
            self.socket.shutdown(socket.SHUT_RDWR)
        self.socket.close()
        self.thread.join(timeout=5)
        for connection in self.connections:
            connection.close()



def test_a_remote_that_hangs_or_refuses_fails_alone_after_bounded_retries(prefect_isolated, real_slice, warehouse_path, monkeypatch):
    from mlperf_scaling.flows.ingest import ingest_sources
    from mlperf_scaling.flows.outcome import result_of

    monkeypatch.setenv("MLPERF_NETWORK_TIMEOUT_S", "2")
    monkeypatch.setenv("MLPERF_NETWORK_RETRIES", "1")
    monkeypatch.setenv("MLPERF_RETRY_DELAY_S", "0.5")
    silent = _SilentServer()
    try:
        started = time.monotonic()
        state = ingest_sources(
            [f"http://127.0.0.1:{silent.port}/training_results_v9.8", f"http://127.0.0.1:{closed_port()}/training_results_v9.9",
             str(real_slice)],
            str(warehouse_path), force=True, return_state=True,
        )
        assert state.is_failed() and "2 of 3 rounds failed" in state.message
        summaries = result_of(state)
        elapsed = time.monotonic() - started
    finally:
        silent.close()
    by_round = {s.round: s for s in summaries}
    assert by_round["v9.8"].status == "failed" and "did not finish within 2 s" in by_round["v9.8"].message
    assert by_round["v9.9"].status == "failed" and "git ls-remote failed" in by_round["v9.9"].message
    assert by_round["v4.1"].status == "succeeded"
    assert elapsed < 60  # bounded: two attempts of two seconds for the hanging remote
    assert _ingestion_statuses(warehouse_path) == [("v4.1", "succeeded"), ("v9.8", "failed"), ("v9.9", "failed")]


def _ingestion_statuses(warehouse_path):
    # in a frame of its own: the failed flow's exceptions keep the test's frame alive until exit, and a DuckDB
    # connection held there would be reported by nanobind (DuckDB's bindings) as a leak when Python shuts down
    with connect(warehouse_path, read_only=True) as connection:
        return connection.execute("select round, status from ingestions order by round").fetchall()


def test_readers_keep_working_while_another_process_loads(tmp_path, real_slice):
    warehouse = tmp_path / "w.duckdb"
    assert run_ingest(real_slice, warehouse)
    child = subprocess.Popen(ingest_command(archive("v4.1"), warehouse), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen = set()
    reads = 0
    while child.poll() is None:
        with connect(warehouse, read_only=True) as reader:  # never refused, never a half-written round
            seen.add(reader.execute("select count(*) from scores where round = 'v4.1'").fetchall()[0][0])
        reads += 1
        time.sleep(0.05)
    assert child.returncode == 0 and reads > 5
    assert seen <= {2, 154}
    with connect(warehouse, read_only=True) as reader:
        assert reader.execute("select count(*) from scores where round = 'v4.1'").fetchall() == [(154,)]


def test_two_pipelines_started_together_both_finish_without_duplicates(tmp_path, real_slice):
    warehouse = tmp_path / "w.duckdb"
    children = [subprocess.Popen(ingest_command(source, warehouse), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                for source in (archive("v4.1"), archive("v4.0"))]
    for child in children:
        assert child.wait(timeout=300) == 0
    with connect(warehouse, read_only=True) as reader:
        counts = dict(reader.execute("select round, count(*) from scores group by round").fetchall())
        duplicates = reader.execute("select count(*) - count(distinct (round, submitter, system, benchmark)) from scores").fetchall()[0][0]
    assert counts == {"v4.0": 205, "v4.1": 154} and duplicates == 0


def test_a_remote_that_disappears_after_its_version_check_fails_that_round_only(
    prefect_isolated, real_slice, tmp_path, warehouse_path, monkeypatch
):
    import shutil

    import mlperf_scaling.tasks.source.resolve
    from mlperf_scaling.flows.ingest import ingest_sources
    from mlperf_scaling.flows.outcome import result_of

    monkeypatch.setenv("MLPERF_NETWORK_RETRIES", "1")
    monkeypatch.setenv("MLPERF_RETRY_DELAY_S", "0.2")
    remote = tmp_path / "remote" / "training_results_v4.0"
    shutil.copytree(real_slice, remote)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "data"]):
        subprocess.run(["git", *args], cwd=remote, check=True, capture_output=True)
    real_clone = mlperf_scaling.tasks.source.resolve.clone_sparse

    def vanishing_clone(url, target, timeout_s=900):
        shutil.rmtree(remote, ignore_errors=True)  # gone between `git ls-remote` and the clone
        return real_clone(url, target, timeout_s)

    monkeypatch.setattr(mlperf_scaling.tasks.source.resolve, "clone_sparse", vanishing_clone)
    summaries = result_of(ingest_sources([f"file://{remote}", str(real_slice)], str(warehouse_path), force=True, return_state=True))
    by_round = {s.round: s for s in summaries}
    assert by_round["v4.0"].status == "failed" and "git clone failed" in by_round["v4.0"].message
    assert by_round["v4.1"].status == "succeeded"


API_CHILD = """
import os, signal, sys, time
from mlperf_scaling.runtime.local_api import TemporaryApi

api = TemporaryApi()
print(api.process.pid, api.url, flush=True)
time.sleep(float(sys.argv[1]))
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_killed_command_leaves_no_temporary_prefect_api_behind():
    from urllib.request import urlopen

    # killed a second after starting the API, while it boots (on this test run's fresh database a boot takes 15 s)
    child = subprocess.Popen([sys.executable, "-c", API_CHILD, "1.0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env={**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false"})
    server_pid, url = child.stdout.readline().split()
    assert Path(f"/proc/{server_pid}").exists()
    assert child.wait(timeout=60) == -signal.SIGKILL  # killed at once: no exit handler ran
    deadline = time.monotonic() + 15
    while Path(f"/proc/{server_pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{server_pid}").exists(), "the temporary API outlived the command that started it"
    try:
        urlopen(f"{url}/health", timeout=2)
        raise AssertionError("the temporary API still answers")
    except OSError:
        pass


def test_the_temporary_api_registers_block_types_only_on_a_new_database(tmp_path, monkeypatch):
    from mlperf_scaling.runtime.local_api import database_started_before

    monkeypatch.delenv("PREFECT_API_DATABASE_CONNECTION_URL", raising=False)
    monkeypatch.delenv("PREFECT_SERVER_DATABASE_CONNECTION_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    assert not database_started_before()  # a first start registers them, as Prefect ships
    (tmp_path / "prefect.db").write_bytes(b"")
    assert database_started_before()
    monkeypatch.setenv("PREFECT_SERVER_DATABASE_CONNECTION_URL", "postgresql+asyncpg://db/prefect")
    assert not database_started_before()  # a database named elsewhere: Prefect's defaults
