"""The load stage as Prefect tasks: a scored round checked against its tables' contracts and loaded in one
transaction, a failed attempt recorded, and whether a source version is loaded already."""

from __future__ import annotations

import datetime as dt
import uuid

import polars as pl
from prefect import task
from prefect.artifacts import create_markdown_artifact
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.energy import EnergySchema
from mlperf_scaling.contracts.enums import WITH_A_SCORE, IngestionStatus
from mlperf_scaling.contracts.ingestions import IngestionsSchema
from mlperf_scaling.contracts.rejections import RejectionsSchema
from mlperf_scaling.contracts.runs import RunsSchema
from mlperf_scaling.contracts.score_changes import ScoreChangesSchema
from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.contracts.systems import SystemsSchema
from mlperf_scaling.contracts.validate import split_valid_rows
from mlperf_scaling.failures import ExpectedFailure
from mlperf_scaling.rounds import round_from_name, round_order, round_title, suite_of
from mlperf_scaling.runtime.run_context import in_run, run_logger
from mlperf_scaling.tasks.load.changes import changes_markdown, score_changes
from mlperf_scaling.tasks.load.outcome import RoundOutcome, ValidatedRound
from mlperf_scaling.tasks.load.versions import is_unchanged, loaded_versions
from mlperf_scaling.tasks.score.round_scores import RoundData
from mlperf_scaling.tasks.score.rules import rules_for_round, rules_identity
from mlperf_scaling.tasks.score.steps import ScoredRound
from mlperf_scaling.tasks.source.members import Provenance
from mlperf_scaling.tasks.source.resolve import Source, resolve_source
from mlperf_scaling.warehouse.connection import open_writer
from mlperf_scaling.warehouse.load import record_ingestion, replace_round
from mlperf_scaling.warehouse.read import read_query

# table -> (contract, key columns naming a rejected row)
CONTRACTS = {
    "systems": (SystemsSchema, ["submitter", "system"]),
    "runs": (RunsSchema, ["path"]),
    "scores": (ScoresSchema, ["submitter", "system", "benchmark", "scaling_mode"]),
    "energy": (EnergySchema, ["submitter", "system", "benchmark", "file_name"]),
}


@task(name="validate-round", cache_policy=NO_CACHE)
def validate_round(scored: ScoredRound) -> ValidatedRound:
    """Run each table's contract; rows that fail go to rejections, the rest load."""
    frames: dict[str, pl.DataFrame] = {}
    rejected = [scored.data.rejections]
    for table, (schema, keys) in CONTRACTS.items():
        good, bad = split_valid_rows(getattr(scored.data, table), schema, table, keys)
        frames[table] = good
        rejected.append(bad)
    return ValidatedRound(**frames, rejections=RejectionsSchema.validate(pl.concat(rejected, how="vertical"), lazy=True))


def ingestion_row(
    source: Source,
    provenance: Provenance,
    started_at: dt.datetime,
    status: IngestionStatus,
    message: str | None = None,
    validated: ValidatedRound | None = None,
    data: RoundData | None = None,
) -> pl.DataFrame:
    """The `ingestions` row of one attempt to load a round."""
    frames = validated.tables() if validated is not None else {}

    def height(name: str) -> int:
        frame = frames.get(name)
        return 0 if frame is None else frame.height

    runs = frames.get("runs")
    scores = frames.get("scores")
    try:
        rules = data.rules if data else rules_for_round(source.round)
        order = round_order(source.round)
    except ValueError:  # not a round name: the failure row says so in its message
        rules, order = None, None
    row = {
        "ingestion_id": str(uuid.uuid4()),
        "round": source.round,
        "suite": suite_of(source.round),
        "round_order": order,
        "source": source.spec,
        "source_kind": source.kind,
        "source_commit": provenance.commit,
        "source_sha256": provenance.sha256,
        "started_at": started_at,
        "finished_at": dt.datetime.now(dt.UTC).replace(tzinfo=None),
        "status": status.value,
        "message": message,
        "ruleset": rules.ruleset if rules else None,
        "rules_package": rules_identity(),
        "rules_coverage": rules.coverage.value if rules else None,
        "n_files": data.n_files if data else 0,
        "n_bytes": data.n_bytes if data else 0,
        "n_power_logs": data.n_power_logs if data else 0,
        "n_systems": height("systems"),
        "n_runs": height("runs"),
        "n_valid_runs": 0 if runs is None else int(runs.get_column("is_valid").sum()),
        "n_scores": height("scores"),
        "n_scored": 0 if scores is None else int(scores.get_column("status").is_in([s.value for s in WITH_A_SCORE]).sum()),
        "n_rejections": height("rejections"),
        "seconds": (data.seconds if data else 0.0),
    }
    return IngestionsSchema.validate(pl.DataFrame([row]), lazy=True)


# A new version that loses more than this share of the loaded round's scored rows is refused unless allowed.
MAX_SHRINK = 0.25


class ShrinkRefused(ExpectedFailure, ValueError):
    """A new version of a loaded round that holds far less than the loaded one: refused, the loaded one stays."""


