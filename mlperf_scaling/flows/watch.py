"""`watch-releases`: notice new or changed MLPerf Training rounds at the remote and process only those."""

from __future__ import annotations

from dataclasses import dataclass, field

from prefect import flow, get_run_logger
from prefect.artifacts import create_markdown_artifact

from mlperf_scaling.flows.outcome import failed_with, failures_said, result_of
from mlperf_scaling.flows.pipeline import mlperf_pipeline
from mlperf_scaling.runtime.naming import started_run_name
from mlperf_scaling.runtime.run_context import note_flow_run
from mlperf_scaling.settings import PUBLIC_REMOTE_BASE, Settings
from mlperf_scaling.tasks.load.outcome import RoundOutcome
from mlperf_scaling.tasks.load.versions import CHANGED, NEW, RESCORE, compare_with_warehouse, loaded_versions
from mlperf_scaling.tasks.publish.artifacts import watch_markdown
from mlperf_scaling.tasks.score.rules import rounds_of_installed_rules
from mlperf_scaling.tasks.source.releases import normalise_remote_base
from mlperf_scaling.tasks.source.steps import list_remote_rounds


@dataclass
class WatchResult:
    found: dict[str, str]  # round -> what the watch decided: new, changed, rescore, unchanged
    started: list[str]  # the rounds the pipeline ran for
    outcomes: list[RoundOutcome] = field(default_factory=list)


@flow(name="watch-releases", flow_run_name=started_run_name("watch"), on_running=[note_flow_run])
def watch_releases(
    warehouse: str,
    remote_base: str = PUBLIC_REMOTE_BASE,
    reports: str = "reports",
    known_rounds: list[str] | None = None,
    settings: Settings | None = None,
) -> WatchResult:
    """Compare each round's head commit at the remote with `ingestions`; run the pipeline for new and changed rounds."""
    logger = get_run_logger()
    settings = settings or Settings()
    base = normalise_remote_base(remote_base)
    loaded = loaded_versions(warehouse)
    known = sorted(set(known_rounds or rounds_of_installed_rules()) | set(loaded))
    heads = list_remote_rounds.with_options(retries=settings.network_retries, retry_delay_seconds=settings.retry_delay_s)(base, known, settings.network_timeout_s)
    changes = compare_with_warehouse(heads, loaded)
    to_run = [c.round for c in changes if c.action in (NEW, CHANGED, RESCORE)]
    for change in changes:
        logger.info("%s: head %s, loaded %s: %s", change.round, change.head[:12], (change.loaded_commit or "-")[:12], change.action)
    # from the remote whose heads were compared, whatever mirror the environment names
    remote_only = settings.model_copy(update={"mirror": None})
    outcomes = result_of(mlperf_pipeline(to_run, warehouse, None, base, reports, settings=remote_only, return_state=True)) if to_run else []
    create_markdown_artifact(markdown=watch_markdown(base, changes, to_run, outcomes), key="watch-releases",
                             description="Rounds found at the remote, what this watch run started and what failed")
    result = WatchResult({c.round: c.action for c in changes}, to_run, outcomes)
    failed = [o for o in outcomes if o.failed]
    if failed:
        return failed_with(f"watch-releases: {len(failed)} of {len(outcomes)} rounds failed ({failures_said(outcomes)})",  # type: ignore[return-value]
                           result)
    return result
