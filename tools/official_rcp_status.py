"""The official RCP status of every closed score of the shipped rounds, as mlperf-logging's result summarizer computes
it: `rcp_checker.check_directory` on each benchmark folder with the pruned RCPs, its message mapped as
`result_summarizer._compute_strong_scaling_scores` maps it. Written to tests/fixtures/official_rcp_status.tsv, the
oracle tests/test_rcp_status.py holds the pipeline's own status to.

    python tools/official_rcp_status.py [MIRROR]    (default ../shared/mlperf; takes some minutes)

The checker reads the result files from disk, so each round's closed systems are extracted into a temporary folder
first; nothing is written into the archives, and scaling.json is not rewritten (set_scaling=False: the status is the
same either way).
"""

from __future__ import annotations

import csv
import json
import logging
import sys
import tarfile
import tempfile
from pathlib import Path

from mlperf_logging.rcp_checker import rcp_checker

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "official_rcp_status.tsv"
ROUNDS = {"v1.0": "1.0.0", "v2.1": "2.1.0", "v3.1": "3.1.0", "v4.0": "4.0.0", "v4.1": "4.1.0", "v5.1": "5.1.0"}


def _status(passed: bool, message: str) -> str:
    # result_summarizer._compute_strong_scaling_scores, its mapping of the checker's message
    if passed:
        return "Pass"
    if message == "RCP found":
        return "Fail"
    if message == "RCP Interpolation":
        return "Interp. Fail"
    if "Missing" in message:
        return "Missing"
    if message == "Cannot find any RCPs":
        return "No RCP"
    return "Unknown state"


def _extract(archive: Path, into: Path) -> Path:
    with tarfile.open(archive, mode="r|gz") as stream:
        for member in stream:
            parts = Path(member.name).parts
            keep = len(parts) >= 4 and (parts[2] == "systems" and member.name.endswith(".json")
                                         or parts[2] == "results" and len(parts) == 6 and parts[5].startswith("result_"))
            if member.isfile() and keep:
                target = into / member.name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(stream.extractfile(member).read())
    return into / archive.name.removesuffix(".tar.gz")


def round_statuses(mirror: Path, round_name: str, ruleset: str) -> list[list]:
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        root = _extract(mirror / f"training_results_{round_name}.tar.gz", Path(folder))
        for system_json in sorted(root.glob("*/systems/*.json")):
            try:
                division = json.loads(system_json.read_text(encoding="utf-8", errors="replace")).get("division")
            except ValueError:
                continue
            if division != "closed":
                continue
            submitter, system = system_json.parts[-3], system_json.stem
            for benchmark in sorted(p for p in (root / submitter / "results" / system).glob("*") if p.is_dir()):
                try:
                    passed, message, factor = rcp_checker.check_directory(str(benchmark), "training", ruleset, False, False,
                                                                          rcp_pass="pruned_rcps", set_scaling=False)
                    status, factor = _status(passed, message), float(factor)
                except Exception:  # noqa: BLE001 - the summarizer leaves the status empty when the check raises
                    status, factor = "", ""
                rows.append([round_name, submitter, system, benchmark.name, status, factor])
    return rows


def main(mirror: Path) -> int:
    logging.disable(logging.CRITICAL)
    rows = []
    for round_name, ruleset in ROUNDS.items():
        found = round_statuses(mirror, round_name, ruleset)
        print(f"{round_name}: {len(found)} closed benchmark folders checked", flush=True)
        rows += found
    with OUT.open("w", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["round", "submitter", "system", "benchmark", "rcp_status", "rcp_factor"])
        writer.writerows(rows)
    print(f"{len(rows)} rows in {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "mlperf"))
