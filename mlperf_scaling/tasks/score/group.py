"""Score one (submitter, system, benchmark) group from its runs' verdicts, as the MLCommons summarizer does."""

from __future__ import annotations

from dataclasses import dataclass

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.tasks.score.olympic import olympic_average
from mlperf_scaling.tasks.score.rules import BenchmarkRules, RoundRules, RulesCoverage
from mlperf_scaling.tasks.score.validity import RunVerdict


@dataclass(frozen=True)
class GroupScore:
    time_to_train_min: float | None
    time_to_train_unscaled_min: float | None
    n_runs: int
    n_valid: int
    n_required: int | None
    max_dropped: int
    status: ScoreStatus
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
    times = [v.time_to_train_min for v in verdicts if v.valid and v.time_to_train_min is not None]
    n_runs = len(verdicts)
    n_invalid = n_runs - len(times)
    unscaled = None
    reason = ""
    if not verdicts:
        reason = "logs absent from this copy" if n_missing else "no result logs"
    elif n_invalid > info.max_dropped:
        reason = f"{n_invalid} invalid runs, more than the {info.max_dropped} olympic scoring may drop"
    else:
        unscaled = olympic_average(times, n_invalid, info.max_dropped)
        if unscaled is None:
            reason = f"{len(times)} valid run(s): none left after dropping {info.max_dropped} from each end"
    if unscaled is None:
        if n_missing and verdicts:
            reason += f"; {n_missing} log(s) absent from this copy"
        return GroupScore(None, None, n_runs, len(times), info.n_required, info.max_dropped, ScoreStatus.NOT_SCORED, reason)
    status = ScoreStatus.SCORED
    if n_missing:
        status, reason = ScoreStatus.SCORED_INCOMPLETE, f"{n_missing} log(s) absent from this copy (listed in MISSING.txt)"
    elif info.n_required is not None and n_runs < info.n_required:
        status, reason = ScoreStatus.SCORED_INCOMPLETE, f"{n_runs} logs, {info.n_required} required"
    if rules.coverage is RulesCoverage.NEWER:
        notes = [note for note in (reason, info.note, rules.note) if note]
        status, reason = ScoreStatus.SCORED_UNCHECKED, "; ".join(notes)
    scaled = unscaled * scaling_factor
    return GroupScore(scaled, unscaled, n_runs, len(times), info.n_required, info.max_dropped, status, reason or None)
