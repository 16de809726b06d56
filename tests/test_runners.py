"""Parsing batches and figures as Prefect tasks on a Dask cluster give the same tables as this machine's pools."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from pathlib import Path

import duckdb
import pytest
from conftest import archive, fixture_round

from mlperf_scaling.runtime import runners


def round_tables(warehouse) -> dict[str, tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return {table: tuple(connection.execute(f"select count(*), coalesce(sum(hash(r)), 0) from {table} as r").fetchall()[0])
                for table in ("systems", "runs", "scores", "energy", "rejections")}


def completed_task_runs(name: str, at_least: int = 0, flow_run_id=None) -> int:
    """Task runs of that name (of that flow run, if given) the Prefect API holds as Completed; waits a few seconds for
    `at_least` (a worker's last state can reach the API just after its result reached us)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import TaskRunFilter, TaskRunFilterName

    async def count() -> int:
        async with get_client() as client:
            runs = await client.read_task_runs(task_run_filter=TaskRunFilter(name=TaskRunFilterName(like_=name)))
            return sum(run.state_name == "Completed" and flow_run_id in (None, str(run.flow_run_id)) for run in runs)

    deadline = time.monotonic() + 10
    found = asyncio.run(count())
    while found < at_least and time.monotonic() < deadline:
        time.sleep(0.2)
        found = asyncio.run(count())
    return found


@pytest.fixture(scope="module")
def dask_cluster():
    """One two-worker cluster for this file's tests (each start costs seconds); the runner set to it."""
    import distributed

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(runners.RUNNER_VARIABLE, runners.DASK)
        patch.setenv(runners.ADDRESS_VARIABLE, cluster.scheduler_address)
        try:
            yield cluster
        finally:
            runners.close()
            cluster.close()


def test_an_ingest_on_a_two_worker_dask_cluster_gives_the_same_tables(prefect_isolated, dask_cluster, tmp_path, monkeypatch):
    from mlperf_scaling.flows.ingest import ingest_round

    source = str(fixture_round("v5.1", tmp_path / "slice"))
    before, shipped = completed_task_runs("read-share"), completed_task_runs("parse-logs")
    assert ingest_round(source, str(tmp_path / "dask.duckdb")).status == "succeeded"
    on_dask = completed_task_runs("read-share", at_least=before + 2)
    assert on_dask == before + 2  # each worker read its share from the source, as a task run the Prefect API knows
    assert completed_task_runs("parse-logs") == shipped  # and no log went through the scheduler
    monkeypatch.setenv(runners.RUNNER_VARIABLE, runners.LOCAL)
    assert ingest_round(source, str(tmp_path / "local.duckdb")).status == "succeeded"
    assert completed_task_runs("read-share") == on_dask  # the local pools: no task run per batch
    assert round_tables(tmp_path / "dask.duckdb") == round_tables(tmp_path / "local.duckdb")
    assert round_tables(tmp_path / "dask.duckdb")["runs"][0] == 10


def test_figures_are_task_runs_on_the_cluster_too(prefect_isolated, dask_cluster):
    from prefect import flow

    from mlperf_scaling.runtime.dispatch import map_on_cores
    from mlperf_scaling.runtime.pools import DRAW

    @flow
    def draw() -> tuple:
        from prefect.runtime import flow_run

        return map_on_cores(len, [([1, 2, 3],), ("ab",)], DRAW), flow_run.id

    drawn, run_id = draw()
    assert drawn == [3, 2]
    # this flow run's own (tests beside this one draw in the same API)
    assert completed_task_runs("draw-plots", at_least=2, flow_run_id=run_id) == 2


def write_note(name: str, folder, text: str):
    """A module-level drawing stand-in: writes a file into `folder` and names it."""
    path = folder / "sub" / f"{name}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return {"note": [path]}


def test_files_drawn_on_the_cluster_come_back_to_the_commands_folder(prefect_isolated, dask_cluster, tmp_path):
    from prefect import flow

    from mlperf_scaling.runtime.dispatch import map_on_cores
    from mlperf_scaling.runtime.pools import DRAW

    folder = tmp_path / "plots"  # the workers never write here: they draw into scratch folders of their own

    @flow
    def draw() -> list:
        return map_on_cores(write_note, [("a", folder, "first"), ("b", folder, "second")], DRAW, writes_into=1)

    assert draw() == [{"note": [folder / "sub" / "a.txt"]}, {"note": [folder / "sub" / "b.txt"]}]
    assert (folder / "sub" / "a.txt").read_text() == "first" and (folder / "sub" / "b.txt").read_text() == "second"


def test_a_round_the_workers_cannot_see_is_read_by_the_command_with_the_same_tables(prefect_isolated, dask_cluster, tmp_path,
                                                                                    monkeypatch):
    from mlperf_scaling.flows.ingest import ingest_round
    from mlperf_scaling.tasks.parse import shares

    source = str(archive("v0.5"))
    assert ingest_round(source, str(tmp_path / "shares.duckdb")).status == "succeeded"
    # the command sees another size than the workers: as if the archive at that path were another file for them
    monkeypatch.setattr(shares, "size_here", lambda found: 5)
    assert ingest_round(source, str(tmp_path / "shipped.duckdb")).status == "succeeded"  # read here, its logs sent
    assert round_tables(tmp_path / "shipped.duckdb") == round_tables(tmp_path / "shares.duckdb")


def test_a_worker_that_cannot_see_the_source_says_so_and_the_command_reads_it(prefect_isolated, tmp_path, monkeypatch):
    from mlperf_scaling.tasks.parse import shares
    from mlperf_scaling.tasks.parse.read import Share
    from mlperf_scaling.tasks.source.resolve import resolve_source

    source = resolve_source(str(archive("v4.1")))
    with pytest.raises(shares.SourceNotVisible, match="sees a different file at .*training_results_v4.1.tar.gz"):
        shares.read_source_share(source, Share(0, 2), 5, None, 1 << 30)
    gone = dataclasses.replace(source, location=str(tmp_path / "elsewhere.tar.gz"))
    with pytest.raises(shares.SourceNotVisible, match="cannot see .*elsewhere.tar.gz"):
        shares.read_source_share(gone, Share(0, 2), None, None, 1 << 30)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(("address", "said"), [
    ("not-an-address", "dask_address: String should match pattern"),
    (None, "has no worker after 3 s: start one (`dask worker tcp://127.0.0.1:"),  # a real scheduler, no worker
    ("tcp://127.0.0.1:{closed}", "did not answer within 3 s"),
])
def test_a_cluster_that_cannot_take_work_is_refused_before_any_work_in_one_line(address, said, prefect_isolated, tmp_path, monkeypatch,
                                                                                 capsys):
    import subprocess
    import sys

    from mlperf_scaling.cli import main

    scheduler = None
    if address is None:  # `dask scheduler` in a process of its own, as a platform engineer starts one
        port = _free_port()
        scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                      str(port), "--dashboard-address", ":0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        address = f"tcp://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while subprocess.run([sys.executable, "-c", f"import socket; socket.create_connection(('127.0.0.1', {port}), 1)"],
                             capture_output=True).returncode and time.monotonic() < deadline:
            time.sleep(0.3)
    try:
        monkeypatch.setenv("MLPERF_TASK_RUNNER", "dask")
        monkeypatch.setenv("MLPERF_DASK_ADDRESS", address.replace("{closed}", str(_free_port())))
        monkeypatch.setenv("MLPERF_DASK_TIMEOUT_S", "3")
        started = time.monotonic()
        mirror = fixture_round("v5.1", tmp_path / "mirror").parent
        assert main(["run", "--mirror", str(mirror), "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")]) == 2
        err = capsys.readouterr().err
        assert time.monotonic() - started < 15 and err.count("\n") == 1 and said in err, err
        assert not (tmp_path / "w.duckdb").exists() and not (tmp_path / "reports").exists()  # nothing done, nothing left
    finally:
        if scheduler is not None:
            scheduler.terminate()
            scheduler.wait(timeout=30)


