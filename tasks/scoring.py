"""Judge runs and score (submitter, system, benchmark) groups as the MLCommons summarizer does.

Plain Python floats in the official order of operations, so scores match to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks.compliance import Failure, describe
from tasks.parse_logs import MLLOG, LogFacts
from tasks.rules import BenchmarkRules, RoundRules, RulesCoverage


@dataclass(frozen=True)
class RunVerdict:
    valid: bool
    time_to_train_min: float | None
    reason: str | None  # why the run does not count; None for a valid run
    failed_rule: str | None = None  # the first compliance rule it breaks: training_5.1.0/common.yaml:init_stop


def judge_run(facts: LogFacts, failures: list[Failure] | None, rules: RoundRules) -> RunVerdict:
    """Whether one parsed log counts: by its compliance failures where the round's rules are checked,
    by the generic rules (run_stop success, no corrupt line) otherwise."""
    if facts.log_format is None:
        return RunVerdict(False, None, "no MLPerf log lines in the file")
    minutes = None
    if facts.run_start_ms is not None and facts.run_stop_ms is not None:
        minutes = (facts.run_stop_ms - facts.run_start_ms) / 60 / 1000
    if rules.checked:
        if failures:
            return RunVerdict(False, minutes, describe(failures), failures[0].rule)
        if facts.n_lines_in_seconds and facts.run_stop_status != "success":
            # The official parser stops on time_s lines (v0.7 Alibaba), so MLCommons' tool gives no verdict here;
            # the published v0.7 scores count such a run only when its run_stop reports success.
            status = facts.run_stop_status if facts.run_stop_status is not None else "none"
            return RunVerdict(False, minutes, f"run_stop does not report success (status: {status}); the official "
                              "checker cannot read this log's time_s lines, and the published scores count only successful runs")
        return _timing_verdict(facts, minutes)
    if facts.log_format == MLLOG and facts.n_parse_errors:
        # checked first: an unreadable line is often why run_start or run_stop seems missing
        return RunVerdict(
            False,
            minutes,
            f"{facts.n_parse_errors} line(s) do not parse, which invalidates the run "
            f"(first: {facts.first_parse_error})",
        )
    timing = _timing_verdict(facts, minutes)
    if not timing.valid:
        return timing
    if facts.run_stop_status is None and facts.eval_target is not None:
        # v0.5 NVIDIA logs end with a bare run_stop: the logged eval_target decides.
        if _reaches_eval_target(facts):
            return RunVerdict(True, minutes, None)
        return RunVerdict(False, minutes, f"run_stop has no status and eval_accuracy never reached eval_target {facts.eval_target}")
    if facts.run_stop_status != "success":
        status = facts.run_stop_status if facts.run_stop_status is not None else "none"
        return RunVerdict(False, minutes, f"run_stop does not report success (status: {status})")
    return RunVerdict(True, minutes, None)


def _timing_verdict(facts: LogFacts, minutes: float | None) -> RunVerdict:
    """The summarizer drops a run without run_start or run_stop; a stop not after its start is a judgement of ours."""
    if facts.run_start_ms is None:
        return RunVerdict(False, minutes, "run_start missing")
    if facts.run_stop_ms is None:
        return RunVerdict(False, minutes, "run_stop missing")
    if minutes <= 0:
        return RunVerdict(False, minutes, "run_stop is not after run_start")
    return RunVerdict(True, minutes, None)


def _reaches_eval_target(facts: LogFacts) -> bool:
    try:
        target = float(facts.eval_target)
    except (TypeError, ValueError):
        return False
    for key, value, _ in facts.quality_events:
        if key != "eval_accuracy":
            continue
        if isinstance(value, dict):
            value = value.get("value")
        if isinstance(value, (int, float)) and value >= target:
            return True
    return False


def olympic_average(times: list[float], n_invalid: int, max_dropped: int) -> float | None:
    """Drop the `max_dropped` fastest and `max_dropped - n_invalid` slowest, average the rest.

    Invalid runs count as the slowest ones already dropped. None when nothing is left.
    """
    ordered = sorted(times)
    countable = ordered[max_dropped : len(ordered) - (max_dropped - n_invalid)]
    if not countable:
        return None
    return sum(countable) * 1.0 / len(countable)


SCORED = "scored"
SCORED_INCOMPLETE = "scored_incomplete"  # a score, but from fewer logs than the rules require
SCORED_UNCHECKED = "scored_unchecked"  # a score by the generic rules: the round is newer than the rules installed
NOT_SCORED = "not_scored"


@dataclass(frozen=True)
class GroupScore:
    time_to_train_min: float | None
    time_to_train_unscaled_min: float | None
    n_runs: int
    n_valid: int
    n_required: int | None
    max_dropped: int
    status: str
    status_reason: str | None


def score_group(
    verdicts: list[RunVerdict],
    info: BenchmarkRules,
    rules: RoundRules,
    scaling_factor: float,
    n_missing: int = 0,
) -> GroupScore:
    """Score one (submitter, system, benchmark) from its runs' verdicts.

    `n_missing` counts logs of this group that the copy lacks (MISSING.txt): they are not
    runs the official tool saw here, but a score without them is flagged.
    """
    times = [v.time_to_train_min for v in verdicts if v.valid]
    n_runs = len(verdicts)
    n_invalid = n_runs - len(times)
    unscaled = None
    reason = None
    if not verdicts:
        reason = "logs absent from this copy" if n_missing else "no result logs"
    elif n_invalid > info.max_dropped:
        reason = f"{n_invalid} invalid runs, more than the {info.max_dropped} olympic scoring may drop"
    else:
        unscaled = olympic_average(list(times), n_invalid, info.max_dropped)
        if unscaled is None:
            reason = f"{len(times)} valid run(s): none left after dropping {info.max_dropped} from each end"
    if unscaled is None:
        if n_missing and verdicts:
            reason += f"; {n_missing} log(s) absent from this copy"
        return GroupScore(None, None, n_runs, len(times), info.n_required, info.max_dropped, NOT_SCORED, reason)
    status = SCORED
    if n_missing:
        status, reason = SCORED_INCOMPLETE, f"{n_missing} log(s) absent from this copy (listed in MISSING.txt)"
    elif info.n_required is not None and n_runs < info.n_required:
        status, reason = SCORED_INCOMPLETE, f"{n_runs} logs, {info.n_required} required"
    if rules.coverage is RulesCoverage.NEWER:
        notes = [note for note in (reason, info.note, rules.note) if note]
        status, reason = SCORED_UNCHECKED, "; ".join(notes)
    scaled = unscaled * scaling_factor
    return GroupScore(scaled, unscaled, n_runs, len(times), info.n_required, info.max_dropped, status, reason)
