"""Benchmark: where the main job's CPU goes, by kind of process, sampled from /proc while it runs.

The main job (`mlperf-scaling run --mirror MIRROR` into a new warehouse and report folder) runs as a child; every
process under it is sampled every 0.1 s (user + system time, from /proc/<pid>/stat) and put in one phase:

* parse workers: the pool that reads and judges logs (nice 0), with the fork server it is forked from;
* draw workers: the pool that draws figures (nice 19);
* Prefect API: the temporary server (`prefect server start`);
* main process: the command itself (orchestration, Prefect client, scoring, analysis, loading, reports);
* other helpers: the resource tracker.

Prefect's database is created first, as `bench/main_job.py` does and as a user's is after their first run: creating it
(migrations) costs 6-7 CPU-s in the API, once; the CPU of that step is printed on its own line. `--first-run` measures
the main job creating it instead.

Linux only. A process's last 0.1 s may be missed when it ends between samples. Run from the project root:

    uv run python bench/cpu_by_phase.py [--mirror ../shared/mlperf] [--first-run]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")
CREATE_PREFECT_DATABASE = "from mlperf_scaling.runtime.local_api import TemporaryApi; TemporaryApi().wait_until_ready(600)"


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children[parent].append(int(entry.name))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def sample(pid: int) -> tuple[float, int, str] | None:
    """(CPU seconds, niceness, command line) of a process, or None once it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS, int(fields[16]), command


def phase(pid: int, root: int, niceness: int, command: str) -> str:
    # the workers are forked from the fork server, so they share its command line: niceness tells the pools apart
    if pid == root:
        return "main process"
    if "uvicorn" in command or "prefect server start" in command:  # the temporary server, by either launch
        return "Prefect API"
    if "multiprocessing.resource_tracker import" in command:
        return "other helpers"
    return "draw workers" if niceness >= 10 else "parse workers"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", default=str(PROJECT_ROOT.parent / "shared" / "mlperf"))
    parser.add_argument("--first-run", action="store_true", help="the main job creates Prefect's database (a user's first run)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cpu-by-phase-") as work:
        command = [sys.executable, "-m", "mlperf_scaling.cli", "run", "--mirror", args.mirror,
                   "--warehouse", f"{work}/w.duckdb", "--reports", f"{work}/reports"]
        environment = {**os.environ, "PREFECT_HOME": f"{work}/prefect", "MLPERF_OFFLINE": "1"}
        environment.pop("PREFECT_API_URL", None)
        created = None
        if not args.first_run:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            subprocess.run([sys.executable, "-c", CREATE_PREFECT_DATABASE], cwd=PROJECT_ROOT, env=environment, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the API it started, waited for, included
            created = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        started = time.perf_counter()
        child = subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        seen: dict[int, tuple[float, str]] = {}
        names: dict[int, str] = {}
        highest: dict[int, int] = {}
        while child.poll() is None:
            for pid in descendants(child.pid):
                got = sample(pid)
                if got is not None:
                    seconds, niceness, line = got
                    # a worker is niced just after it starts, and an ending process shows an empty command line: keep
                    # the highest niceness and the last command line seen, and classify at the end
                    highest[pid] = max(niceness, highest.get(pid, niceness))
                    if line:
                        names[pid] = line[:100]
                    seen[pid] = (seconds, "")
            time.sleep(0.1)
        wall = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"the main job failed ({child.returncode})")
    seen = {pid: (seconds, phase(pid, child.pid, highest[pid], names.get(pid, ""))) for pid, (seconds, _) in seen.items()}
    totals: dict[str, float] = defaultdict(float)
    for seconds, name in seen.values():
        totals[name] += seconds
    if created is not None:
        print(f"before it, once: Prefect's database created, API started and stopped: {created:.1f} CPU-s (--first-run includes it)")
    print(f"main job{' (creating Prefect database)' if args.first_run else ''}: {wall:.1f} s wall, {sum(totals.values()):.1f} CPU-s")
    for name, seconds in sorted(totals.items(), key=lambda item: -item[1]):
        print(f"  {name:<15} {seconds:6.1f} CPU-s")
    if os.environ.get("CPU_BY_PHASE_VERBOSE"):
        for pid, (seconds, name) in sorted(seen.items(), key=lambda item: -item[1][0])[:12]:
            print(f"    {pid} {seconds:6.1f} {name}: {names[pid]}")


if __name__ == "__main__":
    main()
