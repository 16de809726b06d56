"""Benchmark: the main job for a few rounds on a two-worker Dask cluster, paired against the same job on this machine.

A platform engineer's cluster, made of real processes: a `dask scheduler` and two `dask worker` processes (one started
in another folder), each worker one process with one thread. Each pair runs, in turn:

* local: `mlperf-scaling run --rounds ...` with `MLPERF_TASK_RUNNER=local` (this machine's pools);
* cluster: the same command with `MLPERF_TASK_RUNNER=dask MLPERF_DASK_ADDRESS=tcp://...`.

Each run writes a new warehouse and report folder, in its own Prefect home (the temporary API), and is timed from
outside, start to exit. The figure is the median of the per-pair ratios cluster / local (machines here are noisy: the
ratio, not the seconds, compares between runs). Target from issue 37: <= 1.3.

    uv run python bench/cluster.py                       # v0.6 v4.1 v5.1, 3 pairs
    uv run python bench/cluster.py --rounds v4.1 --pairs 1
    uv run python bench/cluster.py --account             # what 16 and 64 workers would buy (measured parts, a model)

`--account` measures, for each round, in this process: the time to read the archive with no log taken (the
decompression every worker repeats for an archive) and the time to read and parse every log (one worker's whole
round). A round on n workers reading an archive then takes about decompress + parse/n; reading an unpacked folder,
(decompress + parse)/n. The command's own work (scoring, loading, analysis) is not spread and is printed apart.
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
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
TARGET = 1.3


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_cluster(scratch: Path, workers: int) -> tuple[str, list[subprocess.Popen]]:
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log = open(scratch / "cluster.log", "ab")  # noqa: SIM115 - kept open while the processes run
    processes = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port",
                                   str(port), "--dashboard-address", ":0"], stdout=log, stderr=log)]
    for k in range(workers):
        folder = scratch / f"worker-{k}"  # each worker in a folder of its own, not the project's
        folder.mkdir()
        processes.append(subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                                           "--nthreads", "1", "--no-dashboard", "--local-directory", str(folder)],
                                          cwd=folder, stdout=log, stderr=log))
    from distributed import Client

    with Client(address, timeout=60) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, processes


def timed_run(rounds: list[str], mirror: str, scratch: Path, name: str, environment: dict[str, str]) -> float:
    folder = scratch / name
    folder.mkdir()
    env = dict(environment, PREFECT_HOME=str(folder / "prefect"))
    command = [sys.executable, "-m", "mlperf_scaling.cli", "run", "--rounds", *rounds, "--mirror", mirror,
               "--warehouse", str(folder / "w.duckdb"), "--reports", str(folder / "reports")]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"{name} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    shutil.rmtree(folder / "prefect", ignore_errors=True)
    return seconds


def account(rounds: list[str], mirror: str) -> None:
    from mlperf_scaling.tasks.parse.read import Share, read_share
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.rules import rules_for_round
    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    def seconds(spec: str, share: Share, judge) -> float:
        source = resolve_source(spec)
        started = time.perf_counter()
        with open_source(source) as stream:
            read_share(stream, source.round, share, workers=0, judge=judge)
        return time.perf_counter() - started

    print(f"{'round':7} {'decompress s':>12} {'parse s':>8}   per-round read, archive (folder) at n workers")
    totals = [0.0, 0.0]
    for round_name in rounds:
        spec = str(Path(mirror) / f"training_results_{round_name}.tar.gz")
        judge = judge_for(rules_for_round(round_name))
        decompress = seconds(spec, Share(0, 1 << 30), judge)  # one log taken: the stream is read to its end all the same
        parse = max(seconds(spec, Share(0, 1), judge) - decompress, 0.0)
        totals[0] += decompress
        totals[1] += parse
        at = "  ".join(f"n={n}: {decompress + parse / n:5.2f} ({(decompress + parse) / n:4.2f})" for n in (1, 2, 16, 64))
        print(f"{round_name:7} {decompress:12.2f} {parse:8.2f}   {at}")
    decompress, parse = totals
    at = "  ".join(f"n={n}: {decompress + parse / n:5.2f} ({(decompress + parse) / n:4.2f})" for n in (1, 2, 16, 64))
    print(f"{'all':7} {decompress:12.2f} {parse:8.2f}   {at}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", nargs="+", default=["v0.6", "v4.1", "v5.1"])
    parser.add_argument("--mirror", default=str(PROJECT_ROOT.parent / "shared" / "mlperf"))
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--account", action="store_true", help="measure the parts of a round's read and model 16 and 64 workers")
    args = parser.parse_args()
    if args.account:
        account(args.rounds, args.mirror)
        return
    scratch = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    address, processes = start_cluster(scratch, args.workers)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "MLPERF_"))}
    local_env = dict(base, MLPERF_TASK_RUNNER="local")
    cluster_env = dict(base, MLPERF_TASK_RUNNER="dask", MLPERF_DASK_ADDRESS=address)
    ratios, local_s, cluster_s = [], [], []
    try:
        for pair in range(args.pairs):
            local = timed_run(args.rounds, args.mirror, scratch, f"local-{pair}", local_env)
            on_cluster = timed_run(args.rounds, args.mirror, scratch, f"cluster-{pair}", cluster_env)
            local_s.append(local)
            cluster_s.append(on_cluster)
            ratios.append(on_cluster / local)
            print(f"pair {pair + 1}: local {local:6.1f} s   cluster {on_cluster:6.1f} s   ratio {on_cluster / local:.3f}", flush=True)
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            process.wait(timeout=30)
        shutil.rmtree(scratch, ignore_errors=True)
    ratio = statistics.median(ratios)
    print(f"rounds {' '.join(args.rounds)}, {args.workers} workers, {args.pairs} pairs: local {statistics.median(local_s):.1f} s, "
          f"cluster {statistics.median(cluster_s):.1f} s (medians); ratio median {ratio:.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f}); target <= {TARGET}: {'met' if ratio <= TARGET else 'MISSED'}")
    sys.exit(0 if ratio <= TARGET else 1)


if __name__ == "__main__":
    main()
