"""Benchmark: does the main job ever stand still? The longest gap between two of its log lines, over several runs.

A stall shows as minutes without a log line (once: 54.5 s, while the Prefect server refused an artifact event of
1.5 MB). Each run is the main job into a new warehouse and report folder; its log lines' times (Prefect's `HH:MM:SS.mmm`
prefix) are read from its output, and the longest gap between consecutive lines is printed with the line after it.

    uv run python bench/log_gaps.py [--runs 5] [--mirror ../shared/mlperf]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STAMP = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) \|")


def longest_gap(lines: list[str]) -> tuple[float, str]:
    times: list[tuple[float, str]] = []
    for line in lines:
        found = STAMP.match(line)
        if found:
            hours, minutes, seconds, millis = (int(part) for part in found.groups())
            times.append((hours * 3600 + minutes * 60 + seconds + millis / 1000, line.strip()))
    gaps = [(_forward(later - earlier), text) for (earlier, _), (later, text) in zip(times, times[1:], strict=False)]
    return max(gaps, default=(0.0, ""))


def _forward(seconds: float) -> float:
    """The time from one line to the next: across midnight the clock goes back a day; lines of two threads may come
    a few milliseconds out of order, which is no gap at all (it read as 86,400 s)."""
    if seconds < -12 * 3600:
        return seconds + 86400
    return max(seconds, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mirror", default=str(PROJECT_ROOT.parent / "shared" / "mlperf"))
    args = parser.parse_args()
    worst = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="log-gaps-") as work:
            environment = {**os.environ, "PREFECT_HOME": f"{work}/prefect", "MLPERF_OFFLINE": "1"}
            environment.pop("PREFECT_API_URL", None)
            started = dt.datetime.now()
            done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", "run", "--mirror", args.mirror, "--warehouse",
                                   f"{work}/w.duckdb", "--reports", f"{work}/reports"], cwd=PROJECT_ROOT, env=environment,
                                  capture_output=True, text=True)
            seconds = (dt.datetime.now() - started).total_seconds()
        gap, after = longest_gap((done.stdout + done.stderr).splitlines())
        worst.append(gap)
        print(f"run {run + 1}: exit {done.returncode}, {seconds:.1f} s, longest gap {gap:.1f} s, before: {after[:140]}", flush=True)
    print(f"longest gap over {args.runs} runs: {max(worst):.1f} s")


if __name__ == "__main__":
    main()
