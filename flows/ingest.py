"""Ingestion flows: one round from one source, and several sources in one call."""

from __future__ import annotations

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from tasks.ingest_steps import load_round, read_round_from_source, record_failure, validate_round
from tasks.sources import SourceError, resolve_source, round_from_name


def _round_run_name() -> str:
    # Flow-run names carry the round (ingest-v4-1); Prefect keys allow no dots.
    parameters = flow_run.parameters
    round_name = parameters.get("round_name") or round_from_name(str(parameters.get("source", ""))) or "round"
    return f"ingest-{round_name.replace('.', '-')}"


@flow(name="ingest-round", flow_run_name=_round_run_name)
def ingest_round(source: str, warehouse: str, round_name: str | None = None, notes_dir: str | None = None) -> dict:
    """Read, validate and load one round; a failure is recorded and reported, never raised."""
    logger = get_run_logger()
    try:
        result = read_round_from_source(source, round_name, notes_dir)
        frames = validate_round(result)
        return load_round(result, frames, warehouse)
    except Exception as exc:  # one bad round must not stop the others
        message = f"{type(exc).__name__}: {exc}"
        logger.error("ingestion of %s failed: %s", source, message)
        return record_failure(source, round_name, warehouse, message)


@flow(name="ingest")
def ingest_sources(sources: list[str], warehouse: str, round_name: str | None = None, notes_dir: str | None = None) -> list[dict]:
    """Ingest each source in turn (one writer at a time)."""
    if round_name is not None and len(sources) > 1:
        raise SourceError("--round names the round of a single source; give one source or none")
    for source in sources:
        resolve_source(source, round_name)  # fail fast on a typo before any work starts
    return [ingest_round(source, warehouse, round_name, notes_dir) for source in sources]