def _scheduler_lost_midway(pid: int, address: str) -> float:
    """A flow connected to the cluster that loses its scheduler (killed), then asks for work: seconds until it is told."""
    import signal

    from mlperf_scaling.runtime.dispatch import map_on_cores
    from mlperf_scaling.runtime.pools import DRAW

    runners._dask_runner()  # connected to the cluster (no task run: the tests beside this one count theirs)
    os.kill(pid, signal.SIGKILL)  # then its machine is lost
    started = time.monotonic()
    with pytest.raises(runners.ClusterLost, match=f"the Dask scheduler at {address} was lost midway .*: start it again"):
        map_on_cores(len, [([1],), ([2],)], DRAW)
    return time.monotonic() - started


def test_a_scheduler_lost_midway_is_one_line_within_seconds(prefect_isolated, tmp_path, monkeypatch):
    import subprocess
    import sys

    import dask
    from distributed import Client
    from prefect import flow

    scheduler_lost_midway = flow(_scheduler_lost_midway)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    # the flow is this module's: the scheduler and the worker import it, as they import a deployment's flow module
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]))
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(port),
                                  "--dashboard-address", ":0"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard",
                               "--local-directory", str(tmp_path)], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    monkeypatch.setenv(runners.RUNNER_VARIABLE, runners.DASK)
    monkeypatch.setenv(runners.ADDRESS_VARIABLE, address)
    monkeypatch.setenv(runners.TIMEOUT_VARIABLE, "3")  # how long the lost scheduler is given to come back
    runners.close()  # a runner entered by the tests before this one would be kept: this test needs its own
    connect_timeout = dask.config.get("distributed.comm.timeouts.connect")
    try:
        with Client(address, timeout=60, set_as_default=False) as client:
            client.wait_for_workers(1, timeout=60)

        assert scheduler_lost_midway(scheduler.pid, address) < 15
        scheduler.wait()
    finally:
        runners.close_quietly()
        dask.config.set({"distributed.comm.timeouts.connect": connect_timeout})
        for process in (worker, scheduler):
            process.kill()
            process.wait()
