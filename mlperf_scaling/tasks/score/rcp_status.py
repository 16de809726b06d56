"""A score's RCP status and factor as the official result summarizer computes them (mlperf-logging's
`result_summarizer._compute_strong_scaling_scores` calling `rcp_checker.check_directory` with the pruned RCPs): whether
the runs' convergence is as slow as the reference convergence points allow (Pass), faster (Fail, or Interp. Fail
against an interpolated point), at a batch size no RCP covers (Missing), for a benchmark with no RCPs (No RCP), or
unreadable (Unknown state); and the factor the checker would scale the score by.

What the checker reads from each result file is taken from the parsed log as `rcp_checker.read_submission_file` reads
it: the last global batch size, the benchmark the log names, and at a successful run_stop the convergence point of
the last evaluation (`samples_count` for the benchmarks it counts in samples, `epoch_num` rounded to 3 decimals for
the others, Stable Diffusion's first step with FID <= 90 and CLIP >= 0.15); a run that did not succeed is 1e9. The
decision is `check_directory`'s, step by step, on the checker's own RCP tables and statistics (its `RCP_Checker`),
one per ruleset and benchmark instead of one per folder.

The summarizer gives a status to closed-division scores of rulesets 1.0.0 on, and an empty one otherwise. It does not
use the checker's factor for the score: the score takes the published scaling.json (`scaling_factor`), and
`rcp_factor` sits beside it. For rounds before 5.0 the checker of today is not the one that judged them: v1.0 BERT
and some v3.1 unet3d folders fail today, published as they were (docs/scoring.md).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import warnings
from dataclasses import dataclass
from typing import Any

from mlperf_logging.rcp_checker import rcp_checker
from numpy import errstate as numpy_quiet

from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.score.rules import ruleset_usage

NOT_CONVERGED = 1e9  # the checker's value for a run that did not succeed
PASS, FAIL, INTERPOLATION_FAIL, MISSING, NO_RCP, UNKNOWN = "Pass", "Fail", "Interp. Fail", "Missing", "No RCP", "Unknown state"
# read_submission_file's benchmarks whose convergence is `samples_count`
_COUNTED_IN_SAMPLES = {"llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b", "gpt_oss_20b", "deepseekv3_671b", "qwen35_397b_grpo", "dlrmv4"}
_SD_FID, _SD_CLIP = 90.0, 0.15


@dataclass(frozen=True)
class RcpReading:
    """What the RCP checker reads from one result file."""

    converged: bool
    value: float | None  # NOT_CONVERGED where not converged; None where the file gives no number the checker could read
    batch_size: Any
    benchmark: str | None


def _metadata(metadata: Any) -> dict:
    return metadata if isinstance(metadata, dict) else {}


def rcp_reading(facts: LogFacts, ruleset: str) -> RcpReading:
    """The checker's reading of one log (`read_submission_file`): converged, the convergence point, batch, benchmark."""
    benchmark = facts.log_benchmark
    converged = facts.run_stop_status == "success"
    if not converged:
        return RcpReading(False, NOT_CONVERGED, facts.last_global_batch_size, benchmark)
    evaluations = [(value, _metadata(metadata)) for key, value, metadata in facts.quality_events if "eval_accuracy" in key]
    value: float | None = None
    if benchmark == "stable_diffusion":
        unit = "step_num" if ruleset == "3.1.0" else "samples_count"
        by_step: dict[Any, dict] = {}
        for score, metadata in evaluations:
            by_step.setdefault(metadata.get(unit), {})[metadata.get("metric")] = score
        passing = [step for step, result in by_step.items() if result.get("FID", math.inf) <= _SD_FID and result.get("CLIP", -math.inf) >= _SD_CLIP]
        value = min(passing) if passing else None
    elif evaluations:
        metadata = evaluations[-1][1]
        if benchmark in _COUNTED_IN_SAMPLES:
            value = metadata.get("samples_count")
        elif isinstance(metadata.get("epoch_num"), int | float):
            value = round(metadata["epoch_num"], 3)
    return RcpReading(True, value, facts.last_global_batch_size, benchmark)


