"""Compare this project's scores with MLCommons' own summarizer as it stood when a round was published, on rounds that
are not in ../shared/mlperf (docs/scoring.md, "Every round against its published scores").

    python tools/published_rounds.py archive  GIT_DIR ROUND OUT_DIR      # training_results_vX.Y.tar.gz (systems/, results/)
                                                                        # and .configs.tar.xz (implementations)
    python tools/published_rounds.py official LOGGING_GIT_DIR ARCHIVE OUT_CSV   # the summarizer of publication day
    python tools/published_rounds.py compare  ARCHIVE OFFICIAL_CSV       # ours against it; exit 1 on any difference
    python tools/published_rounds.py official-hpc ARCHIVE OUT_DIR        # MLPerf HPC: official_hpc_{strong,weak}_vX.Y.csv

MLPerf HPC: `archive GIT_DIR hpc-v1.0 OUT_DIR` builds hpc_results_v1.0.tar.gz; `official-hpc` runs the pinned
mlperf-logging's summarizer (the HPC rules have not changed since their rounds were published) over each package; then
`MLPERF_SHARED=DIR MLPERF_HPC_OFFICIAL_ROUNDS=hpc-v1.0 pytest tests/test_hpc_conformance.py -k official -n0`, with the
archive in DIR and the two CSVs in DIR/official, compares every cell (docs/hpc.md, "Conformance").

GIT_DIR is a clone (bare or not) of mlcommons/training_results_vX.Y, LOGGING_GIT_DIR one of mlcommons/logging with
its history. The archive is built like the shipped ones; blobs the clone lacks are listed in OUT_DIR/MISSING.txt. The
summarizer runs from mlcommons/logging at the commit `reference/rounds.tsv` names for the round, in a throwaway
environment (`uv run --no-project --with pandas ...`), never in this project's. Keep the data out of the repository.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
DATA_PATH = re.compile(r"^[^/]+/(systems|results)/")
# the implementation files of a configs archive, and the vendored trees left out of it (DATA_NOTES.md)
CONFIG_NAME = re.compile(r"^config.*\.(sh|ya?ml|json)$|\.(sh|sub|ya?ml)$|^readme", re.I)
VENDORED = {"megatron-lm", "nemo", "apex", "third_party", "build", "tests", "examples", "docs"}
SUMMARIZER_PACKAGES = ["pandas", "numpy", "pyyaml", "scipy"]


def _blobs(git_dir: str) -> list[tuple[str, str, int]]:
    """Every file of the clone's HEAD: path, blob id, size (symlinks left out)."""
    listing = subprocess.run(["git", "-C", git_dir, "ls-tree", "-r", "-l", "-z", "HEAD"], capture_output=True, check=True).stdout
    blobs = []
    for entry in filter(None, listing.split(b"\0")):
        meta, path = entry.split(b"\t", 1)
        mode, kind, sha, size = meta.split()
        if kind == b"blob" and mode != b"120000":
            # a blob the clone lacks has no size ("BAD", "-"): kept for the data archive's list of absent files
            blobs.append((path.decode(), sha.decode(), int(size) if size.isdigit() else -1))
    return blobs


def is_config_file(path: str, size: int) -> bool:
    """A file of the configs archive, as ../shared/mlperf/DATA_NOTES.md says the shipped ones were made: under
    `<Submitter>/benchmarks/<benchmark>/`, at most four folders below it, configs, READMEs, shell and Slurm scripts and
    YAML, up to 300 KB, vendored trees left out."""
    parts = path.split("/")
    if len(parts) < 4 or parts[1] != "benchmarks" or not 0 <= size <= 300_000 or len(parts) - 3 > 5:
        return False
    return not any(part.lower() in VENDORED for part in parts[3:-1]) and bool(CONFIG_NAME.search(parts[-1]))


