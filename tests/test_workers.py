"""The worker pools follow the CPUs a process may use (its affinity mask), or MLPERF_WORKERS."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from mlperf_scaling.runtime.cores import cpu_workers

# In a process of its own (the pools are per process): the CPUs allowed are what the test says (this machine may have
# fewer), and twice as many calls as workers, each taking a moment, make the pool start every worker it may.
CHILD = """
import concurrent.futures, os, sys, time
os.sched_getaffinity = lambda pid: set(range(int(sys.argv[1])))  # the CPUs this process may use, as a mask would say
from mlperf_scaling.runtime.cores import cpu_workers
from mlperf_scaling.runtime.pools import PARSE, shared_pool
pool = shared_pool(cpu_workers(), PARSE)
concurrent.futures.wait([pool.submit(time.sleep, 0.3) for _ in range(2 * cpu_workers())])
print(cpu_workers(), len(pool._processes))  # the worker processes the pool started
"""


@pytest.mark.parametrize("allowed, expected", [(4, 4), (1, 1), (2, 2)])
def test_the_workers_follow_the_cpus_this_process_may_use(allowed, expected, monkeypatch):
    monkeypatch.delenv("MLPERF_WORKERS", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(allowed)))
    assert cpu_workers() == expected


def test_a_setting_names_the_worker_count(monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    monkeypatch.setenv("MLPERF_WORKERS", "3")
    assert cpu_workers() == 3


def test_four_worker_processes_run_when_four_cpus_are_allowed():
    env = {key: value for key, value in os.environ.items() if key != "MLPERF_WORKERS"}
    done = subprocess.run([sys.executable, "-c", CHILD, "4"], capture_output=True, text=True, env=env, timeout=120, check=True)
    assert done.stdout.split() == ["4", "4"], done.stdout + done.stderr


PRIORITIES = """
import os
from mlperf_scaling.runtime.pools import DRAW, PARSE, shared_pool
print(*(shared_pool(1, kind).submit(os.nice, 0).result() - os.nice(0) for kind in (PARSE, DRAW)))
"""


def test_drawing_workers_run_below_the_readers_and_the_command():
    """Drawing is background work: it takes what the reading and the analysis leave of the cores."""
    done = subprocess.run([sys.executable, "-c", PRIORITIES], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["0", str(min(19, 19 - os.nice(0)))], done.stdout + done.stderr


@pytest.mark.parametrize("given, used", [(None, "in-memory"), ("streaming", "streaming")])
def test_polars_runs_queries_in_memory_unless_the_user_says_otherwise(given, used):
    """The streaming engine's fixed cost per query is 7x the in-memory one's, paid once per pandera check."""
    env = {k: v for k, v in os.environ.items() if k != "POLARS_ENGINE_AFFINITY"}
    if given is not None:
        env["POLARS_ENGINE_AFFINITY"] = given
    probe = "import os, mlperf_scaling.contracts.validate; print(os.environ['POLARS_ENGINE_AFFINITY'])"
    out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == used


def test_logs_reach_the_workers_through_shared_memory_and_parse_as_in_this_process(monkeypatch):
    from pathlib import Path

    from mlperf_scaling.tasks.parse import pool
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.rules import rules_for_round

    logs = sorted(Path(__file__).parent.joinpath("fixtures").rglob("result_*.txt")) + sorted(
        Path(__file__).parent.joinpath("fixtures", "logs").glob("*.txt"))
    datas = [path.read_bytes() for path in logs]
    sizes = sorted(len(data) for data in datas)
    assert len(datas) >= 20 and sizes[-1] > sizes[-2]
    # a batch per log: more batches than slots, each slot taken again once its batch is collected; small slots: the
    # largest log goes through the pipe
    monkeypatch.setattr(pool, "SLOT_BYTES", sizes[-2])
    monkeypatch.setattr(pool, "BATCH_BYTES", 1)
    judge = judge_for(rules_for_round("v4.1"))
    parser = pool.LogParser(workers=2, judge=judge)
    for data in datas:
        parser.add(data)
    shared = [slot for _, _, slot in parser._pending if slot is not None]
    assert parser._slots is not None and len(shared) >= 3
    segment = parser._slots.name.lstrip("/")
    assert segment in os.listdir("/dev/shm")
    assert parser.results() == pool.parse_batch([(pool.RESULT, data) for data in datas], judge)
    # the slots go with the round; only this parser's segment is asked about: other tests' workers make and free theirs
    assert segment not in os.listdir("/dev/shm")


def test_a_command_that_runs_flows_collects_cycles_less_often():
    probe = ("import gc; from mlperf_scaling.runtime.collector import THRESHOLDS, collecting_less; before = gc.get_threshold()\n"
             "with collecting_less(): print(before != THRESHOLDS, gc.get_threshold() == THRESHOLDS, gc.get_freeze_count() > 1000)\n"
             "print(gc.get_threshold() == before, gc.get_freeze_count() == 0)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.split() == ["True"] * 5, done.stdout + done.stderr  # and as it was after
