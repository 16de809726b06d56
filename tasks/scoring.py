"""Judge runs and score (submitter, system, benchmark) groups as the MLCommons summarizer does.

Plain Python floats in the official order of operations, so scores match to the last bit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tasks.parse_logs import MLLOG, LogFacts
from tasks.reference import benchmark_info, meets_target, quality_target


@dataclass(frozen=True)
class RunVerdict:
    valid: bool
    time_to_train_min: float | None
    reason: str | None  # why the run does not count; None for a valid run


def judge_run(facts: LogFacts, round_name: str, benchmark: str) -> RunVerdict:
    """Apply the official validity rules to one parsed log."""
    if facts.log_format is None:
        return RunVerdict(False, None, "no MLPerf log lines in the file")
    minutes = None
    if facts.run_start_ms is not None and facts.run_stop_ms is not None:
        minutes = (facts.run_stop_ms - facts.run_start_ms) / 60 / 1000
    if facts.log_format == MLLOG and facts.n_parse_errors:
        # checked first: an unreadable line is often why run_start or run_stop seems missing
        return RunVerdict(
            False,
            minutes,
            f"{facts.n_parse_errors} MLLOG line(s) do not parse, which invalidates the run "
            f"(first: {facts.first_parse_error})",
        )
    if facts.run_start_ms is None:
        return RunVerdict(False, minutes, "run_start missing")
    if facts.run_stop_ms is None:
        return RunVerdict(False, minutes, "run_stop missing")
    if minutes <= 0:
        return RunVerdict(False, minutes, "run_stop is not after run_start")
    if facts.run_stop_status is None and facts.eval_target is not None:
        # v0.5 NVIDIA logs end with a bare run_stop: the logged eval_target decides.
        if _reaches_eval_target(facts):
            return RunVerdict(True, minutes, None)
        return RunVerdict(False, minutes, f"run_stop has no status and eval_accuracy never reached eval_target {facts.eval_target}")
    if facts.run_stop_status != "success":
        status = facts.run_stop_status if facts.run_stop_status is not None else "none"
        return RunVerdict(False, minutes, f"run_stop does not report success (status: {status})")
    if facts.log_format == MLLOG:
        target = quality_target(round_name, benchmark)
        if target is not None and not any(
            meets_target(target.condition, value, facts.global_batch_size)
            for value in _target_values(facts, target.key)
        ):
            return RunVerdict(False, minutes, f"quality target not reached: no {target.key} with {target.condition}")
    return RunVerdict(True, minutes, None)


def _target_values(facts: LogFacts, key: str) -> list[Any]:
    """Values the quality condition is tried on, one per event of the target's key."""
    if key != "aggregated_eval_accuracy":
        return [value for event_key, value, _ in facts.quality_events if event_key == key]
    # Stable Diffusion logs FID and CLIP as separate eval_accuracy events; the official checker
    # joins them per evaluation point (samples_count, or step_num in older logs) into one value.
    aggregated: dict[Any, dict[str, Any]] = {}
    for event_key, value, metadata in facts.quality_events:
        if event_key == "aggregated_eval_accuracy":
            aggregated[("logged", len(aggregated))] = value
            continue
        if event_key != "eval_accuracy" or not isinstance(metadata, dict) or "metric" not in metadata:
            continue
        point = metadata.get("samples_count", metadata.get("step_num"))
        aggregated.setdefault(point, {})[metadata["metric"]] = value
    return list(aggregated.values())


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
NOT_SCORED = "not_scored"


@dataclass(frozen=True)
class GroupScore:
    time_to_train_min: float | None
    time_to_train_unscaled_min: float | None
    n_runs: int
    n_valid: int
    n_required: int
    max_dropped: int
    status: str
    status_reason: str | None


def score_group(
    verdicts: list[RunVerdict],
    benchmark: str,
    round_name: str,
    scaling_factor: float,
    n_missing: int = 0,
) -> GroupScore:
    """Score one (submitter, system, benchmark) from its runs' verdicts.

    `n_missing` counts logs of this group that the copy lacks (MISSING.txt): they are not
    runs the official tool saw here, but a score without them is flagged.
    """
    info = benchmark_info(benchmark, round_name)
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
    elif n_runs < info.n_required:
        status, reason = SCORED_INCOMPLETE, f"{n_runs} logs, {info.n_required} required"
    scaled = unscaled * scaling_factor
    return GroupScore(scaled, unscaled, n_runs, len(times), info.n_required, info.max_dropped, status, reason)
