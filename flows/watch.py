"""`watch-releases`: notice new or changed MLPerf Training rounds at the remote and process only those."""

from __future__ import annotations

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from flows.pipeline import mlperf_pipeline
from mlperf_scaling.settings import PUBLIC_REMOTE_BASE
from tasks.ingest_steps import loaded_versions
from tasks.releases import CHANGED, NEW, RESCORE, candidate_rounds, compare_with_warehouse, discover_rounds, normalise_remote_base, watch_markdown


@task(name="list-remote-rounds", retries=2, retry_delay_seconds=10, timeout_seconds=900, cache_policy=NO_CACHE)
def list_remote_rounds(remote_base: str, known: list[str]) -> dict[str, str]:
    return discover_rounds(remote_base, known)


@flow(name="watch-releases")
def watch_releases(
    warehouse: str,
    remote_base: str = PUBLIC_REMOTE_BASE,
    reports: str = "reports",
    known_rounds: list[str] | None = None,
) -> dict:
    """Compare each round's head commit at the remote with `ingestions`; run the pipeline for new and changed rounds."""
    logger = get_run_logger()
    base = normalise_remote_base(remote_base)
    loaded = loaded_versions(warehouse)
    known = sorted(set(known_rounds or candidate_rounds()) | set(loaded))
    heads = list_remote_rounds(base, known)
    changes = compare_with_warehouse(heads, loaded)
    to_run = [c.round for c in changes if c.action in (NEW, CHANGED, RESCORE)]
    for change in changes:
        logger.info("%s: head %s, loaded %s: %s", change.round, change.head[:12], (change.loaded_commit or "-")[:12], change.action)
    summaries = mlperf_pipeline(to_run, warehouse, None, base, reports) if to_run else []
    create_markdown_artifact(markdown=watch_markdown(base, changes, to_run), key="watch-releases",
                             description="Rounds found at the remote and what this watch run started")
    return {"found": {c.round: c.action for c in changes}, "started": to_run, "summaries": summaries}