def _write(git_dir: str, wanted: list[tuple[str, str]], archive_path: Path, mode: str, prefix: str) -> tuple[int, set[str]]:
    """The wanted blobs into one archive under `prefix/`; returns how many were kept and the ids the clone lacks."""
    checked = subprocess.run(["git", "-C", git_dir, "cat-file", "--batch-check"], input="\n".join(sha for _, sha in wanted).encode(),
                             capture_output=True, check=True).stdout.decode().splitlines()
    absent = {line.split()[0] for line in checked if line.endswith(" missing")}
    reader = subprocess.Popen(["git", "-C", git_dir, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert reader.stdin is not None and reader.stdout is not None
    kept = 0
    with tarfile.open(archive_path, mode) as archive:  # type: ignore[call-overload]
        for path, sha in wanted:
            if sha in absent:
                continue
            reader.stdin.write(sha.encode() + b"\n")
            reader.stdin.flush()
            size = int(reader.stdout.readline().split()[2])
            data = reader.stdout.read(size)
            reader.stdout.read(1)
            member = tarfile.TarInfo(f"{prefix}/{path}")
            member.size = size
            archive.addfile(member, io.BytesIO(data))
            kept += 1
    reader.stdin.close()
    reader.wait()
    return kept, absent


def build_archive(git_dir: str, round_name: str, out_dir: str) -> None:
    from mlperf_scaling.rounds import normal_round, repository_name, suite_of

    round_name = normal_round(round_name)
    prefix = repository_name(round_name)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    blobs = _blobs(git_dir)
    wanted = [(path, sha) for path, sha, _ in blobs if DATA_PATH.match(path)]
    kept, absent = _write(git_dir, wanted, out / f"{prefix}.tar.gz", "w:gz", prefix)
    with (out / "MISSING.txt").open("a") as missing:
        missing.writelines(f"{round_name}\t{path}\n" for path, sha in wanted if sha in absent)
    print(f"{out / prefix}.tar.gz: {kept} files, {len(wanted) - kept} absent from the clone (MISSING.txt)")
    if suite_of(round_name) == "training":
        configs = [(path, sha) for path, sha, size in blobs if is_config_file(path, size)]
        kept, absent = _write(git_dir, configs, out / f"{prefix}.configs.tar.xz", "w:xz", prefix)
        print(f"{out / prefix}.configs.tar.xz: {kept} implementation files, {len(configs) - kept} absent from the clone")


def run_official(logging_dir: str, archive: str, out_csv: str) -> None:
    from mlperf_scaling.reference.lookup import round_publications
    from mlperf_scaling.rounds import round_from_name

    round_name = round_from_name(archive)
    publication = round_publications().get(round_name or "")
    if publication is None or not publication.logging_commit or not publication.ruleset:
        sys.exit(f"reference/rounds.tsv has no publication-day logging commit for {round_name}")
    with tempfile.TemporaryDirectory() as work:
        subprocess.run(f"git -C {logging_dir} archive {publication.logging_commit} mlperf_logging | tar -x -C {work}", shell=True, check=True)
        with tarfile.open(archive) as source:
            source.extractall(work, filter="data")
        uv = [shutil.which("uv")] if shutil.which("uv") else ["python3", "-m", "uv"]
        command = [*uv, "run", "--no-project", "--quiet", *(f"--with={package}" for package in SUMMARIZER_PACKAGES), "python",
                   str(TOOLS / "official_summarizer.py"), f"{work}/training_results_{round_name}", round_name, publication.ruleset, out_csv]
        print(f"{round_name}: the summarizer of {publication.published} (mlcommons/logging@{publication.logging_commit[:7]})", flush=True)
        subprocess.run(command, check=True, env={**os.environ, "PYTHONPATH": work})


def run_official_hpc(archive: str, out_dir: str) -> None:
    import importlib.metadata

    from mlperf_scaling.rounds import round_from_name, version_of
    from mlperf_scaling.tasks.score.rules import rules_for_round, ruleset_version

    round_name = round_from_name(archive)
    if round_name is None or not round_name.startswith("hpc-"):
        sys.exit(f"{archive}: not an hpc_results_vX.Y archive")
    ruleset = ruleset_version(rules_for_round(round_name).ruleset)
    with tempfile.TemporaryDirectory() as work:
        with tarfile.open(archive) as source:
            source.extractall(work, filter="data")
        uv = [shutil.which("uv")] if shutil.which("uv") else ["python3", "-m", "uv"]
        pinned = f"mlperf-logging=={importlib.metadata.version('mlperf-logging')}"
        command = [*uv, "run", "--no-project", "--quiet", *(f"--with={package}" for package in [*SUMMARIZER_PACKAGES, pinned]), "python",
                   str(TOOLS / "official_hpc_summarizer.py"), f"{work}/hpc_results_{version_of(round_name)}", ruleset, out_dir,
                   version_of(round_name)]
        print(f"{round_name}: the summarizer of {pinned}, ruleset hpc {ruleset}", flush=True)
        subprocess.run(command, check=True)


def compare(archive: str, official_csv: str) -> int:
    from mlperf_scaling.rounds import round_from_name
    from mlperf_scaling.tasks.parse.read import read_round_files
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.round_scores import score_round
    from mlperf_scaling.tasks.score.rules import rules_for_round
    from mlperf_scaling.tasks.source.mirror_notes import load_copy_notes
    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    round_name = round_from_name(archive)
    assert round_name is not None, archive
    with open_source(resolve_source(archive)) as stream:
        notes = load_copy_notes(Path(archive).parent, round_name)
        data = score_round(read_round_files(stream, round_name, notes, judge=judge_for(rules_for_round(round_name))))
    ours = {(r["submitter"], r["system"], r["benchmark"]): r for r in data.scores.iter_rows(named=True)}
    with open(official_csv, newline="") as handle:
        every_row = list(csv.DictReader(handle))
    # where the summarizer stopped on a system (in a copy that lacks some of its logs), it has no verdict to compare
    official = [row for row in every_row if not row["status"].startswith("summarizer raised")]
    compared = {(row["submitter_folder"], row["system_folder"], row["benchmark"]) for row in official}
    differences = []
    for row in official:
        key = (row["submitter_folder"], row["system_folder"], row["benchmark"])
        expected = float(row["time_to_train_min"]) if row["time_to_train_min"] else None
        got = ours[key]["time_to_train_min"] if key in ours else None
        if (expected is None) != (got is None) or (expected is not None and got is not None and abs(got - expected) > 1e-9):
            differences.append(f"{key}: official {expected}, ours {got}")
    rows_equal = len(official) - len(differences)
    invalid_official = {(r["submitter_folder"], r["system_folder"], r["benchmark"], name) for r in official for name in filter(None, r["invalid_runs"].split(";"))}
    invalid_ours = {(r["submitter"], r["system"], r["benchmark"], r["file_name"]) for r in data.runs.iter_rows(named=True)
                    if not r["is_valid"] and (r["submitter"], r["system"], r["benchmark"]) in compared}
    differences += [f"{run}: dropped officially, counted here" for run in sorted(invalid_official - invalid_ours)]
    differences += [f"{run}: counted officially, dropped here" for run in sorted(invalid_ours - invalid_official)]
    scored = sum(1 for row in official if row["time_to_train_min"])
    later = data.runs.filter(data.runs["is_valid"] & ~data.runs["is_valid_today"]).height
    print(f"{round_name}: {rows_equal}/{len(official)} rows equal at 1e-9 "
          f"({scored} scored officially); dropped runs: {len(invalid_official)} official, {len(invalid_ours)} here; "
          f"{later} runs counted that only a rule changed after publication rejects"
          + (f"; {len(every_row) - len(official)} rows left out: the summarizer stops on their system in this copy" if len(every_row) > len(official) else ""))
    for line in differences:
        print("  ", line)
    return 1 if differences else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    archive = commands.add_parser("archive")
    archive.add_argument("git_dir")
    archive.add_argument("round")
    archive.add_argument("out_dir")
    official = commands.add_parser("official")
    official.add_argument("logging_dir")
    official.add_argument("archive")
    official.add_argument("out_csv")
    official_hpc = commands.add_parser("official-hpc")
    official_hpc.add_argument("archive")
    official_hpc.add_argument("out_dir")
    against = commands.add_parser("compare")
    against.add_argument("archive")
    against.add_argument("official_csv")
    args = parser.parse_args()
    if args.command == "archive":
        build_archive(args.git_dir, args.round, args.out_dir)
    elif args.command == "official":
        run_official(args.logging_dir, args.archive, args.out_csv)
    elif args.command == "official-hpc":
        run_official_hpc(args.archive, args.out_dir)
    else:
        return compare(args.archive, args.official_csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
