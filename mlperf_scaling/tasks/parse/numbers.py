"""The one guard for numbers read from files: what is not a usable number is said in words, never passed on.

JSON as Python reads it accepts NaN, Infinity and 1e400 (infinity); a value may be a string, null or an integer of
any size. Whatever a file says, a number that reaches a computation or a table is finite and in its plausible range;
anything else makes its line (or file) unusable, with the reason, and the rest of the round goes on.
"""

from __future__ import annotations

import math
from typing import Any

# A run's start and stop: milliseconds since the epoch, up to 2100-01-01.
MAX_TIME_MS = 4_102_444_800_000.0
# No published run took more than a day (v0.7's slowest: 19 hours); a time to train beyond a year is not a measurement.
MAX_RUN_MINUTES = 365.25 * 24 * 60
# scaling.json: the RCP factor stretches a score by a few percent to a few tenths; beyond 100 it is not a factor.
MAX_SCALING_FACTOR = 100.0
_DEPTH = 32  # a decoded event is walked this deep at most (deeper is refused as a whole elsewhere)


class BadNumber(ValueError):
    """A value that is not a usable number; the message says which and why."""


def shown(value: Any) -> str:
    """A value as a person reads it in a message, never thousands of digits long."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {len(str(abs(value))) if value.bit_length() < 4000 else 'over 1,000'} digits"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def finite_number(value: Any, what: str, low: float | None = None, high: float | None = None, low_open: bool = False) -> float:
    """`value` as a finite float within [low, high] (low excluded when `low_open`); BadNumber says what is wrong."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadNumber(f"{what} is {shown(value)}, not a number")
    try:
        number = float(value)
    except OverflowError:  # an integer beyond any float
        raise BadNumber(f"{what} is {shown(value)}, too large to be a number here") from None
    if not math.isfinite(number):
        raise BadNumber(f"{what} is {shown(value)}, not a finite number")
    if low is not None and (number < low or (low_open and number == low)):
        raise BadNumber(f"{what} is {shown(value)}, below its range ({'above' if low_open else 'from'} {low:g})")
    if high is not None and number > high:
        raise BadNumber(f"{what} is {shown(value)}, beyond its range (up to {high:g})")
    return number


def finite_time(value: Any, what: str = "time_ms") -> float:
    """A line's timestamp: any finite number, as the official parser reads it (published logs carry placeholders such
    as 0 and 123, and one v2.1 line a time in the year 2497); whether a run's start and stop are times is judged where
    its time to train is computed (`usable_time_ms`)."""
    return finite_number(value, what)


def usable_time_ms(value: Any, what: str) -> float:
    """A run's start or stop: milliseconds since the epoch, from 1970 to 2100."""
    return finite_number(value, what, 0.0, MAX_TIME_MS)


def scaling_factor(value: Any) -> float:
    """The RCP scaling factor of scaling.json: positive, finite and at most MAX_SCALING_FACTOR."""
    return finite_number(value, "scaling_factor", 0.0, MAX_SCALING_FACTOR, low_open=True)


def non_finite_in(value: Any, depth: int = 0) -> str | None:
    """Where a decoded JSON value holds NaN or an infinity ('value', 'metadata.samples_count'), else None."""
    if isinstance(value, float):
        return "" if not math.isfinite(value) else None
    if depth >= _DEPTH:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = non_finite_in(item, depth + 1)
            if found is not None:
                return f"{key}.{found}" if found else str(key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = non_finite_in(item, depth + 1)
            if found is not None:
                return f"{index}.{found}" if found else str(index)
    return None
