"""Flow states that tell the truth: a failed round ends its flow run Failed, with the reason as the state's message and
its summary as the state's data, and a parent whose rounds failed ends Failed after the others have run."""

from __future__ import annotations

from typing import Any

from prefect.client.schemas.objects import State
from prefect.states import Completed, Failed

from mlperf_scaling.failures import ExpectedFailure
from mlperf_scaling.tasks.load.outcome import UNCHANGED, RoundOutcome


class RoundsFailed(ExpectedFailure):
    """The data of a flow run that ended Failed because rounds failed: its message says which, `outcome` holds what
    each round did. An exception, because Prefect raises a failed run's data where the run is a deployment's."""

    def __init__(self, message: str, outcome: Any):
        super().__init__(message, outcome)
        self.outcome = outcome

    def __str__(self) -> str:
        return self.args[0]


def failed_with(message: str, outcome: Any) -> State:
    """A Failed state saying `message`, whose data carries `outcome` (read back by result_of)."""
    return Failed(message=message, data=RoundsFailed(message, outcome))


def round_failed(outcome: RoundOutcome) -> State:
    """The final state of a round's flow run that failed: Failed, its message the reason, its data the outcome."""
    return failed_with(f"{outcome.round or 'round'}: {outcome.message or 'failed'}", outcome)


def failures_said(outcomes: list[RoundOutcome]) -> str:
    """The failed rounds and why, in one line."""
    return "; ".join(f"{o.round}: {o.message or 'failed'}" for o in outcomes if o.failed)  # whole: a cut message misleads


def checked_said(outcomes: list[RoundOutcome], done: str = "loaded and published") -> str:
    """What a run that went through did with its rounds, in one line: an operator tells a check that found nothing
    from one that never ran."""
    if not outcomes:
        return "no rounds to check"
    unchanged = [o.round for o in outcomes if o.status == UNCHANGED]
    if len(unchanged) == len(outcomes):
        return (f"nothing new: {len(outcomes)} round{'s' if len(outcomes) > 1 else ''} checked ({', '.join(map(str, unchanged))}), "
                f"{'each ' if len(outcomes) > 1 else ''}already loaded at the same version")
    loaded = [o.round for o in outcomes if o.status != UNCHANGED]
    return (f"{len(loaded)} of {len(outcomes)} rounds {done} ({', '.join(map(str, loaded))})"
            + (f"; {len(unchanged)} unchanged" if unchanged else ""))


def rounds_state(outcomes: list[RoundOutcome], what: str, done: str = "loaded and published") -> State:
    """A Completed state saying what was checked and done when every round went through; otherwise a Failed state
    listing the failed rounds. Either way its data is every round's outcome."""
    failed = [o for o in outcomes if o.failed]
    if not failed:
        return Completed(message=f"{what}: {checked_said(outcomes, done)}", data=outcomes)
    return failed_with(f"{what}: {len(failed)} of {len(outcomes)} rounds failed ({failures_said(outcomes)})", outcomes)


def result_of(state: State) -> Any:
    """What a flow run returned, failed or not; an exception it raised (a crash, not a failed round) is raised again."""
    result = state.result(raise_on_failure=False)
    if isinstance(result, RoundsFailed):
        return result.outcome
    if isinstance(result, BaseException):
        raise result
    return result
