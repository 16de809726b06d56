"""Score a round from its facts: each run judged, each (submitter, system, benchmark, scaling mode) scored, energy
where measured. Strong scaling (all of Training) by the olympic mean; MLPerf HPC weak scaling by tasks/score/weak.py.

The score step of source -> parse -> score: facts in, the rows of `systems`, `runs`, `scores`, `energy` and
`rejections` out, each frame built on its table's contract.
"""

from __future__ import annotations

import functools
import re
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.energy import EnergySchema
from mlperf_scaling.contracts.enums import ScoreStatus, Stage
from mlperf_scaling.contracts.rejections import RejectionsSchema
from mlperf_scaling.contracts.runs import RunsSchema
from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.contracts.systems import SystemsSchema
from mlperf_scaling.reference.lookup import published_result_id
from mlperf_scaling.rounds import TRAINING, suite_of
from mlperf_scaling.tasks.parse.config_match import ResultClues
from mlperf_scaling.tasks.parse.layout import STRONG, WEAK
from mlperf_scaling.tasks.parse.read import GroupKey, ParsedRun, RoundFacts
from mlperf_scaling.tasks.parse.run_config import RunConfiguration, run_configuration
from mlperf_scaling.tasks.parse.systems_json import SystemRecord
from mlperf_scaling.tasks.score.compliance import Judgement
from mlperf_scaling.tasks.score.configured import RoundImplementations, printed_name, with_config_file
from mlperf_scaling.tasks.score.convergence import Convergence, batch_size, group_convergence, run_convergence
from mlperf_scaling.tasks.score.energy import EnergyError, energy_score, run_energy_j
from mlperf_scaling.tasks.score.group import score_group
from mlperf_scaling.tasks.score.power_profile import power_profile
from mlperf_scaling.tasks.score.rcp_status import RcpReading, rcp_reading, rcp_status
from mlperf_scaling.tasks.score.result_ids import result_ids, summary_row
from mlperf_scaling.tasks.score.rules import RoundRules, benchmark_rules, rules_for_round, summary_benchmarks
from mlperf_scaling.tasks.score.validity import RunVerdict, judge_run
from mlperf_scaling.tasks.score.weak import logged_instance_scale, score_weak


@dataclass
class RoundData:
    """Everything read and scored from one round, as frames ready for validation."""

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


def _run_spread(verdicts: list[RunVerdict], factor: float) -> tuple[float | None, float | None, float | None]:
    """The run-to-run spread of a score: fastest and slowest valid run and their standard deviation, scaled as the score."""
    times = [v.time_to_train_min * factor for v in verdicts if v.valid and v.time_to_train_min is not None]
    if not times:
        return None, None, None
    return min(times), max(times), statistics.stdev(times) if len(times) >= 2 else None


def _most_common(configurations: list[RunConfiguration]) -> RunConfiguration:
    """A score's configuration: its valid runs' (they share one, but for the rare run that differs)."""
    if not configurations:
        return RunConfiguration()
    if all(configuration == configurations[0] for configuration in configurations):
        return configurations[0]
    return Counter(configurations).most_common(1)[0][0]


def score_round(facts: RoundFacts) -> RoundData:
    """The round's rows, every run judged by the round's rules (compliance verdicts came from the parse workers).

    `seconds` covers reading and scoring, as `ingestions.seconds` says."""
    started = time.perf_counter()
    data = _assemble(facts, rules_for_round(facts.round))
    return replace(data, seconds=facts.seconds + (time.perf_counter() - started))


def _measurement(submitter: str, nodes: list) -> str | None:
    """Where power was read: a folder that says so (v4.0 smc-ac-power, smc-dc-power), else AC converted by the node's
    conversion_eff (the rules' AC/DC conversion), else unknown."""
    named = re.search(r"(?<![a-z])(ac|dc)[-_]power", submitter, re.I)
    if named is not None:
        return named.group(1).upper()
    return "AC" if any(node.efficiency != 1.0 for node in nodes) else None


