"""How much training a run needed to reach its quality target, from its evaluations.

Where the round's rules are checked, the first evaluation that met the target (the compliance rule that checks it
says which); otherwise the last evaluation before run_stop. As the logs state it, the official RCP checker's units:
`samples_count` (LLM benchmarks, Stable Diffusion, and any log that gives it) and `epoch_num` (most others; BERT's
counts samples; v0.5 writes `epoch`). Only ratios within one benchmark are used, so each unit is kept as logged.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any

from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.score.compliance import Judgement


@dataclass(frozen=True)
class Convergence:
    samples: float | None
    epochs: float | None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        return None
    return number if math.isfinite(number) and number >= 0 else None  # NaN, infinity and negatives say nothing


def _last_evaluation(facts: LogFacts) -> dict:
    for key, value, metadata in reversed(facts.quality_events):
        if key != "eval_accuracy":
            continue
        point = dict(metadata) if isinstance(metadata, dict) else {}
        if isinstance(value, dict) and "epoch" in value:  # v0.5: {"epoch": 32, "value": 0.149}
            point.setdefault("epoch_num", value["epoch"])
        return point
    return {}


def run_convergence(facts: LogFacts, judgement: Judgement | None) -> Convergence:
    """Samples and epochs one run trained until it reached its target."""
    point = judgement.converged_at if judgement is not None and judgement.converged_at is not None else _last_evaluation(facts)
    return Convergence(_number(point.get("samples_count")), _number(point.get("epoch_num")))


def group_convergence(values: list[float | None]) -> float | None:
    """One system's samples (or epochs) to converge, as the summarizer reports them: the mean of its runs' values,
    the highest and the lowest dropped when there are three or more."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    if len(known) >= 3:
        known = known[1:-1]
    return statistics.fmean(known)


def batch_size(values: list[Any]) -> float | None:
    """The global batch size a system ran with: the most frequent one its runs logged."""
    known = [_number(v) for v in values]
    numbers = [v for v in known if v is not None]
    return statistics.mode(numbers) if numbers else None
