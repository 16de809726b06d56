"""Whether a run counts: its compliance failures where the round's rules are checked, the generic rules otherwise."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from mlperf_scaling.tasks.parse.numbers import MAX_RUN_MINUTES, BadNumber, usable_time_ms
from mlperf_scaling.tasks.parse.result_log import MLLOG, LogFacts
from mlperf_scaling.tasks.score.compliance import Failure, describe
from mlperf_scaling.tasks.score.rules import RoundRules, change_behind


@dataclass(frozen=True)
class RunVerdict:
    valid: bool
    time_to_train_min: float | None
    reason: str | None  # why the run does not count; None for a valid run
    failed_rule: str | None = None  # the first compliance rule it breaks: training_5.1.0/common.yaml:init_stop
    # the first rule that only today's rules have and the run fails, with the upstream change behind it; not counted
    later_rule_failed: str | None = None
    later_rule_reason: str | None = None
    valid_today: bool | None = None  # whether today's rules count the run; None: as `valid`


def judge_run(
    facts: LogFacts, failures: list[Failure] | None, rules: RoundRules, later: list[Failure] | None = None, valid_today: bool | None = None,
) -> RunVerdict:
    """Whether one parsed log counts: by its compliance failures where the round's rules are checked (as they stood
    when the round was published; `later` are the failures of rules changed since, reported, not counted, and
    `valid_today` today's rules' verdict where it may differ), by the generic rules (run_stop success, no corrupt
    line) otherwise."""
    verdict = _judge(facts, failures, rules)
    if valid_today is not None:
        # the published rules decide; today's verdict stands beside it (what sinks a compliant log sinks both)
        today = valid_today and _judge(facts, [], rules).valid
        if today != verdict.valid:
            verdict = replace(verdict, valid_today=today)
    if later:
        change = change_behind(rules.ruleset, later[0].rule)
        cited = f" ({change.cited})" if change else ""
        verdict = replace(verdict, later_rule_failed=f"{later[0].rule}{cited}", later_rule_reason=describe(later))
    return verdict


def _judge(facts: LogFacts, failures: list[Failure] | None, rules: RoundRules) -> RunVerdict:
    if facts.log_format is None:
        return RunVerdict(False, None, "no MLPerf log lines in the file")
    minutes = _minutes(facts)
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
    if facts.run_stop_status is None and (target := _hpc_quality_target(facts)) is not None:
        # MLPerf HPC v0.7 (no checker of its own): a run_stop without status counts when the log shows the benchmark's
        # quality target reached, as the bare run_stop of Training v0.5 does (only Fujitsu's ABCI 2048 logs this)
        key, better, threshold = target
        if _reaches(facts, key, better, threshold):
            return RunVerdict(True, minutes, None)
        return RunVerdict(False, minutes, f"run_stop has no status and {key} never reached the quality target {threshold}")
    if facts.run_stop_status is None and facts.eval_target is not None:
        # v0.5 NVIDIA logs end with a bare run_stop: the logged eval_target decides.
        if _reaches_eval_target(facts):
            return RunVerdict(True, minutes, None)
        return RunVerdict(False, minutes, f"run_stop has no status and eval_accuracy never reached eval_target {facts.eval_target}")
    if facts.run_stop_status != "success":
        status = facts.run_stop_status if facts.run_stop_status is not None else "none"
        return RunVerdict(False, minutes, f"run_stop does not report success (status: {status})")
    return RunVerdict(True, minutes, None)


def _minutes(facts: LogFacts) -> float | None:
    """(run_stop - run_start) in minutes where both are times; None otherwise (never a number that is not one)."""
    if facts.run_start_ms is None or facts.run_stop_ms is None:
        return None
    minutes = (facts.run_stop_ms - facts.run_start_ms) / 60 / 1000
    return minutes if math.isfinite(minutes) and minutes <= MAX_RUN_MINUTES else None


def _timing_verdict(facts: LogFacts, minutes: float | None) -> RunVerdict:
    """The summarizer drops a run without run_start or run_stop; a stop not after its start, a start or stop that is
    not a time, or a time to train beyond a year are judgements of ours (no time that is not a number is kept)."""
    if facts.run_start_ms is None:
        return RunVerdict(False, minutes, "run_start missing")
    if facts.run_stop_ms is None:
        return RunVerdict(False, minutes, "run_stop missing")
    try:
        usable_time_ms(facts.run_start_ms, "run_start's time_ms")
        usable_time_ms(facts.run_stop_ms, "run_stop's time_ms")
    except BadNumber as exc:
        return RunVerdict(False, None, f"{exc}: not a time to train")
    if minutes is None:
        return RunVerdict(False, None, "run_stop comes over a year after run_start: not a time to train")
    if minutes <= 0:
        return RunVerdict(False, minutes, "run_stop is not after run_start")
    return RunVerdict(True, minutes, None)


# The MLPerf HPC quality targets (the package's hpc_1.0.0 closed_<benchmark>.yaml, which the v0.7 rules were brought to
# in training_policies d724871, April 2021): (quality key, "lower" or "higher" is better, threshold)
HPC_QUALITY_TARGETS = {
    "cosmoflow": ("eval_error", "lower", 0.124),
    "deepcam": ("eval_accuracy", "higher", 0.82),
    "oc20": ("eval_error", "lower", 0.036),
    "openfold": ("eval_accuracy", "higher", 0.8),
}


def _hpc_quality_target(facts: LogFacts) -> tuple[str, str, float] | None:
    return HPC_QUALITY_TARGETS.get((facts.log_benchmark or "").lower())


def _reaches(facts: LogFacts, key: str, better: str, threshold: float) -> bool:
    for event_key, value, _ in facts.quality_events:
        if event_key == key and isinstance(value, (int, float)) and not isinstance(value, bool):
            if (value <= threshold) if better == "lower" else (value >= threshold):
                return True
    return False


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
