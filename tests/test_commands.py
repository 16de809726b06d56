"""The command line as a user meets it, in a process of its own: mistakes said in one line before Prefect starts,
an interrupt that ends the command at once with the warehouse as it was, a closed pipe, exports that come back."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from conftest import archive, descendants_of_dead, fixture_round, ingest_source

from mlperf_scaling.warehouse.load import ANALYSIS_TABLES, ROUND_TABLES


def command(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", *args], capture_output=True, text=True, cwd=kwargs.pop("cwd", None),
                          env={**os.environ, **(env or {})}, timeout=120, **kwargs)


@pytest.fixture
def loaded(tmp_path) -> Path:
    """A warehouse holding the committed v5.1 slice."""
    warehouse = tmp_path / "w.duckdb"
    ingest_source(str(fixture_round("v5.1", tmp_path / "slice")), warehouse)
    return warehouse


def state(warehouse: Path) -> dict[str, tuple]:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return {table: tuple(connection.execute(f"select count(*), coalesce(sum(hash(r)), 0) from {table} as r").fetchall()[0])
                for table in (*ROUND_TABLES, *ANALYSIS_TABLES, "ingestions")}


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ingest", "{tmp}/absent.tar.gz"], "source not found: {tmp}/absent.tar.gz"),
        (["ingest", "{tmp}/empty", "--round", "v4.1"], "source {tmp}/empty is an empty folder: nothing to ingest"),
        (["ingest", "{tmp}/empty"], "cannot tell the round from '{tmp}/empty': name it training_results_vX.Y (hpc_results_vX.Y) or pass --round vX.Y (hpc-vX.Y)"),
        (["ingest", "{tmp}/noise.bin"], "a file source must be a .tar.gz archive: {tmp}/noise.bin"),
        (["ingest", "{tmp}/training_results_v4.1.tar.gz"], "source {tmp}/training_results_v4.1.tar.gz is an empty file: nothing to ingest"),
        (["ingest", "{tmp}/loop", "--round", "v4.1"], "source not found: {tmp}/loop"),
        (["run", "--warehouse", "{tmp}/empty"], "--warehouse {tmp}/empty is a folder: give the path of a DuckDB file, e.g. {tmp}/empty/mlperf.duckdb"),
        (["query", "select 1", "--warehouse", "{tmp}/noise.bin"],
         "--warehouse {tmp}/noise.bin is not a DuckDB database file (an mlperf-scaling warehouse is one): give another path"),
        # a round that is nowhere: refused before the warehouse is made (no failed row in `ingestions`)
        (["run", "--mirror", "{tmp}", "--rounds", "v9.9", "--offline"],
         "v9.9 is not in the mirror {tmp} (it holds v4.1), and --offline (MLPERF_OFFLINE) forbids fetching it"),
        (["run", "--mirror", "{tmp}", "--rounds", "v4.1", "v9.9", "--remote-base", "{tmp}/empty"],
         "no round v9.9: not in the mirror {tmp} (it holds v4.1) nor at file://{tmp}/empty/ (training_results_v9.9 is not there)"),
        (["watch", "--remote-base", "{tmp}/nowhere"], "--remote-base {tmp}/nowhere: no such folder (a URL prefix such as "
         "https://github.com/mlcommons/, or a folder of training_results_vX.Y and hpc_results_vX.Y repositories)"),
        (["export", "{tmp}/noise.bin/tables"], "DIR {tmp}/noise.bin/tables cannot be made: {tmp}/noise.bin is a file, where a folder must be"),
        (["plan", "bert", "--warehouse", "{tmp}/noise.bin"],
         "--warehouse {tmp}/noise.bin is not a DuckDB database file (an mlperf-scaling warehouse is one): give another path"),
    ],
)
def test_mistakes_are_one_line_and_exit_2_before_prefect_starts(argv, message, tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "noise.bin").write_bytes(os.urandom(4096))
    (tmp_path / "training_results_v4.1.tar.gz").write_bytes(b"")
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    prefect_home = tmp_path / "prefect-home"
    prefect_home.mkdir()
    before = sorted(p.name for p in tmp_path.iterdir())
    argv = [part.replace("{tmp}", str(tmp_path)) for part in argv]
    if "--warehouse" not in argv:
        argv += ["--warehouse", str(tmp_path / "w.duckdb")]
    done = command(*argv, env={"PREFECT_HOME": str(prefect_home), "PREFECT_API_URL": ""}, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == f"mlperf-scaling: {message.replace('{tmp}', str(tmp_path))}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no warehouse, no lock, no reports
    assert list(prefect_home.iterdir()) == []  # Prefect never started


@pytest.mark.parametrize("signum, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_ends_the_command_at_once_and_keeps_the_warehouse(signum, code, loaded, prefect_isolated):
    before = state(loaded)
    mark = f"interrupt-{signum}"
    started = time.time()
    child = subprocess.Popen(
        [sys.executable, "-m", "mlperf_scaling.cli", "ingest", str(archive("v4.1")), "--warehouse", str(loaded)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env={**os.environ, "MLPERF_TEST_MARK": mark},
    )
    assert child.stderr is not None
    said = []
    for line in child.stderr:  # interrupted while it reads the round
        said.append(line)
        if "reading v4.1" in line:
            break
    assert child.poll() is None, "".join(said)[-3000:]
    sent = time.monotonic()
    child.send_signal(signum)
    rest = child.stderr.read()
    child.wait(timeout=30)
    took = time.monotonic() - sent
    assert child.returncode == code, rest[-3000:]
    assert took < 5, f"{took:.1f} s"
    last = rest.strip().splitlines()[-1]
    assert last == (f"mlperf-scaling: ingest interrupted ({signal.Signals(signum).name}) while ingesting v4.1: nothing half-written "
                    "is kept, the rounds loaded before are as they were")
    assert "Traceback" not in rest
    assert state(loaded) == before
    # the API that recorded its flow runs does not show them Running: they ended Cancelled, saying why
    runs = [run for run in flow_runs_since(started) if run.parameters.get("warehouse") == str(loaded)]  # this command's, not a parallel test's
    assert runs and not [r for r in runs if r.state_name == "Running"], [(r.name, r.state_name) for r in runs]
    assert any(r.state_name == "Cancelled" and f"interrupted ({signal.Signals(signum).name})" in (r.state.message or "") for r in runs)
    time.sleep(1.5)  # the workers notice their parent is gone within a second
    assert descendants_of_dead(mark) == []


def flow_runs_since(started: float) -> list:
    """The flow runs the tests' API holds that began after `started` (a time.time())."""
    import asyncio
    import datetime as dt

    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterStartTime

    async def read() -> list:
        async with get_client() as client:
            since = dt.datetime.fromtimestamp(started, dt.UTC)
            return await client.read_flow_runs(flow_run_filter=FlowRunFilter(start_time=FlowRunFilterStartTime(after_=since)))

    return asyncio.run(read())


