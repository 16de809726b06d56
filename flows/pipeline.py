"""The main job: every configured round from the mirror when present, else from the public repository."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from flows.ingest import ingest_round
from mlperf_scaling.settings import PUBLIC_REMOTE_BASE, source_for_round


@flow(name="mlperf-pipeline")
def mlperf_pipeline(
    rounds: list[str], warehouse: str, mirror: str | None = None, remote_base: str = PUBLIC_REMOTE_BASE
) -> list[dict]:
    """Ingest each round in turn; a failed round is recorded and the others still run."""
    logger = get_run_logger()
    summaries = []
    for round_name in rounds:
        source = source_for_round(round_name, Path(mirror) if mirror else None, remote_base)
        logger.info("%s: source %s", round_name, source)
        summaries.append(ingest_round(source, warehouse, round_name))
    return summaries
