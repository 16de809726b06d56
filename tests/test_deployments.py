"""The pipeline deployment, run as a platform engineer runs it: a served Prefect API, a `dask scheduler` and two
`dask worker` processes (one started in another folder), the deployment run through `mlperf-scaling serve` and through
`prefect deploy` + a process worker. Each run must end Completed, with every figure its report links present, the
rounds read by the Dask workers themselves, and the same tables as a run on this machine."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import pytest
from conftest import PROJECT, SHARED_MLPERF, archive
from served import answers, free_port, started, wait_for
from test_runners import round_tables

from mlperf_scaling.tasks.publish.steps import check_reports

ROUND = "v0.5"  # the smallest shipped round: every step, every kind of figure, in the least time

# runs a deployment to its end; prints its final state and the `read-share` task runs of its round's flow run
RUN_DEPLOYMENT = """
import json, sys
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterParentFlowRunId
from prefect.deployments import run_deployment

run = run_deployment(sys.argv[1], parameters=json.loads(sys.argv[2]), timeout=float(sys.argv[3]))
with get_client(sync_client=True) as client:
    rounds = client.read_flow_runs(flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[run.id])))
    ids = {run.id, *(child.id for child in rounds)}
    names = [task.name for task in client.read_task_runs(limit=200) if task.flow_run_id in ids]
print(json.dumps({"state": run.state.type.value if run.state else None, "message": run.state.message if run.state else None,
                  "read_shares": sum(name.startswith("read-share") for name in names)}))
"""


def _run_deployment(name: str, parameters: dict, env: dict[str, str], logs: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", RUN_DEPLOYMENT, name, json.dumps(parameters), "900"], env=env, capture_output=True,
                          text=True, timeout=1000)
    if done.returncode != 0:
        tail = "\n".join(f"--- {log.name}\n{log.read_text(errors='replace')[-3000:]}" for log in sorted(logs.glob("*.log")))
        pytest.fail(f"running {name} failed:\n{done.stderr[-3000:]}\n{tail}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _serving(stack: ExitStack, options: list[str], cwd: Path, env: dict[str, str], log: Path, logs: Path) -> subprocess.Popen:
    served = started(stack, [sys.executable, "-m", "mlperf_scaling.cli", "serve", *options], cwd, env, log)
    wait_for("mlperf-scaling serve", lambda: b"serving deployments" in log.read_bytes() or served.poll() is not None, 120, logs)
    assert served.poll() is None, log.read_text()
    time.sleep(2)  # registered before the message; its runner polls from here
    return served


def _assert_published(reports: Path) -> None:
    page = reports / ROUND / "index.html"
    assert page.is_file(), f"no report at {page}"
    figures = list((reports / ROUND / "plots").glob("*.svg"))
    assert len(figures) >= 10, figures  # v0.5 has six benchmarks, each with several views
    assert check_reports.fn(str(reports), [ROUND]) == {}  # every page links only files that are there


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    """A served Prefect API of its own (no other test registers deployments in it), a `dask scheduler` and two
    `dask worker` processes, the second started in a folder of its own; the environment a command there gets."""
    root = tmp_path_factory.mktemp("platform")
    logs = root / "logs"
    logs.mkdir()
    api_port, dask_port = free_port(), free_port()
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLPERF_"))}
    base |= {"PREFECT_HOME": str(root / "prefect-home"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
             "PREFECT_API_BLOCKS_REGISTER_ON_START": "false", "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "5"}
    api = f"http://127.0.0.1:{api_port}/api"
    env = base | {"PREFECT_API_URL": api, "MLPERF_REPORTS_ADDRESS": "127.0.0.1:0", "PREFECT_WORKER_QUERY_SECONDS": "2", "PREFECT_RUNNER_POLL_FREQUENCY": "2",
                  "MLPERF_TASK_RUNNER": "dask", "MLPERF_DASK_ADDRESS": f"tcp://127.0.0.1:{dask_port}", "MLPERF_MIRROR": str(SHARED_MLPERF)}
    with ExitStack() as stack:
        started(stack, [sys.executable, "-m", "prefect", "server", "start", "--no-ui", "--host", "127.0.0.1", "--port", str(api_port)],
                 root, base, logs / "api.log")
        started(stack, [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", str(dask_port),
                         "--dashboard-address", ":0"], root, env, logs / "scheduler.log")
        for k, folder in enumerate([root, root / "elsewhere"]):
            folder.mkdir(exist_ok=True)
            started(stack, [sys.executable, "-m", "distributed.cli.dask_worker", env["MLPERF_DASK_ADDRESS"], "--nworkers", "1",
                             "--nthreads", "1", "--no-dashboard", "--local-directory", str(folder / f"dask-{k}")],
                     folder, env, logs / f"worker-{k}.log")
        wait_for("the Prefect API", lambda: answers(f"{api}/health"), 180, logs)

        def two_workers() -> bool:
            from distributed import Client

            try:
                with Client(env["MLPERF_DASK_ADDRESS"], timeout=5, set_as_default=False) as client:
                    return len(client.nthreads()) == 2
            except OSError:
                return False

        wait_for("two Dask workers", two_workers, 60, logs)
        yield root, env, stack, logs


@pytest.fixture(scope="module")
def local_tables(tmp_path_factory):
    """The round's tables from a run on this machine's pools."""
    folder = tmp_path_factory.mktemp("local")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLPERF_")} | {"MLPERF_TASK_RUNNER": "local"}
    done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "run", "--rounds", ROUND, "--mirror", str(SHARED_MLPERF),
                           "--warehouse", str(folder / "w.duckdb"), "--reports", str(folder / "reports")], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return round_tables(folder / "w.duckdb")


def test_the_served_pipeline_deployment_runs_on_the_dask_workers_and_publishes_every_figure(platform, local_tables):
    archive(ROUND)  # fails loudly when the round is absent
    root, env, stack, logs = platform
    here = root / "serve"
    here.mkdir()
    serve_env = env | {"MLPERF_WAREHOUSE": str(here / "w.duckdb"), "MLPERF_REPORTS": str(here / "reports")}
    with ExitStack() as own:  # this serve ends with this test: the next one serves the same names
        _serving(own, [], here, serve_env, logs / "serve.log", logs)
        ran = _run_deployment("mlperf-pipeline/pipeline-serve", {"rounds": [ROUND]}, env, logs)
    assert ran["state"] == "COMPLETED", ran
    assert ran["read_shares"] == 2  # the two workers read the round themselves, a share each
    _assert_published(here / "reports")
    assert round_tables(here / "w.duckdb") == local_tables


def test_the_deployed_pipeline_runs_through_a_process_worker_on_the_dask_workers(platform, local_tables):
    archive(ROUND)
    root, env, stack, logs = platform
    deploying = root / "deploy"  # prefect.yaml as shipped, deployed from a folder of its own (entrypoints are module paths)
    deploying.mkdir()
    shutil.copy(PROJECT / "prefect.yaml", deploying / "prefect.yaml")
    for command in (["work-pool", "create", "local", "--type", "process"], ["--no-prompt", "deploy", "--name", "pipeline"]):
        done = subprocess.run([sys.executable, "-m", "prefect", *command], cwd=deploying, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    home = root / "worker-home"  # the pull step's working directory: where the relative warehouse and reports land
    home.mkdir()
    elsewhere = root / "worker-cwd"
    elsewhere.mkdir()
    started(stack, [sys.executable, "-m", "prefect", "worker", "start", "--pool", "local"], elsewhere,
             env | {"MLPERF_SCALING_HOME": str(home)}, logs / "process-worker.log")
    ran = _run_deployment("mlperf-pipeline/pipeline", {"rounds": [ROUND]}, env, logs)
    assert ran["state"] == "COMPLETED", ran
    assert ran["read_shares"] == 2
    _assert_published(home / "reports")
    assert round_tables(home / "data" / "mlperf.duckdb") == local_tables


SCHEDULED_RUN = """
import json, sys, time
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterName

