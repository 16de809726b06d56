"""Names stored in the warehouse, each written once: score statuses, ingestion statuses, rejection stages."""

from __future__ import annotations

from enum import StrEnum


class ScoreStatus(StrEnum):
    SCORED = "scored"
    SCORED_INCOMPLETE = "scored_incomplete"  # a score, but from fewer logs than the rules require
    SCORED_UNCHECKED = "scored_unchecked"  # a score by the generic rules: the round is newer than the rules installed
    NOT_SCORED = "not_scored"


# Every status with a time to train: what the analysis may use, and what "scored" counts everywhere.
WITH_A_SCORE = (ScoreStatus.SCORED, ScoreStatus.SCORED_INCOMPLETE, ScoreStatus.SCORED_UNCHECKED)


class IngestionStatus(StrEnum):
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class RulesCoverage(StrEnum):
    """How a round's runs are judged (ingestions.rules_coverage)."""

    CHECKED = "checked"  # every compliance rule of the round's ruleset, as MLCommons judges it
    SET_ASIDE = "set_aside"  # the ruleset exists but contradicts what MLCommons published: generic rules
    PREDATES = "predates"  # older than any ruleset in the package: the generic rules of the time
    NEWER = "newer"  # newer than the installed package: generic rules, scores marked unchecked


class Stage(StrEnum):
    """Where in the pipeline a file or row was turned away (rejections.stage)."""

    SOURCE = "source"
    LAYOUT = "layout"
    PARSE = "parse"
    SCORE = "score"
    VALIDATE = "validate"
