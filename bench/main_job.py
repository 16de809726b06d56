"""Benchmark: the main job and the fixed cost of each command, against a plain read of the mirror in the same run.

Each figure is a whole process, timed from outside (start to exit, interpreter start-up and imports included), run
`--repeat` times; the median is printed, and its ratio to the baseline measured in the same run: a plain streaming
read of every archive in the mirror (`tarfile.open(path, "r|gz")`, every member read), in a subprocess too. Machines
here are noisy: the ratio, not the seconds, is what compares between runs.

Figures (targets from the issue in brackets):

* main job: `mlperf-scaling run --mirror MIRROR` into a new warehouse and report folder [<= 40 s];
* unchanged re-run: the same command again, nothing new [<= 5 s];
* fixed costs [<= 4 s each]: `mlperf-scaling --help`; `ingest` of one round (v4.1) into a new warehouse, minus
  nothing (the whole command); `paper-table`; `plan llama2_70b_lora`; `query "select 1"`.

`--served` runs every command against a served API instead (`prefect server start` in the bench's own Prefect home,
started and migrated before anything is timed), as a team with a Prefect server and UI runs them.

Run from the project root (it needs about five minutes with --repeat 3):

    uv run python bench/main_job.py
    uv run python bench/main_job.py --repeat 1 --mirror /path/to/mirror
    uv run python bench/main_job.py --served
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"main job": 40.0, "unchanged re-run": 5.0, "--help": 4.0, "ingest v4.1": 4.0, "paper-table": 4.0, "plan": 4.0, "query": 4.0}

PLAIN_READ = """
import sys, tarfile
from pathlib import Path
for path in sorted(Path(sys.argv[1]).glob("training_results_v*.tar.gz")):
    with tarfile.open(path, mode="r|gz") as archive:
        for member in archive:
            if member.isfile():
                archive.extractfile(member).read()
"""


WARM_PREFECT = """
from mlperf_scaling.runtime.local_api import TemporaryApi
TemporaryApi().wait_until_ready(600)
"""


def timed(command: list[str], environment: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return seconds


def served_api(environment: dict[str, str]) -> tuple[subprocess.Popen, str]:
    """`prefect server start` on a free port, once it answers, and its API's address."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env={**environment, "PREFECT_UI_ENABLED": "false"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"prefect server start exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return server, url
        except OSError:
            time.sleep(0.2)
    server.kill()
    raise SystemExit("prefect server start did not answer within 300 s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=PROJECT_ROOT.parent / "shared" / "mlperf")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--served", action="store_true", help="run the commands against a served API (prefect server start)")
    args = parser.parse_args()
    mirror = args.mirror.resolve()
    cli = [sys.executable, "-m", "mlperf_scaling.cli"]
    work = Path(tempfile.mkdtemp(prefix="bench-main-"))
    environment = {**os.environ, "PREFECT_HOME": str(work / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    environment.pop("PREFECT_API_URL", None)
    figures: dict[str, list[float]] = {name: [] for name in ["baseline", *TARGETS]}
    server = None
    try:
        if args.served:
            server, environment["PREFECT_API_URL"] = served_api(environment)
        else:
            # a warm environment: the bench's own Prefect database is created (migrated, 10-15 s) before anything is
            # timed, as the user's ~/.prefect one is after the first run
            timed([sys.executable, "-c", WARM_PREFECT], environment)
        for attempt in range(args.repeat):
            run = work / f"run{attempt}"
            warehouse, reports = run / "w.duckdb", run / "reports"
            main_job = [*cli, "run", "--mirror", str(mirror), "--warehouse", str(warehouse), "--reports", str(reports)]
            figures["baseline"].append(timed([sys.executable, "-c", PLAIN_READ, str(mirror)], environment))
            figures["main job"].append(timed(main_job, environment))
            figures["unchanged re-run"].append(timed(main_job, environment))
            figures["--help"].append(timed([*cli, "--help"], environment))
            figures["ingest v4.1"].append(timed([*cli, "ingest", str(mirror / "training_results_v4.1.tar.gz"), "--warehouse",
                                                 str(run / "one.duckdb")], environment))
            figures["paper-table"].append(timed([*cli, "paper-table", "--warehouse", str(warehouse)], environment))
            figures["plan"].append(timed([*cli, "plan", "llama2_70b_lora", "--warehouse", str(warehouse)], environment))
            figures["query"].append(timed([*cli, "query", "select 1", "--warehouse", str(warehouse)], environment))
            shutil.rmtree(run, ignore_errors=True)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)
    baseline = statistics.median(figures["baseline"])
    print(f"{'figure':<18} {'median s':>9} {'min s':>7} {'max s':>7} {'vs baseline':>12} {'target s':>9}")
    print("-" * 68)
    failed = False
    for name, values in figures.items():
        median = statistics.median(values)
        target = TARGETS.get(name)
        failed |= target is not None and median > target
        print(f"{name:<18} {median:>9.2f} {min(values):>7.2f} {max(values):>7.2f} {median / baseline:>11.2f}x "
              f"{'' if target is None else f'{target:>8.0f}' + (' ok' if median <= target else ' MISSED')}")
    api = "a served API (prefect server start)" if args.served else "Prefect's temporary API, one per command"
    print(f"\nbaseline: a plain read of every archive in {mirror}; {args.repeat} runs of each, median; on {api}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