def _energy(c: RoundFacts, rules: RoundRules, group_runs: dict, scaling_by_group: dict) -> tuple[list[dict], dict]:
    """Per-run energy rows and each group's energy score (joules, scaling applied), where power was measured."""
    rows: list[dict] = []
    scores: dict[GroupKey, float] = {}
    for key, runs in sorted(group_runs.items()):
        power = c.power.get(key[:3]) if key[3] == STRONG else None
        if not power:
            continue
        submitter, system, benchmark, _ = key
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
            profile = power_profile(files["node"], run.facts.run_start_ms, run.facts.run_stop_ms, run.facts.phases)
            rows.append({
                **vars(profile),
                "measurement": _measurement(submitter, files["node"]),
                "switch_share": switch_j / (node_j + switch_j) if node_j + switch_j > 0 else None,
                "round": c.round, "submitter": submitter, "system": system, "benchmark": benchmark,
                "file_name": run.member.path.rsplit("/", 1)[-1], "time_to_train_min": verdict.time_to_train_min,
                "node_energy_j": node_j, "switch_energy_j": switch_j, "energy_j": node_j + switch_j,
                "n_node_logs": len(files["node"]), "n_switch_logs": len(files["sw"]),
            })
        if problem is not None:
            c.reject(f"{submitter}/results/{system}/{benchmark}/power", Stage.SCORE, f"energy not computed: {problem}")
            continue
        info = benchmark_rules(benchmark, rules)
        n_invalid = len(runs) - len(valid)
        unscaled = energy_score(times, energies, n_invalid, info.max_dropped) if n_invalid <= info.max_dropped else None
        factor = scaling_by_group.get(key, (1.0, None))[0]
        if unscaled is not None and factor is not None:
            scores[key] = unscaled * factor
    return rows, scores


def _result_ids(round_name: str, rules: RoundRules, systems: dict[GroupKey, SystemRecord], score_rows: list[dict]) -> dict:
    """Each scored system's row in the summarizer's spreadsheet, numbered as it numbers them (tasks/score/result_ids.py)."""
    columns = summary_benchmarks(rules.ruleset, (row["benchmark"] for row in score_rows))
    times: dict[GroupKey, dict[str, float | None]] = defaultdict(dict)
    for row in score_rows:
        times[(row["submitter"], row["system"])][row["benchmark"]] = row["time_to_train_min"]
    rows = []
    for key, by_benchmark in times.items():
        record = systems.get(key)
        if record is None:  # the summarizer reads only system folders with a systems JSON
            continue
        rows.append(summary_row(
            key[0], key[1], record.availability, record.covariates.description_json if record.covariates is not None else None,
            record.notes, (by_benchmark.get(benchmark) for benchmark in columns),
        ))
    return result_ids(round_name, rows)


def without_fp8_path(canonical_name: str) -> bool:
    """A workload whose implementations train inside Lightning's 16-bit mixed precision with no FP8 in it (Stable
    Diffusion's NeMo UNet); Flux's and the language models' run FP8 inside the same wrapper."""
    return canonical_name.startswith("stable_diffusion")


