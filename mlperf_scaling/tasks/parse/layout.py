"""Classify a file of a result repository by its path: what it is and whom it belongs to.

Paths are relative to the round's root (`training_results_vX.Y/` already removed). MLPerf HPC (v1.0 on) puts a
scaling-mode level between system and benchmark (`results/<system>/{strong,weak}/<benchmark>/`); that level is read
here and nowhere else, so every later stage sees the same (system, benchmark) with a `scaling_mode` beside it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

SYSTEMS_JSON = "systems_json"
ENTRY_JSON = "entry_json"  # v0.5 (and v0.6 Alibaba) system description inside results/<system>/
RESULT_LOG = "result_log"
SCALING_JSON = "scaling_json"
POWER_LOG = "power_log"
IGNORED = "ignored"
OUTSIDE_DATA = "outside_data"  # benchmark code, READMEs and the like beside systems/ and results/

# The official summarizer globs `result_*.txt`; v0.5 Intel prefixes it, v0.7 Alibaba writes `<id>_<n>.log`.
_RESULT_NAME = re.compile(r"^(?:[A-Za-z0-9]+_)*result_[^/]*\.txt$")
_ALIBABA_LOG_NAME = re.compile(r"^\d+_\d+\.log$")
_ROUND_FOLDER = re.compile(r"^v\d+\.\d+(\.\d+)?$")
_RAW_LOG_FOLDERS = {"raw_logs", "processed_logs", "logs"}
STRONG, WEAK = "strong", "weak"
SCALING_MODES = (STRONG, WEAK)
_PRUNED_FOLDER = "pruned_results"


@dataclass(frozen=True)
class Member:
    path: str
    kind: str
    submitter: str | None = None
    system: str | None = None
    benchmark: str | None = None  # None when the layout does not say (log outside a benchmark folder)
    submission: str | None = None  # v0.5: the submission folder between organisation and results/
    reason: str | None = None  # why an IGNORED file is not used
    official_layout: bool = True  # False where the official summarizer would not find the file
    scaling_mode: str = STRONG  # HPC: strong (one model to its target) or weak (many instances at once); Training: strong


def is_result_log_name(name: str) -> bool:
    return bool(_RESULT_NAME.match(name))


def classify(path: str) -> Member:
    """Say what a repository file is from its path alone."""
    parts = [p for p in path.split("/") if p]
    name = parts[-1] if parts else ""
    if not parts:
        return Member(path, IGNORED, reason="empty path")
    if name.startswith("."):
        return Member(path, IGNORED, reason="hidden file")
    submission = None
    if _ROUND_FOLDER.match(parts[0]) and len(parts) > 2:
        # v0.5: v0.5.0/<org>/<submission...>/results/<system>/...
        if "results" not in parts[2:]:
            return Member(path, OUTSIDE_DATA, submitter=parts[1], reason="outside a results/ folder")
        index = parts.index("results", 2)
        submitter, submission, rest = parts[1], "/".join(parts[2:index]), parts[index + 1 :]
        area = "results"
    else:
        submitter = parts[0]
        if len(parts) < 3:
            return Member(path, OUTSIDE_DATA, submitter=submitter, reason="not inside systems/ or results/")
        area, rest = parts[1], parts[2:]
    if area == "systems":
        if len(rest) == 1 and name.endswith(".json"):
            return Member(path, SYSTEMS_JSON, submitter=submitter, system=name[: -len(".json")])
        return Member(path, IGNORED, submitter=submitter, reason="not a systems JSON file")
    if area != "results":
        return Member(path, OUTSIDE_DATA, submitter=submitter, reason="not inside systems/ or results/")
    return _classify_result_member(path, submitter, submission, rest)


def _classify_result_member(path: str, submitter: str, submission: str | None, rest: list[str]) -> Member:
    name = rest[-1]
    common: dict[str, Any] = {"submitter": submitter, "submission": submission}
    if len(rest) == 1:
        return Member(path, IGNORED, **common, reason="loose file directly under results/, not inside a system folder")
    system = rest[0]
    if len(rest) >= 4 and rest[1] in SCALING_MODES:
        return _classify_hpc_member(path, common, system, rest[1], rest[2:])
    if len(rest) == 2:
        if name == "entry.json":
            return Member(path, ENTRY_JSON, system=system, **common)
        if is_result_log_name(name):
            # v0.7 Alibaba: logs directly under the system folder; the log names its benchmark
            return Member(path, RESULT_LOG, system=system, benchmark=None, official_layout=False, **common)
        return Member(path, IGNORED, system=system, **common, reason="file in a system folder that is not a result log")
    benchmark = rest[1]
    if len(rest) == 3:
        if name == "scaling.json":
            return Member(path, SCALING_JSON, system=system, benchmark=benchmark, **common)
        if is_result_log_name(name):
            return Member(path, RESULT_LOG, system=system, benchmark=benchmark, **common)
        if _ALIBABA_LOG_NAME.match(name):
            return Member(path, RESULT_LOG, system=system, benchmark=benchmark, official_layout=False, **common)
        return Member(path, IGNORED, system=system, benchmark=benchmark, **common, reason="not a result log, scaling.json or power log")
    if rest[2] == "power":
        return Member(path, POWER_LOG, system=system, benchmark=benchmark, **common)
    if rest[2] in _RAW_LOG_FOLDERS:
        return Member(path, IGNORED, system=system, benchmark=benchmark, **common, reason=f"raw copy of a run in {rest[2]}/, not a result log")
    if len(rest) == 4 and is_result_log_name(name):
        # v1.0 Habana results/<system>/resnet/bert/result_N.txt: the official tool reads only
        # <benchmark>/result_*.txt, and the same system has its own bert/ folder
        return Member(path, IGNORED, system=system, benchmark=benchmark, **common,
                      reason=f"result log nested inside the {benchmark}/ folder: not a run of {benchmark}, and not read by the official tool")
    return Member(path, IGNORED, system=system, benchmark=benchmark, **common, reason="unexpected place inside a benchmark folder")


def _classify_hpc_member(path: str, common: dict[str, Any], system: str, mode: str, rest: list[str]) -> Member:
    """An MLPerf HPC file below `results/<system>/<mode>/`: rest is [benchmark, ...]."""
    benchmark, name = rest[0], rest[-1]
    where: dict[str, Any] = {**common, "system": system, "benchmark": benchmark, "scaling_mode": mode}
    if len(rest) == 2:
        if name == "scaling.json" and mode == STRONG:
            return Member(path, SCALING_JSON, **where)
        if name.startswith("result_") and is_result_log_name(name):
            return Member(path, RESULT_LOG, **where)
        if is_result_log_name(name):  # the summarizer globs result_*.txt here; a weak result would count it as a model
            return Member(path, IGNORED, **where, reason="not named result_*.txt: the official summarizer does not read it")
        return Member(path, IGNORED, **where, reason="not a result log or scaling.json")
    if len(rest) == 3 and rest[1] == _PRUNED_FOLDER and is_result_log_name(name):
        return Member(path, IGNORED, **where, reason=(
            "an instance the submitter pruned (pruned_results/): the rules let a weak-scaling result leave out instances, "
            "and the official summarizer does not read them"))
    return Member(path, IGNORED, **where, reason=f"unexpected place inside a {mode}-scaling benchmark folder")
