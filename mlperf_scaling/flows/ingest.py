"""Ingestion flows: one round from one source, and several sources in one call."""

from __future__ import annotations

import time

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from mlperf_scaling.contracts.enums import IngestionStatus
from mlperf_scaling.failures import MachineFault, said
from mlperf_scaling.flows.outcome import result_of, round_failed, rounds_state
from mlperf_scaling.rounds import round_from_name
from mlperf_scaling.runtime.handoff import untraversed
from mlperf_scaling.runtime.interrupts import now_doing
from mlperf_scaling.runtime.naming import started_run_name
from mlperf_scaling.runtime.run_context import note_flow_run
from mlperf_scaling.settings import Settings
from mlperf_scaling.tasks.load.outcome import UNCHANGED, RoundOutcome
from mlperf_scaling.tasks.load.steps import check_loaded, load_round, record_failure, validate_round
from mlperf_scaling.tasks.parse.steps import read_round
from mlperf_scaling.tasks.publish.steps import publish_rejections
from mlperf_scaling.tasks.score.compliance import judge_for
from mlperf_scaling.tasks.score.rules import rules_for_round
from mlperf_scaling.tasks.score.steps import score
from mlperf_scaling.tasks.source.git import RemoteUnreachable
from mlperf_scaling.tasks.source.members import SourceError
from mlperf_scaling.tasks.source.resolve import is_network_source, resolve_source
from mlperf_scaling.tasks.source.steps import find_source_version


def _round_run_name() -> str:
    # Flow-run names carry the round (ingest-v4-1); Prefect keys allow no dots.
    parameters = flow_run.parameters
    round_name = parameters.get("round_name") or round_from_name(str(parameters.get("source", ""))) or "round"
    return f"ingest-{round_name.replace('.', '-')}"


@flow(name="ingest-round", flow_run_name=_round_run_name, on_running=[note_flow_run])
def ingest_round(
    source: str,
    warehouse: str,
    round_name: str | None = None,
    notes_dir: str | None = None,
    force: bool = False,
    settings: Settings | None = None,
) -> RoundOutcome:
    """Read, judge, score, validate and load one round, unless the warehouse holds this very version already.

    A failure is recorded in `ingestions` and ends this flow run Failed with the reason (its data the outcome),
    never raised: other rounds go on.
    """
    logger = get_run_logger()
    settings = settings or Settings()
    started = time.perf_counter()
    now_doing(f"ingesting {round_name or source}")
    # network steps: bounded in time, retried a bounded number of times, then this round fails alone
    try:
        resolved = resolve_source(source, round_name)
        round_name = resolved.round
        now_doing(f"ingesting {round_name}")
        if settings.offline and is_network_source(resolved):
            raise SourceError(f"{round_name} would be fetched from {source}, and --offline (MLPERF_OFFLINE) forbids the network: "
                              "put the round in the mirror")
        # retried only where a retry can help: over the network; a local file reads the same every time
        retries = settings.network_retries if is_network_source(resolved) else 0
        version = find_source_version.with_options(retries=retries, retry_delay_seconds=settings.retry_delay_s)(source, round_name, settings.network_timeout_s)
        loaded = None if force else check_loaded(warehouse, round_name, version)
        if loaded is not None:
            logger.info("%s unchanged (%s): skipped", round_name, version.commit or version.sha256)
            # this run's seconds (checking the version), not those of the run that loaded it
            return RoundOutcome.from_ingestion(loaded, status=UNCHANGED, message="same version already loaded",
                                               seconds=time.perf_counter() - started)
        judge = judge_for(rules_for_round(round_name))  # runs in the parsing workers, where the lines are
        files = read_round.with_options(retries=retries, retry_delay_seconds=settings.retry_delay_s)(
            source, round_name, notes_dir, judge, settings.clone_timeout_s, settings.max_source_bytes
        )
        # untraversed(): Prefect would otherwise walk every object inside (thousands of parsed logs)
        scored = score(untraversed(files))
        validated = validate_round(untraversed(scored))
        outcome = load_round(untraversed(scored), untraversed(validated), warehouse, settings.allow_shrink)
        publish_rejections(round_name, validated.rejections)
        return outcome
    except MachineFault as exc:  # the warehouse cannot be written: neither can the failure be recorded there
        logger.error("ingestion of %s stopped: %s", source, exc)
        return _stopped(round_name, source, str(exc))
    except Exception as exc:  # one bad round must not stop the others
        message = said(exc)
        logger.error("ingestion of %s failed: %s", source, message)
        try:
            outcome = record_failure(source, round_name, warehouse, message)
        except MachineFault as fault:  # and the warehouse cannot even record it
            logger.error("%s", fault)
            return _stopped(round_name, source, f"{message}; {fault}")
        outcome.remote_unreachable = isinstance(exc, RemoteUnreachable)
        return round_failed(outcome)  # type: ignore[return-value]


def _stopped(round_name: str | None, source: str, message: str):
    """The Failed state of a round the machine stopped (nothing recorded: the warehouse is what failed)."""
    return round_failed(RoundOutcome(round_name, IngestionStatus.FAILED.value, source, message, machine_fault=True))


@flow(name="ingest", flow_run_name=started_run_name("ingest"), on_running=[note_flow_run])
def ingest_sources(
    sources: list[str],
    warehouse: str,
    round_name: str | None = None,
    notes_dir: str | None = None,
    force: bool = True,
    settings: Settings | None = None,
) -> list[RoundOutcome]:
    """Ingest each source in turn (one writer at a time). Explicit sources are re-read unless force is off."""
    if round_name is not None and len(sources) > 1:
        raise SourceError("--round names the round of a single source; give one source or none")
    for source in sources:
        resolve_source(source, round_name)  # fail fast on a typo before any work starts
    settings = settings or Settings()
    outcomes = [result_of(ingest_round(source, warehouse, round_name, notes_dir, force, settings, return_state=True)) for source in sources]
    return rounds_state(outcomes, "ingest", done="loaded")  # type: ignore[return-value]