@functools.cache
def _checker(ruleset: str, benchmark: str | None) -> rcp_checker.RCP_Checker:
    with _quiet():
        return rcp_checker.RCP_Checker("training", ruleset, benchmark, False)


@contextlib.contextmanager
def _quiet():
    # the checker logs every record it reads at INFO and WARNING; its verdict is what is kept. Where too few runs are
    # left once its olympic drop is made, numpy warns of the mean of nothing (NaN, which the checker then judges): a
    # line in the main job's log that nobody can act on, so it is not shown either
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Mean of empty slice", category=RuntimeWarning)
            yield
    finally:
        logging.disable(logging.NOTSET)


def rcp_status(readings: list[RcpReading], ruleset: str, division: str | None) -> tuple[str, float | None]:
    """(status, factor) of one score as the summarizer writes them: ("", None) where it writes none. The factor is None
    where the checker's is no number (its mean of no runs, when fewer runs than it drops)."""
    if division != "closed" or not readings or ruleset_usage(ruleset) == "hpc":
        # HPC: the official CSVs carry no RCP column, and the summarizer's HPC RCP step rewrites scaling.json after
        # the score is made (notes/hpc_design.md, finding 4); no status is claimed rather than one not checked here
        return "", None
    try:
        status, factor = _decide(readings, ruleset)
    except Exception:  # noqa: BLE001 - the summarizer catches any error of the check and leaves the status empty
        return "", None
    return status, factor if factor is not None and math.isfinite(factor) else None


def _submission(readings: list[RcpReading]) -> tuple[Any, str | None]:
    """get_submission_epochs' batch size and benchmark: the first stated, and (-1, None) where a later file disagrees."""
    batch: Any = -1
    benchmark = None
    for reading in readings:
        current = -1 if reading.batch_size is None else reading.batch_size
        if batch == -1:
            batch = current
        elif current != batch:
            return -1, None
        if benchmark is None:
            benchmark = reading.benchmark
        elif reading.benchmark != benchmark:
            return -1, None
    return batch, benchmark


def _decide(readings: list[RcpReading], ruleset: str) -> tuple[str, float | None]:
    batch, benchmark = _submission(readings)
    # built before the batch is looked at, as check_directory builds it: no benchmark (files that disagree), or one or
    # a ruleset with no RCPs, raises, and the summarizer leaves the status empty
    checker = _checker(ruleset, benchmark)
    if batch == -1:
        return UNKNOWN, 1.0  # 'Could not detect global_batch_size'
    failed = sum(not r.converged for r in readings)
    if (failed > 1 and benchmark != "unet3d") or (failed > 4 and benchmark == "unet3d"):
        return UNKNOWN, 1.0  # 'Insufficient convergence'
    if any(r.value is None for r in readings):
        raise ValueError("a converged run whose convergence point the checker cannot read")
    epochs = [r.value for r in readings]
    with _quiet(), numpy_quiet(invalid="ignore"):
        # check_directory, with rcp_pass='pruned_rcps' and no results folder to write scaling.json into
        record = checker._find_rcp(batch, "pruned_rcps")
        if record is not None:
            passed, factor = checker._eval_submission_record(record, epochs, "")
            return (PASS if passed else FAIL), float(factor)
        low = checker._find_top_min_rcp(batch, "pruned_rcps")
        high = checker._find_bottom_max_rcp(batch, "pruned_rcps")
        if low is not None and high is not None:
            _, interpolated = checker._create_interp_rcp(batch, low, high)
            passed, factor = checker._eval_submission_record(interpolated, epochs, "")
            return (PASS if passed else INTERPOLATION_FAIL), float(factor)
        if low is not None:
            return MISSING, 1.0
        if high is not None:
            passed, factor = checker._eval_submission_record(checker._find_min_rcp("pruned_rcps"), epochs, "")
            return (PASS if passed else MISSING), float(factor)
    return NO_RCP, 1.0
