"""Flow-run names that carry the round: analyze-v4-1 (Prefect names here use no dots)."""

from __future__ import annotations

from collections.abc import Callable

from prefect.runtime import flow_run


def round_run_name(prefix: str) -> Callable[[], str]:
    def name() -> str:
        return f"{prefix}-{str(flow_run.parameters.get('round_name', 'round')).replace('.', '-')}"

    return name
