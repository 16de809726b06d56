"""The score stage as a Prefect task: a round's facts judged and scored into the rows of its tables."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from prefect import task
from prefect.cache_policies import NO_CACHE

from mlperf_scaling.runtime.run_context import run_logger
from mlperf_scaling.tasks.parse.steps import RoundFiles
from mlperf_scaling.tasks.score.round_scores import RoundData, score_round
from mlperf_scaling.tasks.score.rules import RulesCoverage
from mlperf_scaling.tasks.source.members import Provenance
from mlperf_scaling.tasks.source.resolve import Source


@dataclass
class ScoredRound:
    """A round ready to load: where it came from, which version, its rows."""

    source: Source
    provenance: Provenance
    data: RoundData
    started_at: dt.datetime  # UTC, naive


@task(name="score-round", cache_policy=NO_CACHE)
def score(files: RoundFiles) -> ScoredRound:
    """Judge every run and score every (submitter, system, benchmark) of the round."""
    logger = run_logger()
    data = score_round(files.facts)
    if data.rules.note:
        # never silent: the one line that says how this round's runs were judged, and what would change it
        (logger.warning if data.rules.coverage is RulesCoverage.NEWER else logger.info)("%s: %s", data.round, data.rules.note)
    logger.info(
        "%s: %d systems, %d runs, %d scores, %d rejections",
        data.round, data.systems.height, data.runs.height, data.scores.height, data.rejections.height,
    )
    return ScoredRound(files.source, files.provenance, data, files.started_at)
