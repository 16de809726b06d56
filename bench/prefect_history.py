"""Benchmark: the size of the temporary Prefect API's database over many main jobs, and what its retention removes.

Runs the main job (`mlperf-scaling run --mirror MIRROR`, a new warehouse and report folder each time) `--runs` times
with one Prefect home, as a machine that runs it every day keeps one. After each job it prints the database's size
(`prefect.db` with its write-ahead log) and the flow runs, task runs and log lines it holds.

Then it ages that history past the retention (`MLPERF_PREFECT_HISTORY_DAYS`, 7 days by default): every run's times
are moved back `--age-days` days in the database, the temporary API is started once (its vacuum runs at each start),
and the rows left are counted. The file itself does not shrink (SQLite reuses the freed pages), so a history kept for
7 days bounds the file at about 7 days of jobs.

    uv run python bench/prefect_history.py                  # 20 main jobs of every round in ../shared/mlperf
    uv run python bench/prefect_history.py --runs 3 --rounds v4.1
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent

START_ONCE = """
import time
from mlperf_scaling.runtime.local_api import TemporaryApi
api = TemporaryApi()
api.wait_until_ready(600)
time.sleep(20)  # the vacuum runs in the API's first seconds
api.stop()
"""


def database_size(home: Path) -> int:
    return sum(path.stat().st_size for path in home.glob("prefect.db*"))


def counts(home: Path) -> tuple[int, int, int]:
    with sqlite3.connect(home / "prefect.db", timeout=60) as connection:
        return tuple(connection.execute(f"select count(*) from {table}").fetchone()[0] for table in ("flow_run", "task_run", "log"))  # type: ignore[return-value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--rounds", nargs="*", default=None, help="default: every round in the mirror")
    parser.add_argument("--mirror", default=str(PROJECT_ROOT.parent / "shared" / "mlperf"))
    parser.add_argument("--age-days", type=float, default=8.0)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-history-"))
    home = scratch / "prefect-home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLPERF_"))} | {"PREFECT_HOME": str(home)}
    rounds = ["--rounds", *args.rounds] if args.rounds else []
    try:
        print(f"{'job':>4} {'seconds':>8} {'database MB':>12} {'flow runs':>10} {'task runs':>10} {'log lines':>10}", flush=True)
        for job in range(1, args.runs + 1):
            out = scratch / "job"
            started = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "run", "--mirror", args.mirror, *rounds,
                                   "--warehouse", str(out / "w.duckdb"), "--reports", str(out / "reports")],
                                  cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
            seconds = time.perf_counter() - started
            if done.returncode != 0:
                sys.exit(f"job {job} failed ({done.returncode}):\n{done.stderr[-2000:]}")
            shutil.rmtree(out)
            flows, tasks, logs = counts(home)
            print(f"{job:>4} {seconds:8.1f} {database_size(home) / 1e6:12.1f} {flows:>10} {tasks:>10} {logs:>10}", flush=True)
        before = database_size(home)
        with sqlite3.connect(home / "prefect.db", timeout=60) as connection:
            shift = f"-{args.age_days} days"
            for column in ("start_time", "end_time", "expected_start_time", "created", "updated"):
                connection.execute(f"update flow_run set {column} = strftime('%Y-%m-%d %H:%M:%f', {column}, ?) where {column} is not null",
                                   (shift,))
        subprocess.run([sys.executable, "-c", START_ONCE], cwd=PROJECT_ROOT, env=env, check=True, capture_output=True)
        flows, tasks, logs = counts(home)
        print(f"aged {args.age_days:g} days, then one start of the temporary API: {flows} flow runs, {tasks} task runs, {logs} log "
              f"lines left; file {database_size(home) / 1e6:.1f} MB (was {before / 1e6:.1f} MB: SQLite reuses the freed pages)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
