"""The result ID of every system of the shipped rounds, as mlperf-logging's result summarizer numbers its spreadsheet:
its own `main()` run with `--xlsx` over each round, the IDs read back from the sheets. Written to
tests/fixtures/official_result_ids.tsv, the oracle tests/test_result_ids.py holds the pipeline's summarizer_row_id to.

    python tools/official_result_ids.py [--rounds v4.0,v4.1] [MIRROR] [LOGGING_GIT_DIR]
        (defaults: every round below, ../shared/mlperf, the fetched mlcommons/logging; some minutes a round; rounds
        named replace theirs in the file, the others are kept)

The summarizer runs in a throwaway environment (`uv run --no-project`, pandas 1.5: its `writer.save()` is gone from
pandas 2), from the mlperf_logging package this project pins, with the `config.yaml` that the wheel leaves out taken
from mlcommons/logging. Two things are added to that configuration, and only these: the spellings of the availability
it rejects (v3.1's "Available on premise" and "Available in cloud", v0.6's and v0.7's "on-premise"), and header labels for rulesets it has
none for (0.6.0 to 1.1.0), which only name the sheet's columns; and its handler of a systems JSON that lacks a
field prints a variable it never set, which ends the run with a NameError: the copy prints the folder instead, and
skips that system as the handler means to. Where this copy lacks every log of a benchmark folder (MISSING.txt), the
summarizer's olympic mean of nothing ends the run; that folder's score is left unknown instead, the system kept. The summarizer deletes and rewrites scaling.json in
the folders it reads, so each round is extracted into a temporary folder first. v0.5 has no systems JSON to read, and
the package has no 0.6.0 rules to read v0.6 by.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "official_result_ids.tsv"
ROUNDS = {"v0.7": "0.7.0", "v1.0": "1.0.0", "v2.1": "2.1.0", "v3.1": "3.1.0", "v4.0": "4.0.0", "v4.1": "4.1.0",
          "v5.1": "5.1.0"}
PACKAGES = ["pandas==1.5.3", "numpy<2", "pyyaml", "scipy", "xlsxwriter", "openpyxl"]
# spellings of the availability in the shipped rounds that the configuration rejects, placed as the pipeline reads them
EXTRA_AVAILABILITY = {"available on premise": "Available on-premise", "on-premise": "Available on-premise",
                      "available in cloud": "Available cloud"}


def _configured_package(work: Path, logging_git: str) -> Path:
    import mlperf_logging
    import yaml

    package = work / "mlperf_logging"
    shutil.copytree(Path(mlperf_logging.__file__).parent, package)
    text = subprocess.run(["git", "-C", logging_git, "show", "HEAD:mlperf_logging/result_summarizer/config.yaml"],
                          capture_output=True, check=True, text=True).stdout
    config = yaml.safe_load(text)
    config["availability"].update(EXTRA_AVAILABILITY)
    for ruleset in ROUNDS.values():
        config["columns"]["training"].setdefault(ruleset, {"default": [" ", " ", " "]})
    (package / "result_summarizer" / "config.yaml").write_text(yaml.safe_dump(config))
    # its handler of a systems JSON that lacks a field names a variable it never set, and the NameError ends the run
    code = package / "result_summarizer" / "result_summarizer.py"
    code.write_text(code.read_text().replace('print("{} in {}".format(e, system_file))', 'print("{} in {}".format(e, system_folder))'))
    return package


def _inner(root: str, ruleset: str, out_tsv: str) -> None:
    """In the throwaway environment: run the summarizer, then read its sheets back."""
    import openpyxl
    from mlperf_logging.result_summarizer import result_summarizer

    scored = result_summarizer._compute_strong_score_standalone

    def tolerant(benchmark, system, has_power, folder, *rest):
        # a benchmark folder whose logs this copy lacks (MISSING.txt) ends the summarizer with a ZeroDivisionError;
        # with its logs, as at publication, it had a score: keep the system's row, its time unknown
        try:
            return scored(benchmark, system, has_power, folder, *rest)
        except ZeroDivisionError:
            return None, None, 1.0

    result_summarizer._compute_strong_score_standalone = tolerant
    xlsx = os.path.join(tempfile.mkdtemp(), "summary.xlsx")
    sys.argv = ["result_summarizer", os.path.join(root, "{*}"), "training", ruleset, "--xlsx", xlsx, "--quiet"]
    cwd = os.getcwd()
    os.chdir(tempfile.mkdtemp())  # it writes summary.json where it runs
    try:
        result_summarizer.main()
    finally:
        os.chdir(cwd)
    # (the submitter the JSON names, system file) -> the submitter folders holding it, as details_url names them; where
    # several folders hold the same file (v4.0's smc, smc-ac-power, smc-dc-power), the sheet cannot tell their rows
    # apart, and the file names them all, joined by '|'
    folders: dict[tuple[str, str], list[str]] = {}
    for org in sorted(os.listdir(root)):
        systems = os.path.join(root, org, "systems")
        if os.path.isdir(systems):
            for name in os.listdir(systems):
                if name.endswith(".json"):
                    try:
                        with open(os.path.join(systems, name), encoding="utf-8") as handle:
                            declared = json.load(handle).get("submitter")
                    except (OSError, ValueError, AttributeError):
                        continue
                    folders.setdefault((declared, name[:-5]), []).append(org)
    rows = []
    book = openpyxl.load_workbook(xlsx, read_only=True)
    for sheet in book.worksheets:
        for values in sheet.iter_rows(values_only=True):
            result_id, url = values[0], next((v for v in values if isinstance(v, str) and "/systems/" in v), None)
            if not (isinstance(result_id, str) and result_id[:1].isdigit() and url):
                continue
            declared, system = url.split("/blob/main/", 1)[1].split("/systems/")
            system = system.removesuffix(".json")
            rows.append(["|".join(folders.get((declared, system), [declared])), system, sheet.title, result_id])
    with open(out_tsv, "w", newline="") as handle:
        csv.writer(handle, delimiter="\t", lineterminator="\n").writerows(rows)


def main() -> int:
    if sys.argv[1:2] == ["--inner"]:
        _inner(*sys.argv[2:5])
        return 0
    args = sys.argv[1:]
    rounds = list(ROUNDS)
    if args[:1] == ["--rounds"]:
        rounds, args = args[1].split(","), args[2:]
    mirror = Path(args[0] if args else ROOT.parent / "shared" / "mlperf")
    logging_git = args[1] if len(args) > 1 else "/work/.mirror/mlcommons+logging/repo"
    uv = [shutil.which("uv")] if shutil.which("uv") else [sys.executable, "-m", "uv"]
    out_rows = []
    if OUT.exists():
        with OUT.open() as handle:
            out_rows = [row for row in csv.reader(handle, delimiter="\t")][1:]
        out_rows = [row for row in out_rows if row[0] not in rounds]
    with tempfile.TemporaryDirectory() as work:
        _configured_package(Path(work), logging_git)
        for round_name in rounds:
            ruleset = ROUNDS[round_name]
            with tempfile.TemporaryDirectory() as extracted:
                with tarfile.open(mirror / f"training_results_{round_name}.tar.gz") as archive:
                    archive.extractall(extracted, filter="data")
                part = Path(extracted) / "ids.tsv"
                command = [*uv, "run", "--no-project", "--quiet", *(f"--with={p}" for p in PACKAGES), "python", __file__, "--inner",
                           f"{extracted}/training_results_{round_name}", ruleset, str(part)]
                done = subprocess.run(command, env={**os.environ, "PYTHONPATH": work}, capture_output=True, text=True)
                if done.returncode != 0 or not part.exists():
                    print(f"{round_name}: the summarizer stopped: {done.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
                    continue
                rows = [line.split("\t") for line in part.read_text().splitlines()]
                print(f"{round_name}: {len(rows)} systems numbered", flush=True)
                out_rows += [[round_name, *row] for row in rows]
    out_rows.sort(key=lambda row: (list(ROUNDS).index(row[0]), row[4]))
    with OUT.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["round", "submitter", "system", "division", "result_id"])
        writer.writerows(out_rows)
    print(f"{OUT.relative_to(ROOT)}: {len(out_rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
