"""The main job: every round the source holds (or those named), each ingested, analysed and published, then the
view across rounds."""

from __future__ import annotations

from pathlib import Path

from prefect import flow, get_run_logger

from mlperf_scaling.contracts.enums import IngestionStatus
from mlperf_scaling.failures import MachineFault, said
from mlperf_scaling.flows.analyze import analyze_round_tasks, analyze_trends
from mlperf_scaling.flows.ingest import ingest_round
from mlperf_scaling.flows.outcome import result_of, rounds_state
from mlperf_scaling.runtime.handoff import untraversed
from mlperf_scaling.runtime.naming import started_run_name
from mlperf_scaling.runtime.run_context import note_flow_run
from mlperf_scaling.settings import PUBLIC_REMOTE_BASE, Settings, source_for_round
from mlperf_scaling.tasks.load.outcome import UNCHANGED, RoundOutcome
from mlperf_scaling.tasks.load.steps import record_failure
from mlperf_scaling.tasks.publish.stamp import pages_current, stamp_pages
from mlperf_scaling.tasks.publish.steps import check_reports, publish_round_outputs, publish_site_index
from mlperf_scaling.tasks.score.rules import rounds_of_installed_rules
from mlperf_scaling.tasks.source.members import SourceError
from mlperf_scaling.tasks.source.steps import list_rounds


@flow(name="mlperf-pipeline", flow_run_name=started_run_name("run"), on_running=[note_flow_run])
def mlperf_pipeline(
    rounds: list[str] | None,
    warehouse: str,
    mirror: str | None = None,
    remote_base: str = PUBLIC_REMOTE_BASE,
    reports: str = "reports",
    force: bool = False,
    settings: Settings | None = None,
) -> list[RoundOutcome]:
    """Ingest, analyse and publish each round in turn; a failed round is recorded and the others still run.

    A round's publishing (its plots above all) runs in the background while the next round is read, and the
    cross-round trends while the last rounds' plots are drawn; the front page waits for every round's report.

    No rounds (None): every round the source holds. A round whose source version is already loaded, with its report
    on disk, is skipped in seconds. When a round fails, its flow run ends Failed, and so does this one once every
    other round has run, listing the failed rounds; its data holds every round's outcome.
    """
    logger = get_run_logger()
    settings = settings or Settings()
    mirror = mirror if mirror is not None else (str(settings.mirror) if settings.mirror else None)  # a deployment's null: MLPERF_MIRROR
    if settings.offline and mirror is None:
        raise SourceError("MLPERF_OFFLINE (--offline) forbids the network, and no mirror is set (MLPERF_MIRROR or the mirror parameter)")
    if rounds is None:
        rounds = list_rounds.with_options(retries=settings.network_retries, retry_delay_seconds=settings.retry_delay_s)(mirror, remote_base, rounds_of_installed_rules(), settings.network_timeout_s)
    outcomes: list[RoundOutcome] = []
    publishing = []  # (outcome, future) of the rounds being published in the background
    unreachable: str | None = None  # once the remote cannot be reached, the other rounds there are not tried
    fault: str | None = None  # once the machine refuses (a full disk, a read-only folder), no other round is started
    for round_name in rounds:
        source = source_for_round(round_name, Path(mirror) if mirror else None, remote_base)
        if fault is not None:
            outcomes.append(RoundOutcome(round_name, IngestionStatus.FAILED.value, source, f"not started: {fault}", machine_fault=True))
            continue
        local = Path(source).exists()
        if mirror and not local:
            logger.warning("%s is not in the mirror %s: %s %s", round_name, mirror,
                           "and --offline forbids fetching it from" if settings.offline else "fetched online from", source)
        else:
            logger.info("%s: source %s", round_name, source)
        if unreachable is not None and not local:
            outcome = record_failure(source, round_name, warehouse, f"not tried, the remote cannot be reached: {unreachable}")
            outcome.remote_unreachable = True
        else:
            outcome = result_of(ingest_round(source, warehouse, round_name, force=force, settings=settings, return_state=True))
            if outcome.remote_unreachable:
                unreachable = outcome.message
            if outcome.machine_fault:
                fault = outcome.message
        report = Path(reports) / round_name / "index.html"
        if outcome.status == UNCHANGED and report.is_file():
            outcome.report = str(report)
        elif outcome.loaded:
            try:
                # handed to publishing as computed: the background never opens the warehouse
                analysis = analyze_round_tasks(round_name, warehouse)
                publishing.append((outcome, publish_round_outputs.submit(round_name, untraversed(analysis), reports, settings.plot_formats,
                                                                         settings.embed_plots, settings.reports_url)))
            except Exception as exc:  # the round's data is loaded; say what failed after it
                _analysis_failed(outcome, exc)
        outcomes.append(outcome)
        fault = fault or (outcome.message if outcome.machine_fault else None)
    # the pages across rounds are made again when a round was, or when they were not all made from the rounds loaded
    # now (a page missing, a run that failed making them, rounds loaded by `ingest`): a run that found nothing new
    # ends in seconds, its flow run saying what it checked
    new = bool(publishing) or any(o.status == IngestionStatus.SUCCEEDED.value for o in outcomes)
    loaded = any(o.loaded for o in outcomes) and (new or not pages_current(reports, warehouse))
    made = loaded  # every page across rounds made, so far
    if loaded:
        try:  # beside the last rounds' plots, which it does not read: this process would otherwise wait for them idle
            analyze_trends(warehouse, reports, settings.plot_formats, publishing=[str(o.round) for o, _ in publishing],
                           reports_url=settings.reports_url)
        except MachineFault as exc:  # the reports cannot be written: no round is published whole
            made = False
            for outcome in outcomes:
                if outcome.loaded:
                    _analysis_failed(outcome, exc)
        except Exception as exc:  # the rounds are loaded; say what failed after them
            made = False
            logger.error("cross-round trends failed: %s", exc)
    for outcome, future in publishing:
        try:
            outcome.report = future.result().report
        except Exception as exc:
            _analysis_failed(outcome, exc)
    if loaded:
        try:  # once every round's report is written: the front page links those that are
            publish_site_index(warehouse, reports, settings.reports_url)
            if made:
                stamp_pages(reports, warehouse)
        except MachineFault as exc:
            for outcome in outcomes:
                if outcome.loaded and not outcome.machine_fault:
                    _analysis_failed(outcome, exc)
        except Exception as exc:
            logger.error("the front page failed: %s", exc)
        # a run never ends well with a page that links a file nobody wrote (or a worker wrote elsewhere)
        missing = check_reports(reports, [str(o.round) for o in outcomes if o.report])
        for outcome in outcomes:
            if outcome.round in missing:
                _analysis_failed(outcome, FileNotFoundError(f"its report links files that are not there: {'; '.join(missing[outcome.round][:5])}"))
        if "" in missing:
            logger.error("the pages across rounds link files that are not there: %s", "; ".join(missing[""][:5]))
    return rounds_state(outcomes, "mlperf-pipeline")  # type: ignore[return-value]


def _analysis_failed(outcome: RoundOutcome, exc: Exception) -> None:
    get_run_logger().error("%s: analysis failed: %s", outcome.round, exc)
    if outcome.machine_fault:  # what the machine refused is the cause; what follows from it (a missing page) is not news
        return
    outcome.message = f"loaded, but analysis failed: {said(exc)}"
    outcome.analysis_failed = True
    outcome.machine_fault = outcome.machine_fault or isinstance(exc, MachineFault)