def _assemble(c: RoundFacts, rules: RoundRules) -> RoundData:
    system_of = c.system_of
    suite = suite_of(c.round)

    systems_rows = []
    system_by_key: dict[GroupKey, SystemRecord] = {}
    for (submitter, _, _), (member, record) in sorted(c.systems.items()):
        system = system_of(member)
        system_by_key[(submitter, system)] = record
        systems_rows.append(
            {
                "round": c.round,
                "suite": suite,
                "submitter": submitter,
                "system": system,
                "path": member.path,
                **{k: v for k, v in vars(record).items() if k != "covariates"},
                **(vars(record.covariates) if record.covariates is not None else {}),
                "is_cpu_only": record.accelerators == 0,
            }
        )

    run_rows = []
    groups: dict[GroupKey, list[RunVerdict]] = defaultdict(list)
    group_runs: dict[GroupKey, list[tuple[ParsedRun, RunVerdict]]] = defaultdict(list)
    # of the valid runs of each group: their convergence and batch size, for the analysis
    trained: dict[GroupKey, list[tuple[Convergence, object]]] = defaultdict(list)
    read_for_rcp: dict[GroupKey, list[RcpReading]] = defaultdict(list)
    configured: dict[GroupKey, list[RunConfiguration]] = defaultdict(list)
    printed: dict[GroupKey, list[str]] = defaultdict(list)  # the config names the group's logs print
    mixed: dict[GroupKey, list[str]] = defaultdict(list)  # the mixed precision Lightning says it wraps the run in
    for run in c.runs:
        m, facts = run.member, run.facts
        benchmark = m.benchmark or facts.log_benchmark
        if benchmark is None:
            c.reject(m.path, Stage.LAYOUT, "result log outside a benchmark folder, and the log does not name its benchmark")
            continue
        info = benchmark_rules(benchmark, rules)
        if not info.accepted:
            c.reject(m.path, Stage.LAYOUT, info.note or "not a benchmark of this round")
            continue
        system = system_of(m)
        judgement = run.verdict if isinstance(run.verdict, Judgement) else None
        verdict = judge_run(
            facts, judgement.failures if judgement else None, rules, judgement.later if judgement else None, judgement.valid_today if judgement else None
        )
        converged = run_convergence(facts, judgement)
        described_system = system_by_key.get((m.submitter, system))
        global_batch = batch_size([facts.global_batch_size])
        configuration = run_configuration(facts.configuration, described_system.accelerators if described_system else None, global_batch,
                                          facts.printed)
        groups[(m.submitter, system, benchmark, m.scaling_mode)].append(verdict)
        if facts.printed is not None and facts.printed.mixed_precision is not None:
            mixed[(m.submitter, system, benchmark, m.scaling_mode)].append(facts.printed.mixed_precision)
        for name in (facts.printed.config_name if facts.printed else None, configuration.config_filename):
            if (stem := printed_name(name)) is not None and stem not in printed[(m.submitter, system, benchmark, m.scaling_mode)]:
                printed[(m.submitter, system, benchmark, m.scaling_mode)].append(stem)
        read_for_rcp[(m.submitter, system, benchmark, m.scaling_mode)].append(rcp_reading(facts, rules.ruleset))
        if verdict.valid:
            trained[(m.submitter, system, benchmark, m.scaling_mode)].append((converged, facts.global_batch_size))
            configured[(m.submitter, system, benchmark, m.scaling_mode)].append(configuration)
        group_runs[(m.submitter, m.system, benchmark, m.scaling_mode)].append((run, verdict))
        if not verdict.valid:
            c.reject(m.path, Stage.SCORE, f"run not counted: {verdict.reason}")
        run_rows.append(
            {
                "round": c.round,
                "suite": suite,
                "submitter": m.submitter,
                "system": system,
                "benchmark": benchmark,
                "scaling_mode": m.scaling_mode,
                "logged_instance_scale": logged_instance_scale(facts),
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
                "is_valid_today": verdict.valid if verdict.valid_today is None else verdict.valid_today,
                "invalid_reason": verdict.reason,
                "failed_rule": verdict.failed_rule,
                "later_rule_failed": verdict.later_rule_failed,
                "later_rule_reason": verdict.later_rule_reason,
                "global_batch_size": global_batch,
                "samples_to_converge": converged.samples,
                "epochs_to_converge": converged.epochs,
                **vars(configuration),
            }
        )

    missing_by_group: dict[GroupKey, int] = defaultdict(int)
    for m in c.missing_members:
        if m.benchmark is not None:
            missing_by_group[(m.submitter, system_of(m), m.benchmark, m.scaling_mode)] += 1
    scaling_by_group = {}
    for key, value in c.scaling.items():  # never in a v0.5 layout, so its system names need no qualification
        if benchmark_rules(key[2], rules).accepted:
            scaling_by_group[(*key, STRONG)] = value  # scaling.json exists for strong scaling only

    energy_rows, energy_by_group = _energy(c, rules, group_runs, scaling_by_group)

    implementations = RoundImplementations.read(c.implementation_files)
    score_rows = []
    for key in sorted(set(groups) | set(missing_by_group) | set(scaling_by_group)):
        submitter, system, benchmark, mode = key
        factor, scaling_problem = scaling_by_group.get(key, (1.0, None))
        info = benchmark_rules(benchmark, rules)
        weak = score_weak([(run.facts, verdict) for run, verdict in group_runs.get(key, [])], info, rules) if mode == WEAK else None
        result = score_group(groups.get(key, []) if weak is None else [], info, rules, factor or 1.0, missing_by_group.get(key, 0))
        status, reason, scaled = result.status, result.status_reason, result.time_to_train_min
        if weak is not None:
            status, reason, factor = weak.status, weak.status_reason, None
        if scaling_problem is not None and scaled is not None:
            status, reason, scaled = ScoreStatus.NOT_SCORED, scaling_problem, None
        spread = _run_spread(groups.get(key, []), factor or 1.0) if scaled is not None else (None, None, None)
        runs_trained = trained.get(key, [])
        described: SystemRecord | None = system_by_key.get((submitter, system))
        # the summarizer compares the division as the file spells it: v1.0 PCL's "close" gets no status
        rcp, rcp_factor = rcp_status(read_for_rcp.get(key, []), rules.ruleset, described.division_raw if described else None)
        if described is None:
            note = "no systems JSON for this system folder"
            reason = note if reason is None else f"{reason}; {note}"
        score_rows.append(
            {
                "round": c.round,
                "suite": suite,
                "submitter": submitter,
                "system": system,
                "benchmark": benchmark,
                "scaling_mode": mode,
                "benchmark_canonical": info.canonical_name,
                "division": described.division if described else None,
                "availability": described.availability if described else None,
                "system_name": described.system_name if described else None,
                "accelerator_model_name": described.accelerator_model_name if described else None,
                "accelerators": described.accelerators if described else None,
                "number_of_nodes": described.number_of_nodes if described else None,
                "time_to_train_min": scaled,
                "time_to_train_unscaled_min": result.time_to_train_unscaled_min,
                "scaling_factor": factor,
                "rcp_status": rcp or None,
                "rcp_factor": rcp_factor,
                "n_runs": result.n_runs if weak is None else weak.n_runs,
                "n_valid": result.n_valid if weak is None else weak.n_valid,
                "n_required": result.n_required if weak is None else weak.n_required,
                "number_of_models": weak.number_of_models if weak else None,
                "instance_scale": weak.instance_scale if weak else None,
                "time_to_train_all_min": weak.time_to_train_all_min if weak else None,
                "models_per_minute": weak.models_per_minute if weak else None,
                "n_missing": missing_by_group.get(key, 0),
                "status": status,
                "status_reason": reason,
                "energy_j": energy_by_group.get(key) if status != ScoreStatus.NOT_SCORED else None,
                "time_to_train_min_low": spread[0],
                "time_to_train_min_high": spread[1],
                "time_to_train_std_min": spread[2],
                "global_batch_size": batch_size([size for _, size in runs_trained]),
                "samples_to_converge": group_convergence([c.samples for c, _ in runs_trained]),
                "epochs_to_converge": group_convergence([c.epochs for c, _ in runs_trained]),
                **with_config_file(_most_common(configured.get(key, [])), implementations.match(
                    submitter, benchmark, info.canonical_name,
                    ResultClues(system, tuple(printed.get(key, [])), described.accelerator_model_name if described else None,
                                described.number_of_nodes if described else None, described.accelerators_per_node if described else None)),
                    Counter(mixed[key]).most_common(1)[0][0] if mixed.get(key) and without_fp8_path(info.canonical_name) else None,
                    functools.partial(implementations.consensus, benchmark, info.canonical_name,
                                      described.accelerator_model_name if described else None),
                    described.accelerators if described else None),
            }
        )

    # the spreadsheet's row numbers are Training's (one row per system, a column per benchmark); HPC's tables are not numbered
    rows_of_the_sheet = _result_ids(c.round, rules, system_by_key, score_rows) if suite == TRAINING else {}
    for row in score_rows:
        # the ID MLCommons published for the system where one was found that names it; the summarizer's row beside it
        row["result_id"] = published_result_id(c.round, row["submitter"], row["system"])
        row["summarizer_row_id"] = rows_of_the_sheet.get((row["submitter"], row["system"]))

    return RoundData(
        round=c.round,
        rules=rules,
        systems=pl.DataFrame(systems_rows, schema=frame_schema(SystemsSchema)),
        runs=pl.DataFrame(run_rows, schema=frame_schema(RunsSchema)),
        scores=pl.DataFrame(score_rows, schema=frame_schema(ScoresSchema)),
        rejections=pl.DataFrame(c.rejections, schema=frame_schema(RejectionsSchema)),
        energy=pl.DataFrame(energy_rows, schema=frame_schema(EnergySchema)),
        n_files=c.n_files,
        n_bytes=c.n_bytes,
        n_power_logs=c.n_power_logs,
    )


