"""The ingestion steps as Prefect tasks: read a round from its source, validate it, load it.

Each is a plain function underneath (`.fn`), so tests call it without Prefect.
"""

from __future__ import annotations

import datetime as dt
import logging
import uuid
from dataclasses import dataclass
from pathlib import Path

import polars as pl
from prefect import get_run_logger, task
from prefect.artifacts import create_markdown_artifact, create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import FlowRunContext, TaskRunContext
from prefect.exceptions import MissingContextError

from schemas.energy import EnergySchema
from schemas.ingestions import IngestionsSchema
from schemas.rejections import RejectionsSchema
from schemas.runs import RunsSchema
from schemas.scores import ScoresSchema
from schemas.systems import SystemsSchema
from schemas.validate import split_valid_rows
from tasks.artifacts import artifact_key, rejections_markdown
from tasks.copy_notes import load_copy_notes, notes_folder_for
from tasks.read_round import RoundData, read_round
from tasks.rules import RULES_DISTRIBUTION, rules_for_round, rules_version
from tasks.sources import Provenance, Source, SourceError, open_source, resolve_source, source_version
from warehouse.connection import connect, is_current, open_writer, writer_lock
from warehouse.load import record_ingestion, replace_round
from warehouse.read import read_query

# table -> (contract, key columns naming a rejected row)
CONTRACTS = {
    "systems": (SystemsSchema, ["submitter", "system"]),
    "runs": (RunsSchema, ["path"]),
    "scores": (ScoresSchema, ["submitter", "system", "benchmark"]),
    "energy": (EnergySchema, ["submitter", "system", "benchmark", "file_name"]),
}


@dataclass
class ReadResult:
    source: Source
    provenance: Provenance
    data: RoundData
    started_at: dt.datetime


def _logger():
    try:
        return get_run_logger()
    except MissingContextError:  # outside a flow or task run (plain `.fn` call in a test)
        return logging.getLogger("mlperf_scaling")


def _in_run() -> bool:
    return TaskRunContext.get() is not None or FlowRunContext.get() is not None


class _ProgressArtifact:
    """A progress bar in the Prefect UI while a round is read; nothing outside a run."""

    def __init__(self, round_name: str):
        self._id = None
        self._shown = -1
        if _in_run():
            self._id = create_progress_artifact(
                progress=0.0, key=artifact_key("ingest-progress", round_name), description=f"Reading MLPerf Training {round_name}"
            )

    def update(self, fraction: float) -> None:
        percent = round(100 * fraction)
        if self._id is not None and percent >= self._shown + 5:  # a few updates, not one per file
            update_progress_artifact(self._id, progress=float(percent))
            self._shown = percent

    def finish(self) -> None:
        if self._id is not None:
            update_progress_artifact(self._id, progress=100.0)


# Retries cover a flaky clone; the frames it returns are never hashed for caching.
@task(name="read-round", retries=2, retry_delay_seconds=10, timeout_seconds=3600, cache_policy=NO_CACHE)
def read_round_from_source(
    spec: str, round_name: str | None = None, notes_dir: str | None = None, clone_timeout_s: float = 900
) -> ReadResult:
    """Open the source (cloning a git URL if needed), then parse and score every file of the round."""
    started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    logger = _logger()
    source = resolve_source(spec, round_name)
    notes_folder = Path(notes_dir) if notes_dir else notes_folder_for(source.location)
    notes = load_copy_notes(notes_folder, source.round)
    logger.info("reading %s %s (%s)", source.round, source.location, source.kind)

    bar = _ProgressArtifact(source.round)

    def progress(n_files: int, n_bytes: int, fraction: float) -> None:
        logger.info("%s: %d files, %.0f MB read (%.0f%%)", source.round, n_files, n_bytes / 1e6, 100 * fraction)
        bar.update(fraction)

    with open_source(source, git_timeout_s=clone_timeout_s) as stream:
        data = read_round(stream, source.round, notes, progress)
        provenance = stream.provenance
    bar.finish()
    if provenance.commit is None and notes.source_commit:
        # a mirror's archive: its sha256 names the bytes, the manifest names the repository commit
        provenance.commit = notes.source_commit
    if data.rules.note:
        # never silent: the one line that says how this round's runs were judged, and what would change it
        (logger.warning if data.rules.coverage.value == "newer" else logger.info)("%s: %s", source.round, data.rules.note)
    logger.info(
        "%s: %d files, %d systems, %d runs, %d scores, %d rejections in %.1f s",
        source.round, data.n_files, data.systems.height, data.runs.height, data.scores.height, data.rejections.height, data.seconds,
    )
    return ReadResult(source, provenance, data, started)


