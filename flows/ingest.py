"""Ingestion flows: one round from one source, and several sources in one call."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from tasks.ingest_steps import (
    check_loaded,
    find_source_version,
    load_round,
    publish_rejections,
    read_round_from_source,
    record_failure,
    validate_round,
)
from mlperf_scaling.settings import Settings
from tasks.sources import SourceError, resolve_source, round_from_name


def _round_run_name() -> str:
    # Flow-run names carry the round (ingest-v4-1); Prefect keys allow no dots.
    parameters = flow_run.parameters
    round_name = parameters.get("round_name") or round_from_name(str(parameters.get("source", ""))) or "round"
    return f"ingest-{round_name.replace('.', '-')}"


@flow(name="ingest-round", flow_run_name=_round_run_name)
def ingest_round(
    source: str, warehouse: str, round_name: str | None = None, notes_dir: str | None = None, force: bool = False
) -> dict:
    """Read, validate and load one round, unless the warehouse holds this very version already.

    A failure is recorded in `ingestions` and reported, never raised: other rounds go on.
    """
    logger = get_run_logger()
    settings = Settings()
    # network steps: bounded in time, retried a bounded number of times, then this round fails alone
    retrying = {"retries": settings.network_retries, "retry_delay_seconds": settings.retry_delay_s}
    try:
        round_name = resolve_source(source, round_name).round
        version = find_source_version.with_options(**retrying)(source, round_name, settings.network_timeout_s)
        loaded = None if force else check_loaded(warehouse, round_name, version)
        if loaded is not None:
            logger.info("%s unchanged (%s): skipped", round_name, version.commit or version.sha256)
            return {**loaded, "status": "unchanged", "message": "same version already loaded"}
        result = read_round_from_source.with_options(**retrying)(source, round_name, notes_dir, settings.clone_timeout_s)
        frames = validate_round(result)
        summary = load_round(result, frames, warehouse)
        publish_rejections(round_name, frames["rejections"])
        return summary
    except Exception as exc:  # one bad round must not stop the others
        message = f"{type(exc).__name__}: {exc}"
        logger.error("ingestion of %s failed: %s", source, message)
        return record_failure(source, round_name, warehouse, message)


@flow(name="ingest")
def ingest_sources(
    sources: list[str], warehouse: str, round_name: str | None = None, notes_dir: str | None = None, force: bool = True
) -> list[dict]:
    """Ingest each source in turn (one writer at a time). Explicit sources are re-read unless force is off."""
    if round_name is not None and len(sources) > 1:
        raise SourceError("--round names the round of a single source; give one source or none")
    for source in sources:
        resolve_source(source, round_name)  # fail fast on a typo before any work starts
    return [ingest_round(source, warehouse, round_name, notes_dir, force) for source in sources]