@pytest.mark.parametrize("options", [["select * from range(200000)", "--format", "csv"], ["select * from range(2000)", "--limit", "0"]],
                         ids=["csv", "table"])
def test_a_closed_pipe_ends_quietly(loaded, options):
    reader = subprocess.Popen(["head", "-n", "2"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "query", *options, "--warehouse", str(loaded)],
                          stdout=reader.stdin, stderr=subprocess.PIPE, text=True, timeout=60)
    assert reader.stdin is not None
    reader.stdin.close()
    reader.wait()
    # the reader has what it asked for: nothing said, and a pipeline under `set -o pipefail` does not fail for it
    assert (done.returncode, done.stderr) == (0, "")


def test_the_program_ends_without_teardown_yet_says_everything_and_keeps_its_exit_status(loaded, tmp_path):
    """The program skips the interpreter's teardown (`quick_exit`): what it wrote to a file is whole, its status kept."""
    written = tmp_path / "rows.csv"
    with written.open("w") as out:
        done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "query", "select range as n from range(200000)", "--format", "csv",
                               "--warehouse", str(loaded)], stdout=out, stderr=subprocess.PIPE, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = written.read_text().splitlines()
    assert (len(lines), lines[0], lines[-1]) == (200001, "n", "199999")
    wrong = command("query", "select * from no_such_table", "--warehouse", str(loaded))
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1, wrong.stderr


@pytest.mark.parametrize("file_format", ["parquet", "csv"])
def test_an_export_imports_into_identical_tables_with_their_comments(file_format, loaded, tmp_path):
    folder = tmp_path / "export"
    done = command("export", str(folder), "--format", file_format, "--warehouse", str(loaded))
    assert done.returncode == 0, done.stderr
    copy = duckdb.connect()
    copy.execute(f"import database '{folder}'")
    with duckdb.connect(str(loaded), read_only=True) as source:
        tables = [row[0] for row in source.execute("select table_name from duckdb_tables() order by 1").fetchall()]
        for table in tables:
            checksum = f"select count(*), coalesce(sum(hash(r)), 0) from {table} as r"
            assert copy.execute(checksum).fetchall() == source.execute(checksum).fetchall(), table
        comments = "select count(*) from duckdb_columns() where comment is not null"
        assert copy.execute(comments).fetchall() == source.execute(comments).fetchall()
        views = "select view_name from duckdb_views() where not internal order by 1"
        assert copy.execute(views).fetchall() == source.execute(views).fetchall()