@task(name="validate-round", cache_policy=NO_CACHE)
def validate_round(result: ReadResult) -> dict[str, pl.DataFrame]:
    """Run each table's contract; rows that fail go to rejections, the rest load."""
    frames: dict[str, pl.DataFrame] = {}
    rejected = [result.data.rejections]
    for table, (schema, keys) in CONTRACTS.items():
        good, bad = split_valid_rows(getattr(result.data, table), schema, table, keys)
        frames[table] = good
        rejected.append(bad)
    frames["rejections"] = RejectionsSchema.validate(pl.concat(rejected, how="vertical"), lazy=True)
    return frames


def ingestion_row(
    source: Source,
    provenance: Provenance,
    started_at: dt.datetime,
    status: str,
    message: str | None = None,
    frames: dict[str, pl.DataFrame] | None = None,
    data: RoundData | None = None,
) -> pl.DataFrame:
    frames = frames or {}

    def height(name: str) -> int:
        frame = frames.get(name)
        return 0 if frame is None else frame.height

    runs = frames.get("runs")
    scores = frames.get("scores")
    try:
        rules = data.rules if data else rules_for_round(source.round)
    except ValueError:  # not a round name: the failure row says so in its message
        rules = None
    row = {
        "ingestion_id": str(uuid.uuid4()),
        "round": source.round,
        "source": source.spec,
        "source_kind": source.kind,
        "source_commit": provenance.commit,
        "source_sha256": provenance.sha256,
        "started_at": started_at,
        "finished_at": dt.datetime.now(dt.timezone.utc).replace(tzinfo=None),
        "status": status,
        "message": message,
        "ruleset": rules.ruleset if rules else None,
        "rules_package": f"{RULES_DISTRIBUTION} {rules_version()}",
        "rules_coverage": rules.coverage.value if rules else None,
        "n_files": data.n_files if data else 0,
        "n_bytes": data.n_bytes if data else 0,
        "n_power_logs": data.n_power_logs if data else 0,
        "n_systems": height("systems"),
        "n_runs": height("runs"),
        "n_valid_runs": 0 if runs is None else int(runs.get_column("is_valid").sum()),
        "n_scores": height("scores"),
        "n_scored": 0 if scores is None else int((scores.get_column("status") != "not_scored").sum()),
        "n_rejections": height("rejections"),
        "seconds": (data.seconds if data else 0.0),
    }
    return IngestionsSchema.validate(pl.DataFrame([row]), lazy=True)


@task(name="load-round", cache_policy=NO_CACHE)
def load_round(result: ReadResult, frames: dict[str, pl.DataFrame], warehouse: str) -> dict[str, object]:
    """Replace the round in the warehouse in one transaction and record the ingestion."""
    logger = _logger()
    ingestion = ingestion_row(
        result.source, result.provenance, result.started_at, "succeeded", message=result.data.rules.note, frames=frames, data=result.data
    )
    with open_writer(warehouse, say=logger.warning) as connection:
        replace_round(connection, result.source.round, frames, ingestion)
    summary = ingestion.to_dicts()[0]
    logger.info(
        "loaded %s into %s: %d systems, %d runs (%d valid), %d scores (%d scored), %d rejections",
        summary["round"], warehouse, summary["n_systems"], summary["n_runs"], summary["n_valid_runs"],
        summary["n_scores"], summary["n_scored"], summary["n_rejections"],
    )
    return summary


