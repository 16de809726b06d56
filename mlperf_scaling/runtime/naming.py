"""Flow-run names that say what a run is for: analyze-v4-1 for a round's, run-v4-1-v5-1-20261126T0220Z for a top-level
run (Prefect names here use no dots)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from prefect.runtime import flow_run

from mlperf_scaling.runtime.run_context import named_for_round


def round_run_name(prefix: str) -> Callable[[], str]:
    return lambda: named_for_round(prefix, flow_run.parameters)


def _rounds_part(rounds: object) -> str:
    if not rounds:
        return "all-rounds"
    names = [str(name).replace(".", "-") for name in rounds]  # type: ignore[attr-defined]
    return "-".join(names) if len(names) <= 2 else f"{names[0]}-to-{names[-1]}"


def started_run_name(prefix: str) -> Callable[[], str]:
    """A top-level run's name: what it was asked for (its rounds, or its sources' count) and when it started, in UTC,
    e.g. run-v4-1-v5-1-20261126T0220Z, where Prefect would pick two random words."""

    def name() -> str:
        parameters = flow_run.parameters
        started = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%MZ")
        if "rounds" in parameters:
            return f"{prefix}-{_rounds_part(parameters['rounds'])}-{started}"
        if "sources" in parameters:
            count = len(parameters["sources"] or [])
            return f"{prefix}-{count}-source{'s' if count != 1 else ''}-{started}"
        return f"{prefix}-{started}"

    return name