@pytest.mark.parametrize("api", ["served", "temporary"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serve_ends_within_five_seconds_of_a_signal(signum, api, prefect_isolated, tmp_path):
    env = {**os.environ, "MLPERF_WAREHOUSE": str(tmp_path / "w.duckdb")}
    if api == "temporary":  # no served API: serve starts a temporary one with every service, ended with it
        env = {k: v for k, v in env.items() if k != "PREFECT_API_URL"} | {"PREFECT_HOME": str(tmp_path / "prefect-home")}
    child = subprocess.Popen([sys.executable, "-m", "mlperf_scaling.cli", "serve"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env)
    assert child.stdout is not None
    said = []
    for line in child.stdout:
        said.append(line)
        if "serving deployments" in line:
            break
    assert child.poll() is None, "".join(said)[-2000:]
    time.sleep(2)  # serving: its runner polls the API
    sent = time.monotonic()
    child.send_signal(signum)
    out, _ = child.communicate(timeout=30)
    assert time.monotonic() - sent < 5 and child.returncode in (0, 130, -signum, 128 + signum), out[-2000:]
    assert "Traceback" not in out


def _session_processes(session: int) -> list[str]:
    """The processes of a session, zombies included (`ps` shows them until they are reaped)."""
    listing = subprocess.run(["ps", "-eo", "sid=,pid=,stat=,args="], capture_output=True, text=True, check=True).stdout
    return [line.strip() for line in listing.splitlines() if line.split()[0] == str(session)]


def test_a_command_with_worker_pools_leaves_no_process_behind(v41_warehouse, tmp_path):
    # the drawing pool (seven benchmarks' plots) starts multiprocessing's forkserver and resource tracker: once stopped
    # and waited for, nothing of the command is left when it ends (else they outlived it for a second, then lingered
    # as zombies)
    warehouse = tmp_path / "w.duckdb"
    shutil.copyfile(v41_warehouse, warehouse)
    child = subprocess.Popen([sys.executable, "-m", "mlperf_scaling.cli", "analyze", "--round", "v4.1", "--warehouse", str(warehouse),
                              "--reports", str(tmp_path / "reports")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True, env={k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {"MLPERF_WORKERS": "2"})
    _, err = child.communicate(timeout=300)
    assert child.returncode == 0, err[-2000:]
    assert (tmp_path / "reports" / "v4.1" / "index.html").is_file()
    assert _session_processes(child.pid) == []


def test_a_reports_folder_that_is_a_file_is_said_as_such_not_as_the_address(tmp_path):
    (tmp_path / "taken").write_text("a file")
    done = command("reports", "--reports", str(tmp_path / "taken"), "--reports-address", "127.0.0.1:0")
    assert (done.returncode, done.stderr) == (2, f"mlperf-scaling: --reports {tmp_path / 'taken'} is a file, where a folder must be: "
                                                 "give a folder, or move the file away\n")


def test_the_reports_are_served_over_http_and_a_taken_address_is_one_line(loaded, tmp_path):
    from urllib.request import urlopen

    (tmp_path / "reports" / "v5.1").mkdir(parents=True)
    (tmp_path / "reports" / "v5.1" / "index.html").write_text("<title>v5.1</title>")
    server = subprocess.Popen([sys.executable, "-m", "mlperf_scaling.cli", "reports", "--reports", str(tmp_path / "reports"),
                               "--reports-address", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        said = server.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+/) ", said).group(1)
        assert said.strip().endswith(f"export MLPERF_REPORTS_URL={url}")
        with urlopen(url + "v5.1/index.html", timeout=10) as page:
            assert page.status == 200 and page.read() == b"<title>v5.1</title>"
        taken = command("reports", "--reports", str(tmp_path / "reports"), "--reports-address", url[len("http://"):-1])
        assert taken.returncode == 2 and taken.stdout == ""
        assert taken.stderr == (f"mlperf-scaling: cannot serve the reports at {url[len('http://'):-1]} (Address already in use): "
                                "--reports-address HOST:PORT (MLPERF_REPORTS_ADDRESS) picks another\n")
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    assert server.returncode == 130