deadline = time.monotonic() + float(sys.argv[1])
with get_client(sync_client=True) as client:
    while True:
        runs = [run for run in client.read_flow_runs(deployment_filter=DeploymentFilter(name=DeploymentFilterName(any_=["watch-releases-serve"])))
                if run.auto_scheduled]  # made by the API's scheduler, not by hand
        ended = [run for run in runs if run.state and run.state.is_final()]
        if ended or time.monotonic() > deadline:
            break
        time.sleep(2)
print(json.dumps({"scheduled": len(runs), "ended": [run.state.type.value for run in ended]}))
"""


def test_the_watch_runs_on_its_schedule_through_serve(platform, tmp_path):
    from conftest import cut_slice
    from test_watch import publish

    root, env, stack, logs = platform
    work, remote = tmp_path / "work", tmp_path / "remote"
    work.mkdir()
    remote.mkdir()
    publish(cut_slice("v4.1", "NVIDIA", "b200_preview_nemo", "llama2_70b_lora", work), remote)  # a remote with one round
    here = root / "scheduled"
    here.mkdir()
    serve_env = env | {"MLPERF_WAREHOUSE": str(here / "w.duckdb"), "MLPERF_REPORTS": str(here / "reports"), "MLPERF_REMOTE_BASE": str(remote)}
    with ExitStack() as own:
        _serving(own, ["--cron", "* * * * *"], here, serve_env, logs / "serve-scheduled.log", logs)  # every minute
        done = subprocess.run([sys.executable, "-c", SCHEDULED_RUN, "240"], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["scheduled"] >= 1 and found["ended"][:1] == ["COMPLETED"], (found, (logs / "serve-scheduled.log").read_text()[-3000:])
    assert (here / "reports" / "v4.1" / "index.html").is_file()  # the watch found the round and ran the pipeline for it