def shrink_problem(round_name: str, loaded: dict, validated: ValidatedRound) -> str | None:
    """Why a new version must not replace the loaded one unasked (it is empty, or loses over a quarter of the scored
    rows), in one line naming both counts; None when it may."""
    new_systems, new_runs = validated.systems.height, validated.runs.height
    # a score with a time, or an MLPerf HPC weak score (its models and time to train all), as round_size.sql counts them
    new_scored = int((validated.scores["time_to_train_min"].is_not_null() | validated.scores["number_of_models"].is_not_null()).sum())
    old = f"{loaded['n_systems']:,} systems, {loaded['n_runs']:,} runs and {loaded['n_scored']:,} scored rows"
    new = f"{new_systems:,} systems, {new_runs:,} runs and {new_scored:,} scored rows"
    if not (loaded["n_systems"] or loaded["n_runs"]):
        return None if new_systems or new_runs else "the source holds no systems and no runs: nothing to load"
    if not new_systems or not new_runs or new_scored < (1 - MAX_SHRINK) * loaded["n_scored"]:
        return (f"the new version of {round_name} has {new} where the warehouse holds {old}: refused, the loaded version stays "
                "(--allow-shrink loads it anyway)")
    return None


def _version(ingestion: dict) -> str:
    return ingestion["source_commit"] or (ingestion["source_sha256"] or "")[:12] or ingestion["source"]


def _changes(connection, round_name: str, validated: ValidatedRound, ingestion: dict) -> tuple[pl.DataFrame | None, str | None]:
    """What the new version changes against the loaded one (none for a round loaded the first time), and it in Markdown."""
    previous = read_query(connection, "round_loaded_version", round=round_name)
    if previous.is_empty():
        return None, None
    before = previous.row(0, named=True)
    found = score_changes(read_query(connection, "round_score_rows", round=round_name), read_query(connection, "round_run_files", round=round_name),
                          validated.scores, validated.runs, before["rules_package"], ingestion["rules_package"])
    changes = ScoreChangesSchema.validate(found.with_columns(
        pl.lit(round_name).alias("round"), pl.lit(ingestion["ingestion_id"]).alias("ingestion_id"),
        pl.lit(before["ingestion_id"]).alias("previous_ingestion_id"), pl.lit(ingestion["finished_at"]).alias("loaded_at"),
        pl.lit(_version(ingestion)).alias("source_version"), pl.lit(_version(before)).alias("previous_source_version"),
    ).select(list(frame_schema(ScoreChangesSchema))), lazy=True)
    return changes, changes_markdown(round_name, changes, _version(before), _version(ingestion))


@task(name="load-round", cache_policy=NO_CACHE)
def load_round(scored: ScoredRound, validated: ValidatedRound, warehouse: str, allow_shrink: bool = False) -> RoundOutcome:
    """Replace the round in the warehouse in one transaction and record the ingestion; a version that holds far less
    than the loaded one is refused (ShrinkRefused) unless allowed."""
    logger = run_logger()
    ingestion = ingestion_row(
        scored.source, scored.provenance, scored.started_at, IngestionStatus.SUCCEEDED,
        message=scored.data.rules.note, validated=validated, data=scored.data,
    )
    with open_writer(warehouse, say=logger.warning) as connection:
        loaded = read_query(connection, "round_size", round=scored.source.round).row(0, named=True)
        problem = shrink_problem(scored.source.round, loaded, validated)
        nothing_either_way = not (loaded["n_systems"] or loaded["n_runs"] or validated.systems.height or validated.runs.height)
        if problem is not None and (not allow_shrink or nothing_either_way):
            raise ShrinkRefused(problem)
        changes, said = _changes(connection, scored.source.round, validated, ingestion.row(0, named=True))
        replace_round(connection, scored.source.round, validated.tables(), ingestion, changes)
    if said is not None:
        logger.info("%s", said.splitlines()[2])
        if in_run():
            create_markdown_artifact(markdown=said, key=f"score-changes-{scored.source.round.replace('.', '-')}",
                                     description=f"{round_title(scored.source.round)}: the scores the new version changed")
    outcome = RoundOutcome.from_ingestion(ingestion.row(0, named=True))
    logger.info(
        "loaded %s into %s: %d systems, %d runs (%d valid), %d scores (%d scored), %d rejections",
        outcome.round, warehouse, outcome.n_systems, outcome.n_runs, outcome.n_valid_runs, outcome.n_scores, outcome.n_scored,
        outcome.n_rejections,
    )
    return outcome


@task(name="record-failure", cache_policy=NO_CACHE)
def record_failure(spec: str, round_name: str | None, warehouse: str, message: str) -> RoundOutcome:
    """Keep a failed attempt in `ingestions` so the failure is visible in SQL too."""
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    try:
        source = resolve_source(spec, round_name)
    except ValueError:
        source = Source(spec, "git_url" if "://" in spec else "directory", round_name or round_from_name(spec) or "v0.0", spec)
    ingestion = ingestion_row(source, Provenance(), started, IngestionStatus.FAILED, message=message[:2000])
    with open_writer(warehouse) as connection:
        record_ingestion(connection, ingestion)
    return RoundOutcome.from_ingestion(ingestion.row(0, named=True))


@task(name="check-loaded", cache_policy=NO_CACHE)
def check_loaded(warehouse: str, round_name: str, version: Provenance) -> dict | None:
    """The loaded ingestion of this round if it has the same version (and rules), else None."""
    loaded = loaded_versions(warehouse).get(round_name)
    return loaded if is_unchanged(loaded, version) else None
