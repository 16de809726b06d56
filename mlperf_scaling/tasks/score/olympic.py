"""Olympic scoring, the one rule for times and energies alike, as the MLCommons summarizer applies it.

Plain Python floats in the official order of operations, so scores match to the last bit.
"""

from __future__ import annotations


def olympic_mean(ordered: list[float], n_invalid: int, max_dropped: int) -> float | None:
    """Drop the `max_dropped` first and `max_dropped - n_invalid` last of an ordered list, average the rest.

    Invalid runs count as the slowest ones, already dropped. None when nothing is left.
    """
    countable = ordered[max_dropped : len(ordered) - (max_dropped - n_invalid)]
    if not countable:
        return None
    return sum(countable) * 1.0 / len(countable)


def olympic_average(times: list[float], n_invalid: int, max_dropped: int) -> float | None:
    """The olympic average of run times: the fastest and slowest dropped."""
    return olympic_mean(sorted(times), n_invalid, max_dropped)
