"""Turn one round's files into table rows: systems, runs, scores and rejections.

This is the parse step of source -> parse -> validate -> load. It reads each file once, in the
order the source yields them, and keeps only small per-run facts in memory.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tasks.copy_notes import CopyNotes
from tasks.layout import ENTRY_JSON, IGNORED, OUTSIDE_DATA, POWER_LOG, RESULT_LOG, SCALING_JSON, SYSTEMS_JSON, Member, classify
from tasks.parse_logs import LogFacts
from tasks.energy import EnergyError, PowerSummary, energy_score, run_energy_j
from tasks.compliance import Failure
from tasks.parse_pool import POWER, RESULT, LogParser
from tasks.parse_systems import SystemRecord, SystemsJsonError, parse_system
from tasks.rules import RoundRules, benchmark_rules, rules_for_round
from tasks.scoring import NOT_SCORED, judge_run, score_group
from tasks.sources import MemberStream


STAGE_SOURCE = "source"
STAGE_LAYOUT = "layout"
STAGE_PARSE = "parse"
STAGE_SCORE = "score"


@dataclass
class ParsedRun:
    member: Member
    facts: LogFacts
    failures: list[Failure] | None  # compliance failures, where the round's rules are checked
    size: int
    sha256: str


@dataclass
class RoundData:
    """Everything read from one round, as frames ready for validation."""

    round: str
    rules: RoundRules
    systems: pl.DataFrame
    runs: pl.DataFrame
    scores: pl.DataFrame
    rejections: pl.DataFrame
    energy: pl.DataFrame
    n_files: int = 0
    n_bytes: int = 0
    n_power_logs: int = 0
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)


class _Collector:
    def __init__(self, round_name: str, notes: CopyNotes, workers: int | None = None):
        self.round = round_name
        self.rules = rules_for_round(round_name)
        self.notes = notes
        self.parser = LogParser(workers, self.rules.ruleset if self.rules.checked else None)
        self.log_members: list[tuple[str, Member, int]] = []  # (kind, member, size), in parser order
        self.runs: list[ParsedRun] = []
        # (submitter, system, benchmark) -> result name -> {"node": [...], "sw": [...]}
        self.power: dict[tuple[str, str, str], dict[str, dict[str, list[PowerSummary]]]] = defaultdict(dict)
        self.systems: dict[tuple[str, str, str], tuple[Member, SystemRecord]] = {}
        self.scaling: dict[tuple[str, str, str], tuple[float | None, str | None]] = {}
        self.rejections: list[dict[str, Any]] = []
        self.missing_members: list[Member] = []
        self.n_files = 0
        self.n_bytes = 0
        self.n_power_logs = 0

    def finish_parsing(self) -> None:
        results = self.parser.results()
        for (kind, member, size), (parsed, failures, sha) in zip(self.log_members, results, strict=True):
            if kind == RESULT:
                self.runs.append(ParsedRun(member, parsed, failures, size, sha))
                continue
            # power/<result name>/node_<k>.txt or sw_<k>.txt, as the official tool globs them
            run_name, file_name = member.path.split("/power/", 1)[1].split("/")[-2:]
            files = self.power[(member.submitter, member.system, member.benchmark)].setdefault(run_name, {"node": [], "sw": []})
            files["node" if file_name.startswith("node_") else "sw"].append(parsed)

    def reject(self, path: str, stage: str, reason: str) -> None:
        self.rejections.append({"round": self.round, "path": path, "stage": stage, "reason": reason})

    def add(self, member: Member, load: Callable[[], bytes]) -> None:
        if member.kind == IGNORED:
            reason = member.reason or "not used"
            if member.path not in self.notes.excluded:  # those are reported once, from the notes
                self.reject(member.path, STAGE_LAYOUT, reason)
            return
        if member.kind == OUTSIDE_DATA:
            return  # a repository's code and documents are not data; a sparse clone never fetches them
        if member.kind == POWER_LOG:
            self.n_power_logs += 1
            name = member.path.rsplit("/", 1)[-1]
            nested = member.path.split("/power/", 1)[1].count("/")
            if nested != 1 or not name.endswith(".txt") or not name.startswith(("node_", "sw_")):
                return  # total_power.txt and the like: not read by the official tool either
            data = load()
            self.n_bytes += len(data)
            self.log_members.append((POWER, member, len(data)))
            self.parser.add(data, POWER)
            return
        data = load()
        self.n_bytes += len(data)
        if member.kind == RESULT_LOG:
            self.log_members.append((RESULT, member, len(data)))
            self.parser.add(data)
        elif member.kind in (SYSTEMS_JSON, ENTRY_JSON):
            self._add_system(member, data)
        elif member.kind == SCALING_JSON:
            self._add_scaling(member, data)

    def _add_system(self, member: Member, data: bytes) -> None:
        try:
            record = parse_system(data)
        except SystemsJsonError as exc:
            self.reject(member.path, STAGE_PARSE, str(exc))
            return
        key = (member.submitter, member.system, member.submission or "")
        if key in self.systems:
            self.reject(member.path, STAGE_PARSE, f"second description of system {member.system!r}: the first one read is kept")
            return
        self.systems[key] = (member, record)

    def _add_scaling(self, member: Member, data: bytes) -> None:
        key = (member.submitter, member.system, member.benchmark)
        try:
            factor = json.loads(data.decode("utf-8", errors="strict"))["scaling_factor"]
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0 or factor != factor:
                raise ValueError(f"scaling_factor is {factor!r}, not a positive number")
            self.scaling[key] = (float(factor), None)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            reason = f"scaling.json unusable ({exc.__class__.__name__}: {exc}): the score is left unscaled and not published"
            self.reject(member.path, STAGE_PARSE, reason)
            self.scaling[key] = (None, reason)


def read_round(
    stream: MemberStream,
    round_name: str,
    notes: CopyNotes | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    workers: int | None = None,
) -> RoundData:
    """Read every member of an opened source and compute the round's rows.

    `workers` processes parse the logs (default: up to two cores); 0 or 1 parses in this process.
    """
    started = time.perf_counter()
    notes = notes or CopyNotes()
    collector = _Collector(round_name, notes, workers)
    try:
        for path, load, _size in stream.members:
            collector.n_files += 1
            collector.add(classify(path), load)
            if progress is not None and collector.n_files % 500 == 0:
                progress(collector.n_files, collector.n_bytes, stream.fraction_read())
        collector.finish_parsing()
    finally:
        collector.parser.close()
    for skipped in stream.skipped:
        collector.reject(skipped.path, STAGE_SOURCE, skipped.reason)
    for path, why in sorted(notes.excluded.items()):
        collector.reject(path, STAGE_SOURCE, f"excluded from this copy ({why}): listed in EXCLUDED.txt")
    for path in sorted(notes.missing):
        member = classify(path)
        collector.reject(path, STAGE_SOURCE, "log absent from this copy: listed in MISSING.txt")
        if member.kind == RESULT_LOG:
            collector.missing_members.append(member)
    data = _assemble(collector)
    data.seconds = time.perf_counter() - started
    return data


def _energy(c: _Collector, group_runs: dict, scaling_by_group: dict) -> tuple[list[dict], dict]:
    """Per-run energy rows and each group's energy score (joules, scaling applied), where power was measured."""
    rows: list[dict] = []
    scores: dict[tuple[str, str, str], float] = {}
    for key, runs in sorted(group_runs.items()):
        power = c.power.get(key)
        if not power:
            continue
        submitter, system, benchmark = key
        valid = sorted(((run, verdict) for run, verdict in runs if verdict.valid), key=lambda item: item[0].member.path)
        times, energies, problem = [], [], None
        for run, verdict in valid:
            result_name = run.member.path.rsplit("/", 1)[-1].split(".")[0]
            files = power.get(result_name, {"node": [], "sw": []})
            time_ms = run.facts.run_stop_ms - run.facts.run_start_ms
            try:
                node_j, switch_j = run_energy_j(files["node"], files["sw"], time_ms)
            except EnergyError as exc:
                problem = problem or f"{result_name}: {exc}"
                continue
            times.append(verdict.time_to_train_min)
            energies.append(node_j + switch_j)
            rows.append({
                "round": c.round, "submitter": submitter, "system": system, "benchmark": benchmark,
                "file_name": run.member.path.rsplit("/", 1)[-1], "time_to_train_min": verdict.time_to_train_min,
                "node_energy_j": node_j, "switch_energy_j": switch_j, "energy_j": node_j + switch_j,
                "n_node_logs": len(files["node"]), "n_switch_logs": len(files["sw"]),
            })
        if problem is not None:
            c.reject(f"{submitter}/results/{system}/{benchmark}/power", STAGE_SCORE, f"energy not computed: {problem}")
            continue
        info = benchmark_rules(benchmark, c.rules)
        n_invalid = len(runs) - len(valid)
        unscaled = energy_score(times, energies, n_invalid, info.max_dropped) if n_invalid <= info.max_dropped else None
        factor = scaling_by_group.get(key, (1.0, None))[0]
        if unscaled is not None and factor is not None:
            scores[key] = unscaled * factor
    return rows, scores


