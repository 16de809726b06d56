"""Whether a run counts: its compliance failures where the round's rules are checked, the generic rules otherwise."""

from __future__ import annotations

from dataclasses import dataclass

from mlperf_scaling.tasks.parse.result_log import MLLOG, LogFacts
from mlperf_scaling.tasks.score.compliance import Failure, describe
from mlperf_scaling.tasks.score.rules import RoundRules


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
    if minutes is None or minutes <= 0:
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
