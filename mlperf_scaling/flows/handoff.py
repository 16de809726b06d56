"""Handing big objects from task to task: Prefect walks every parameter looking for futures to wait on, which for a
round's parsed logs (thousands of objects) costs seconds; `opaque` tells it not to (prefect's `quote`), keeping the type."""

from __future__ import annotations

from typing import TypeVar, cast

from prefect.utilities.annotations import quote

T = TypeVar("T")


def opaque(value: T) -> T:
    return cast(T, quote(value))
