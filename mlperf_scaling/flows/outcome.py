"""Flow states that tell the truth: a failed round ends its flow run Failed, with the reason as the state's message and
its summary as the state's data, and a parent whose rounds failed ends Failed after the others have run."""

from __future__ import annotations

from typing import Any

from prefect.client.schemas.objects import State
from prefect.states import Failed

from mlperf_scaling.failures import quiet_expected_failures

quiet_expected_failures()  # every flow module imports this one: a failure we expect is one line in the run's log


def round_failed(summary: dict) -> State:
    """The final state of a round's flow run that failed: Failed, its message the reason, its data the summary."""
    return Failed(message=f"{summary.get('round') or 'round'}: {summary.get('message') or 'failed'}", data=summary)


def is_failure(summary: dict) -> bool:
    return summary.get("status") == "failed" or bool(summary.get("analysis_failed"))


def rounds_state(summaries: list[dict], what: str) -> list[dict] | State:
    """The summaries, as the flow's result when every round went through; otherwise a Failed state listing the
    failed rounds, with every summary as its data."""
    failed = [s for s in summaries if is_failure(s)]
    if not failed:
        return summaries
    names = "; ".join(f"{s.get('round')}: {(s.get('message') or 'failed')[:200]}" for s in failed)
    return Failed(message=f"{what}: {len(failed)} of {len(summaries)} rounds failed ({names})", data=summaries)


def result_of(state: State) -> Any:
    """What a flow run returned, failed or not; an exception it raised (a crash, not a failed round) is raised again."""
    result = state.result(raise_on_failure=False)
    if isinstance(result, BaseException):
        raise result
    return result
