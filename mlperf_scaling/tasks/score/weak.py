"""Score one MLPerf HPC weak-scaling result: many model instances trained at once on one machine, as the official
summarizer scores it (mlperf-logging `_compute_weak_score_standalone`, rulesets hpc 1.0.0 to 3.0.0).

The score is a tuple, not a time: M' (models that reached their target: the compliant logs), S (the instance scale
each log states, number_of_nodes x max(accelerators_per_node, 1)) and TTTa (minutes from the first instance's
run_start to the last one's run_stop). No run is dropped and no scaling.json applies; pruned instances are not read.
Too few models (fewer than the strong run count: deepcam and oc20 5, cosmoflow and openfold 10) is no score.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.score.rules import BenchmarkRules, RoundRules, RulesCoverage
from mlperf_scaling.tasks.score.validity import RunVerdict


@dataclass(frozen=True)
class WeakScore:
    number_of_models: int | None
    instance_scale: int | None
    time_to_train_all_min: float | None
    n_runs: int
    n_valid: int
    n_required: int | None
    status: ScoreStatus
    status_reason: str | None

    @property
    def models_per_minute(self) -> float | None:
        """Throughput, MLCommons' "models trained per minute": M' / TTTa."""
        if self.number_of_models is None or not self.time_to_train_all_min:
            return None
        return self.number_of_models / self.time_to_train_all_min


def logged_instance_scale(facts: LogFacts) -> int | None:
    """number_of_nodes x max(accelerators_per_node, 1) as one log states them; None where it does not state both (the
    official tool then counts the model and leaves the scale to another log)."""
    if facts.logged_nodes is None or facts.logged_accelerators_per_node is None:
        return None
    try:
        return int(facts.logged_nodes) * max(int(facts.logged_accelerators_per_node), 1)
    except (TypeError, ValueError, OverflowError):
        return None


def score_weak(runs: list[tuple[LogFacts, RunVerdict]], info: BenchmarkRules, rules: RoundRules) -> WeakScore:
    """The weak-scaling score of one (submitter, system, benchmark) from its instances' logs and verdicts."""
    counted = [(facts, verdict) for facts, verdict in runs
               if verdict.valid and facts.run_start_ms is not None and facts.run_stop_ms is not None]
    n_runs, n_valid = len(runs), len(counted)

    def no_score(reason: str) -> WeakScore:
        return WeakScore(None, None, None, n_runs, n_valid, info.n_required, ScoreStatus.NOT_SCORED, reason)

    if not runs:
        return no_score("no result logs")
    scales = {scale for facts, _ in counted if (scale := logged_instance_scale(facts)) is not None}
    if len(scales) > 1:
        # the official summarizer asserts one scale and stops the whole package on a second: no score is published
        return no_score(f"the instances state different instance scales ({', '.join(map(str, sorted(scales)))}): "
                        "the official summarizer stops on this")
    if info.n_required is not None and n_valid < info.n_required:
        return no_score(f"{n_valid} instance(s) reached the target, {info.n_required} required for a weak-scaling score")
    # as the summarizer: Python floats of the logged milliseconds, the earliest start and the latest stop
    start = min(float(facts.run_start_ms) for facts, _ in counted)  # type: ignore[arg-type]
    stop = max(float(facts.run_stop_ms) for facts, _ in counted)  # type: ignore[arg-type]
    status, reason = ScoreStatus.SCORED, None
    if rules.coverage is RulesCoverage.NEWER:
        status, reason = ScoreStatus.SCORED_UNCHECKED, "; ".join(note for note in (info.note, rules.note) if note)
    elif n_valid < n_runs:
        reason = f"{n_runs - n_valid} of {n_runs} instance(s) not counted (did not pass the checker)"
    return WeakScore(n_valid, next(iter(scales), None), (stop - start) / 60 / 1000, n_runs, n_valid, info.n_required, status, reason)
