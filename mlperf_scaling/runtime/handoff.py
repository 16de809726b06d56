"""Handing big objects from task to task: Prefect walks every parameter looking for futures to wait on, which for a
round's parsed logs (thousands of objects) costs seconds. Prefect's own `opaque` tells it not to walk inside (and
still resolves a future given directly); `untraversed` is that annotation, typed as the value it wraps."""

from __future__ import annotations

from typing import TypeVar, cast

from prefect.utilities.annotations import opaque

T = TypeVar("T")


def untraversed(value: T) -> T:
    return cast(T, opaque(value))