def _v05_system_names(collector: _Collector) -> dict[tuple[str, str, str | None], str]:
    """v0.5 names every Google TPU system folder `tpu`: qualify a name used by several submissions."""
    submissions: dict[tuple[str, str], set[str]] = defaultdict(set)
    members = [r.member for r in collector.runs] + [m for m, _ in collector.systems.values()] + collector.missing_members
    for m in members:
        if m.submission is not None:
            submissions[(m.submitter, m.system)].add(m.submission)
    names = {}
    for (submitter, system), found in submissions.items():
        for submission in found:
            qualified = system if len(found) == 1 else f"{submission.split('/')[-1]}/{system}"
            names[(submitter, system, submission)] = qualified
    return names


def _assemble(c: _Collector) -> RoundData:
    names = _v05_system_names(c)

    def system_of(m: Member) -> str:
        return names.get((m.submitter, m.system, m.submission), m.system)

    systems_rows = []
    system_by_key: dict[tuple[str, str], SystemRecord] = {}
    for (submitter, _, _), (member, record) in sorted(c.systems.items()):
        system = system_of(member)
        system_by_key[(submitter, system)] = record
        systems_rows.append(
            {
                "round": c.round,
                "submitter": submitter,
                "system": system,
                "path": member.path,
                **{k: v for k, v in vars(record).items()},
                "is_cpu_only": record.accelerators == 0,
            }
        )

    run_rows = []
    groups: dict[tuple[str, str, str], list] = defaultdict(list)
    group_runs: dict[tuple[str, str, str], list[tuple[ParsedRun, object]]] = defaultdict(list)
    for run in c.runs:
        m, facts = run.member, run.facts
        benchmark = m.benchmark or facts.log_benchmark
        if benchmark is None:
            c.reject(m.path, STAGE_LAYOUT, "result log outside a benchmark folder, and the log does not name its benchmark")
            continue
        info = benchmark_rules(benchmark, c.rules)
        if not info.accepted:
            c.reject(m.path, STAGE_LAYOUT, info.note)
            continue
        system = system_of(m)
        verdict = judge_run(facts, run.failures, c.rules)
        groups[(m.submitter, system, benchmark)].append(verdict)
        group_runs[(m.submitter, m.system, benchmark)].append((run, verdict))
        if not verdict.valid:
            c.reject(m.path, STAGE_SCORE, f"run not counted: {verdict.reason}")
        run_rows.append(
            {
                "round": c.round,
                "submitter": m.submitter,
                "system": system,
                "benchmark": benchmark,
                "benchmark_canonical": info.canonical_name,
                "path": m.path,
                "file_name": m.path.rsplit("/", 1)[-1],
                "bytes": run.size,
                "sha256": run.sha256,
                "log_format": facts.log_format,
                "log_benchmark": facts.log_benchmark,
                "official_layout": m.official_layout,
                "n_marker_lines": facts.n_marker_lines,
                "n_parse_errors": facts.n_parse_errors,
                "n_run_start": facts.n_run_start,
                "n_run_stop": facts.n_run_stop,
                "run_start_ms": facts.run_start_ms,
                "run_stop_ms": facts.run_stop_ms,
                "run_stop_status": facts.run_stop_status,
                "time_to_train_min": verdict.time_to_train_min,
                "is_valid": verdict.valid,
                "invalid_reason": verdict.reason,
                "failed_rule": verdict.failed_rule,
            }
        )

    missing_by_group: dict[tuple[str, str, str], int] = defaultdict(int)
    for m in c.missing_members:
        if m.benchmark is not None:
            missing_by_group[(m.submitter, system_of(m), m.benchmark)] += 1
    scaling_by_group = {}
    for key, value in c.scaling.items():  # never in a v0.5 layout, so its system names need no qualification
        if benchmark_rules(key[2], c.rules).accepted:
            scaling_by_group[key] = value

    energy_rows, energy_by_group = _energy(c, group_runs, scaling_by_group)

    score_rows = []
    for key in sorted(set(groups) | set(missing_by_group) | set(scaling_by_group)):
        submitter, system, benchmark = key
        factor, scaling_problem = scaling_by_group.get(key, (1.0, None))
        info = benchmark_rules(benchmark, c.rules)
        result = score_group(groups.get(key, []), info, c.rules, factor or 1.0, missing_by_group.get(key, 0))
        status, reason, scaled = result.status, result.status_reason, result.time_to_train_min
        if scaling_problem is not None and scaled is not None:
            status, reason, scaled = NOT_SCORED, scaling_problem, None
        record = system_by_key.get((submitter, system))
        if record is None:
            note = "no systems JSON for this system folder"
            reason = note if reason is None else f"{reason}; {note}"
        score_rows.append(
            {
                "round": c.round,
                "submitter": submitter,
                "system": system,
                "benchmark": benchmark,
                "benchmark_canonical": info.canonical_name,
                "division": record.division if record else None,
                "availability": record.availability if record else None,
                "system_name": record.system_name if record else None,
                "accelerator_model_name": record.accelerator_model_name if record else None,
                "accelerators": record.accelerators if record else None,
                "number_of_nodes": record.number_of_nodes if record else None,
                "time_to_train_min": scaled,
                "time_to_train_unscaled_min": result.time_to_train_unscaled_min,
                "scaling_factor": factor,
                "n_runs": result.n_runs,
                "n_valid": result.n_valid,
                "n_required": result.n_required,
                "n_missing": missing_by_group.get(key, 0),
                "status": status,
                "status_reason": reason,
                "energy_j": energy_by_group.get(key) if status != NOT_SCORED else None,
            }
        )

    return RoundData(
        round=c.round,
        rules=c.rules,
        systems=pl.DataFrame(systems_rows, schema=SYSTEMS_FRAME_SCHEMA),
        runs=pl.DataFrame(run_rows, schema=RUNS_FRAME_SCHEMA),
        scores=pl.DataFrame(score_rows, schema=SCORES_FRAME_SCHEMA),
        rejections=pl.DataFrame(c.rejections, schema=REJECTIONS_FRAME_SCHEMA),
        energy=pl.DataFrame(energy_rows, schema=ENERGY_FRAME_SCHEMA),
        n_files=c.n_files,
        n_bytes=c.n_bytes,
        n_power_logs=c.n_power_logs,
    )


