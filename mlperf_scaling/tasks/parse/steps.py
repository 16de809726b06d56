"""The parse stage as a Prefect task: open a round's source and read its files into facts."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.runtime.run_context import ProgressBar, artifact_key, run_logger
from mlperf_scaling.runtime.runners import on_dask
from mlperf_scaling.tasks.parse.pool import Judge
from mlperf_scaling.tasks.parse.read import RoundFacts, read_round_files
from mlperf_scaling.tasks.parse.shares import can_read_on_workers, read_on_workers
from mlperf_scaling.tasks.source.members import DEFAULT_MAX_SOURCE_BYTES, Provenance
from mlperf_scaling.tasks.source.mirror_notes import load_copy_notes, notes_folder_for
from mlperf_scaling.tasks.source.resolve import Source, open_source, resolve_source
from mlperf_scaling.tasks.source.steps import worth_retrying


@dataclass
class RoundFiles:
    """A round read from its source: where from, which version, the facts, when reading started."""

    source: Source
    provenance: Provenance
    facts: RoundFacts
    started_at: dt.datetime


# The facts it returns are never hashed for caching; retries (a flaky clone) are set by the flow.
@task(name="read-round", timeout_seconds=3600, cache_policy=NO_CACHE, retry_condition_fn=worth_retrying)
def read_round(
    spec: str,
    round_name: str | None = None,
    notes_dir: str | None = None,
    judge: Judge | None = None,
    clone_timeout_s: float = 900,
    max_source_bytes: int = DEFAULT_MAX_SOURCE_BYTES,
) -> RoundFiles:
    """Open the source (cloning a git URL if needed) and read every file of the round; `judge` runs in the workers."""
    started = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    logger = run_logger()
    source = resolve_source(spec, round_name)
    notes = load_copy_notes(Path(notes_dir) if notes_dir else notes_folder_for(source.location), source.round)
    logger.info("reading %s %s (%s)", source.round, source.location, source.kind)
    bar = ProgressBar(artifact_key("ingest-progress", source.round), f"Reading MLPerf Training {source.round}")

    def progress(n_files: int, n_bytes: int, fraction: float) -> None:
        logger.info("%s: %d files, %.0f MB read (%.0f%%)", source.round, n_files, n_bytes / 1e6, 100 * fraction)
        bar.update(fraction)

    # on Dask, the workers read the source themselves where they can see it: no log travels through the scheduler
    read = read_on_workers(source, notes, judge, max_source_bytes) if on_dask() and can_read_on_workers(source) else None
    if read is not None:
        facts, provenance = read
    else:
        with open_source(source, git_timeout_s=clone_timeout_s, max_source_bytes=max_source_bytes) as stream:
            facts = read_round_files(stream, source.round, notes, progress, judge=judge)
            provenance = stream.provenance
    bar.finish()
    if provenance.commit is None and notes.source_commit:
        # a mirror's archive: its sha256 names the bytes, the manifest names the repository commit
        provenance.commit = notes.source_commit
    logger.info("%s: %d files, %.0f MB read in %.1f s", source.round, facts.n_files, facts.n_bytes / 1e6, facts.seconds)
    return RoundFiles(source, provenance, facts, started)
