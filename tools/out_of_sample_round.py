"""How the planner's intervals hold on rounds the calibration never saw: ingest them into a throwaway warehouse, analyse
them as `analyze` does, and print each round's backtest coverage and 90th percentile of |error|, per model.

    python tools/out_of_sample_round.py SOURCE [SOURCE ...] [--round vX.Y]
    python tools/out_of_sample_round.py /work/.mirror/mlcommons+training_results_v2.0/repo \\
        /work/.mirror/mlcommons+training_results_v3.0/repo /work/.mirror/mlcommons+training_results_v5.0/repo

Run from a checkout of another commit (its environment's python, this file's path), it measures that commit's
planner: how the figures of docs/method.md's "before" column were made.

A SOURCE is anything `mlperf-scaling ingest` reads (an archive, a folder, a git repository or URL), or a bare git
directory (a mirror with no work tree, perhaps lacking some large blobs): its `systems/` and `results/` files at HEAD
are written to the throwaway folder first, as training_results_vX.Y, and any absent file is named. The round comes from
the name (training_results_vX.Y anywhere in the path) unless --round names it (one source only). Nothing is written
outside a temporary folder, which is removed at the end; the calibration used is the one kept in
mlperf_scaling/reference/ (learnt from the shipped rounds only), so a round that is not shipped is out of sample.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import polars as pl

from mlperf_scaling.rounds import round_from_name

DATA_FOLDERS = ("systems", "results")  # as a git source's sparse clone: the benchmark code is never read


def is_bare_git(path: Path) -> bool:
    return path.is_dir() and (path / "HEAD").is_file() and (path / "objects").is_dir() and not (path / ".git").exists()


def export_bare(git_dir: Path, target: Path) -> list[str]:
    """Write the data files of HEAD of a bare repository under `target`; the paths whose blobs the copy lacks."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"], capture_output=True, check=True).stdout
    wanted = []
    for entry in listing.split(b"\0"):
        if entry:
            meta, path = entry.split(b"\t", 1)
            _, kind, sha = meta.split()
            parts = path.decode("utf-8", "surrogateescape").split("/")
            if kind == b"blob" and any(folder in parts[:-1] for folder in DATA_FOLDERS):
                wanted.append((sha, "/".join(parts)))
    absent = []
    # one `git cat-file --batch` for every blob: one process, not one per file
    with subprocess.Popen(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as batch:
        assert batch.stdin is not None and batch.stdout is not None
        for sha, path in wanted:
            batch.stdin.write(sha + b"\n")
            batch.stdin.flush()
            header = batch.stdout.readline().split()
            if header[-1] == b"missing":
                absent.append(path)
                continue
            content = batch.stdout.read(int(header[2]))
            batch.stdout.read(1)
            out = target / path
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(content)
        batch.stdin.close()
    return absent


def run(command: list[str]) -> None:
    done = subprocess.run([sys.executable, "-m", "mlperf_scaling.cli", *command], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"mlperf-scaling {command[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def summary(backtest: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    return backtest.group_by(by).agg(
        pl.len().alias("cases"), pl.col("covered").sum().alias("held"), (100 * pl.col("covered").mean()).round(1).alias("coverage_pct"),
        pl.col("error_pct").abs().quantile(0.9, "linear").round(1).alias("p90_abs_error_pct")).sort(by)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sources", nargs="+", metavar="SOURCE")
    parser.add_argument("--round", help="the round of a single SOURCE whose name does not say it")
    args = parser.parse_args(argv)
    if args.round and len(args.sources) > 1:
        print("--round names the round of a single SOURCE", file=sys.stderr)
        return 2
    named = [(source, args.round or round_from_name(str(Path(source).resolve()) if Path(source).exists() else source)) for source in args.sources]
    if unnamed := [source for source, round_name in named if round_name is None]:
        print(f"cannot tell the round of {unnamed[0]}: name it training_results_vX.Y or pass --round vX.Y", file=sys.stderr)
        return 2
    from mlperf_scaling.tasks.metrics.steps import compute_round_analysis, write_round_analysis
    from mlperf_scaling.tasks.planning.steps import plan_round

    with tempfile.TemporaryDirectory(prefix="out-of-sample-") as folder:
        work = Path(folder)
        warehouse = str(work / "rounds.duckdb")
        ingest = []
        for source, round_name in named:
            if is_bare_git(Path(source)):
                copy = work / f"training_results_{round_name}"
                absent = export_bare(Path(source), copy)
                print(f"{round_name}: data files of {source} at HEAD written to a throwaway folder" + (f"; absent from the copy: {', '.join(absent)}" if absent else ""))
                source = str(copy)
            ingest += [source]
        run(["ingest", *ingest, "--warehouse", warehouse] + (["--round", args.round] if args.round else []))
        frames = []
        for _, round_name in named:
            analysis = plan_round.fn(compute_round_analysis.fn(warehouse, str(round_name)))
            write_round_analysis.fn(warehouse, analysis)  # the round analysed as `analyze` stores it, for a look with `query`
            frames.append(analysis.backtest)
    backtest = pl.concat(frames).filter(pl.col("covered").is_not_null())
    with pl.Config(tbl_rows=40, tbl_hide_dataframe_shape=True):
        print("The stated 90 % interval against the measured best time, each count left out in turn (plan_backtest):")
        print(summary(backtest, ["round", "model"]))
        print(summary(backtest, ["model"]))
        if "stratum" in backtest.columns:  # run from an older checkout (the code before this tool), the strata are not kept
            print(summary(backtest, ["model", "stratum"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