SYSTEMS_FRAME_SCHEMA = {
    "round": pl.String,
    "submitter": pl.String,
    "system": pl.String,
    "path": pl.String,
    "submitter_declared": pl.String,
    "division": pl.String,
    "division_raw": pl.String,
    "availability": pl.String,
    "status_raw": pl.String,
    "system_name": pl.String,
    "number_of_nodes": pl.Int64,
    "accelerators_per_node": pl.Int64,
    "accelerators": pl.Int64,
    "accelerator_model_name": pl.String,
    "host_processor_model_name": pl.String,
    "host_processors_per_node": pl.Int64,
    "framework": pl.String,
    "notes": pl.String,
    "is_cpu_only": pl.Boolean,
}
RUNS_FRAME_SCHEMA = {
    "round": pl.String,
    "submitter": pl.String,
    "system": pl.String,
    "benchmark": pl.String,
    "benchmark_canonical": pl.String,
    "path": pl.String,
    "file_name": pl.String,
    "bytes": pl.Int64,
    "sha256": pl.String,
    "log_format": pl.String,
    "log_benchmark": pl.String,
    "official_layout": pl.Boolean,
    "n_marker_lines": pl.Int64,
    "n_parse_errors": pl.Int64,
    "n_run_start": pl.Int64,
    "n_run_stop": pl.Int64,
    "run_start_ms": pl.Float64,
    "run_stop_ms": pl.Float64,
    "run_stop_status": pl.String,
    "time_to_train_min": pl.Float64,
    "is_valid": pl.Boolean,
    "invalid_reason": pl.String,
    "failed_rule": pl.String,
}
SCORES_FRAME_SCHEMA = {
    "round": pl.String,
    "submitter": pl.String,
    "system": pl.String,
    "benchmark": pl.String,
    "benchmark_canonical": pl.String,
    "division": pl.String,
    "availability": pl.String,
    "system_name": pl.String,
    "accelerator_model_name": pl.String,
    "accelerators": pl.Int64,
    "number_of_nodes": pl.Int64,
    "time_to_train_min": pl.Float64,
    "time_to_train_unscaled_min": pl.Float64,
    "scaling_factor": pl.Float64,
    "n_runs": pl.Int64,
    "n_valid": pl.Int64,
    "n_required": pl.Int64,
    "n_missing": pl.Int64,
    "status": pl.String,
    "status_reason": pl.String,
    "energy_j": pl.Float64,
}
REJECTIONS_FRAME_SCHEMA = {"round": pl.String, "path": pl.String, "stage": pl.String, "reason": pl.String}
ENERGY_FRAME_SCHEMA = {
    "round": pl.String,
    "submitter": pl.String,
    "system": pl.String,
    "benchmark": pl.String,
    "file_name": pl.String,
    "time_to_train_min": pl.Float64,
    "node_energy_j": pl.Float64,
    "switch_energy_j": pl.Float64,
    "energy_j": pl.Float64,
    "n_node_logs": pl.Int64,
    "n_switch_logs": pl.Int64,
}
