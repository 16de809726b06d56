"""The source stage as Prefect tasks: a source's version without its data, and the rounds a source holds.

Retries are set by the flows from the settings (`with_options`), once.
"""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.failures import MachineFault
from mlperf_scaling.runtime.run_context import run_logger
from mlperf_scaling.tasks.source.git import RemoteUnreachable, RepositoryAbsent
from mlperf_scaling.tasks.source.members import Provenance, SourceError
from mlperf_scaling.tasks.source.releases import discover_rounds, normalise_remote_base, rounds_in_mirror
from mlperf_scaling.tasks.source.resolve import resolve_source, source_version


def worth_retrying(task, task_run, state) -> bool:
    """Prefect's retry condition for network steps: a remote that cannot be reached at all is not tried again (one
    probe says it), nor one that answered that the repository does not exist (asking again gets the same answer);
    other failures (a transfer cut mid-way, a server error) are. Nor a fault of the machine (a full disk, a lost
    cluster): waiting does not free the disk."""
    return not isinstance(state.data, RemoteUnreachable | RepositoryAbsent | MachineFault)


@task(name="source-version", timeout_seconds=300, cache_policy=NO_CACHE, retry_condition_fn=worth_retrying)
def find_source_version(spec: str, round_name: str | None = None, timeout_s: float = 60) -> Provenance:
    """The commit or archive hash of a source, read without fetching its data (git ls-remote for a URL)."""
    return source_version(resolve_source(spec, round_name), timeout_s)


@task(name="list-rounds", timeout_seconds=900, cache_policy=NO_CACHE, retry_condition_fn=worth_retrying)
def list_rounds(mirror: str | None, remote_base: str, known: list[str], timeout_s: float = 60) -> list[str]:
    """Every round a source holds: each training_results_vX.Y and hpc_results_vX.Y of the mirror, else every round published at the
    remote, found from the rounds `known` on."""
    logger = run_logger()
    if mirror is not None:
        rounds = rounds_in_mirror(Path(mirror))
        if not rounds:
            raise SourceError(f"{mirror} holds no training_results_vX.Y.tar.gz (hpc_results_vX.Y.tar.gz) or such a repository")
        logger.info("every round in the mirror %s: %s", mirror, " ".join(rounds))
        return rounds
    base = normalise_remote_base(remote_base)
    rounds = list(discover_rounds(base, known, timeout_s))
    if not rounds:
        raise SourceError(f"no training_results_vX.Y or hpc_results_vX.Y repository found at {base}")
    logger.info("every round published at %s: %s", base, " ".join(rounds))
    return rounds


@task(name="list-remote-rounds", timeout_seconds=900, cache_policy=NO_CACHE, retry_condition_fn=worth_retrying)
def list_remote_rounds(remote_base: str, known: list[str], timeout_s: float = 60) -> dict[str, str]:
    """Round -> head commit, for every round found at a remote."""
    return discover_rounds(remote_base, known, timeout_s)
