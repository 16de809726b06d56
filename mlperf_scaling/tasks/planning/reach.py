"""How far a request lies from what was measured, one notion for both planners: a factor, 1 within the measured range,
N / the largest beyond it and the smallest / N below it; and the words that say it. The benchmark planner measures it
on a group's counts (tasks/planning/predict.py), the model planner on the language models' sizes, sequence lengths and
counts (tasks/planning/pace.py); both warn past WARN_BEYOND and call a request past FAR_BEYOND a guess."""

from __future__ import annotations

WARN_BEYOND = 2.0  # beyond this factor a prediction is an extrapolation, said so
FAR_BEYOND = 100.0  # and beyond this one, a guess rather than a prediction, said loudly


def beyond(value: float, low: float, high: float) -> float:
    """How far outside [low, high] a value lies, as a factor: value / high above, low / value below, 1 inside."""
    return max(float(low) / value, value / float(high), 1.0)


def distance_words(ratio: float, what: str, span: str) -> str:
    """`what` (a count, a size) at `ratio` beyond `span` (what was measured), in the words both planners use."""
    if ratio >= FAR_BEYOND:
        return f"{what} is {ratio:,.0f}x beyond {span}: far outside the evidence, a guess rather than a prediction"
    tail = ": an extrapolation" if ratio > WARN_BEYOND else ""
    return f"{what} is {ratio:,.1f}x beyond {span}{tail}"
