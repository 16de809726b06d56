"""Flow-run names that carry the round: analyze-v4-1 (Prefect names here use no dots)."""

from __future__ import annotations

from collections.abc import Callable

from prefect.runtime import flow_run

from mlperf_scaling.runtime.run_context import named_for_round


def round_run_name(prefix: str) -> Callable[[], str]:
    return lambda: named_for_round(prefix, flow_run.parameters)