@task(name="record-failure", cache_policy=NO_CACHE)
def record_failure(spec: str, round_name: str | None, warehouse: str, message: str) -> dict[str, object]:
    """Keep a failed attempt in `ingestions` so the failure is visible in SQL too."""
    started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    try:
        source = resolve_source(spec, round_name)
    except ValueError:
        from tasks.sources import round_from_name

        source = Source(spec, "git_url" if "://" in spec else "directory", round_name or round_from_name(spec) or "v0.0", spec)
    ingestion = ingestion_row(source, Provenance(), started, "failed", message=message[:2000])
    with open_writer(warehouse) as connection:
        record_ingestion(connection, ingestion)
    return ingestion.to_dicts()[0]


@task(name="source-version", retries=2, retry_delay_seconds=5, timeout_seconds=300, cache_policy=NO_CACHE)
def find_source_version(spec: str, round_name: str | None = None, timeout_s: float = 60) -> Provenance:
    """The commit or archive hash of a source, read without fetching its data (git ls-remote for a URL)."""
    return source_version(resolve_source(spec, round_name), timeout_s)


def loaded_versions(warehouse: str) -> dict[str, dict]:
    """Round -> its latest successful ingestion (source, commit, sha256); empty for a new warehouse."""
    if not Path(warehouse).exists() or not is_current(warehouse):
        return {}  # a warehouse of other table definitions is rebuilt: every round counts as new
    with writer_lock(warehouse):
        connection = connect(warehouse, read_only=True)
        try:
            # fetchall: DuckDB 2 refuses the next query while a result is only partly fetched
            if not connection.execute("select count(*) from information_schema.tables where table_name = 'ingestions'").fetchall()[0][0]:
                return {}
            return {row["round"]: row for row in read_query(connection, "loaded_versions").iter_rows(named=True)}
        finally:
            connection.close()


def is_unchanged(loaded: dict | None, version: Provenance) -> bool:
    """True when the warehouse already holds this exact version of the round, judged by the rules installed now."""
    if loaded is None:
        return False
    if loaded.get("rules_package") != f"{RULES_DISTRIBUTION} {rules_version()}":
        return False  # a new rules package may judge the same logs differently (or at all): score them again
    if version.commit is not None and loaded["source_commit"] == version.commit:
        return True
    return version.sha256 is not None and loaded["source_sha256"] == version.sha256


@task(name="check-loaded", cache_policy=NO_CACHE)
def check_loaded(warehouse: str, round_name: str, version: Provenance) -> dict | None:
    """The loaded ingestion of this round if it has the same version, else None."""
    loaded = loaded_versions(warehouse).get(round_name)
    return loaded if is_unchanged(loaded, version) else None


@task(name="list-rounds", retries=2, retry_delay_seconds=10, timeout_seconds=900, cache_policy=NO_CACHE)
def list_rounds(mirror: str | None, remote_base: str) -> list[str]:
    """Every round a source holds: each training_results_vX.Y of the mirror, else every round published at the remote."""
    from tasks.releases import candidate_rounds, discover_rounds, normalise_remote_base, rounds_in_mirror

    logger = _logger()
    if mirror is not None:
        rounds = rounds_in_mirror(Path(mirror))
        if not rounds:
            raise SourceError(f"{mirror} holds no training_results_vX.Y.tar.gz or training_results_vX.Y repository")
        logger.info("every round in the mirror %s: %s", mirror, " ".join(rounds))
        return rounds
    base = normalise_remote_base(remote_base)
    rounds = list(discover_rounds(base, candidate_rounds()))
    if not rounds:
        raise SourceError(f"no training_results_vX.Y repository found at {base}")
    logger.info("every round published at %s: %s", base, " ".join(rounds))
    return rounds


@task(name="publish-rejections", cache_policy=NO_CACHE)
def publish_rejections(round_name: str, rejections: pl.DataFrame) -> str:
    key = artifact_key("rejections", round_name)
    create_markdown_artifact(markdown=rejections_markdown(round_name, rejections), key=key,
                             description=f"MLPerf Training {round_name}: rejected files and rows by reason")
    return key
