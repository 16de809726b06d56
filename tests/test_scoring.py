"""Run validity and olympic scoring, rule by rule as the MLCommons summarizer applies them."""

import pytest

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.tasks.parse.result_log import MLL, MLLOG, MLP, LogFacts
from mlperf_scaling.tasks.score.compliance import Failure
from mlperf_scaling.tasks.score.group import score_group
from mlperf_scaling.tasks.score.olympic import olympic_average
from mlperf_scaling.tasks.score.rules import benchmark_rules, rules_for_round
from mlperf_scaling.tasks.score.validity import RunVerdict, judge_run

NOT_SCORED, SCORED = ScoreStatus.NOT_SCORED, ScoreStatus.SCORED
SCORED_INCOMPLETE, SCORED_UNCHECKED = ScoreStatus.SCORED_INCOMPLETE, ScoreStatus.SCORED_UNCHECKED

V41 = rules_for_round("v4.1")


def facts(**overrides) -> LogFacts:
    base = dict(log_format=MLLOG, run_start_ms=0.0, run_stop_ms=600_000.0, run_stop_status="success",
                quality_events=[("eval_accuracy", 0.73, {})], global_batch_size=256)
    base.update(overrides)
    return LogFacts(**base)


def valid(minutes: float) -> RunVerdict:
    return RunVerdict(True, minutes, None)


def invalid() -> RunVerdict:
    return RunVerdict(False, None, "run_stop missing")


def score(verdicts, benchmark: str, round_name: str, factor: float, n_missing: int = 0):
    rules = rules_for_round(round_name)
    return score_group(verdicts, benchmark_rules(benchmark, rules), rules, factor, n_missing)


def test_valid_run_time_is_in_minutes():
    verdict = judge_run(facts(), [], V41)
    assert verdict.valid and verdict.time_to_train_min == 10.0


def test_a_compliance_failure_invalidates_the_run_and_names_the_rule():
    broken = [Failure("training_4.1.0/common.yaml:init_stop", "initialisation took 31.4 min; closed division allows 30"),
              Failure("training_4.1.0/common.yaml:run_start", "x")]
    verdict = judge_run(facts(), broken, V41)
    assert not verdict.valid and verdict.time_to_train_min == 10.0
    assert verdict.reason == "initialisation took 31.4 min; closed division allows 30; and 1 more rule failure(s)"
    assert verdict.failed_rule == "training_4.1.0/common.yaml:init_stop"


@pytest.mark.parametrize(
    "overrides, reason",
    [
        (dict(run_start_ms=None), "run_start missing"),
        (dict(run_stop_ms=None), "run_stop missing"),
        (dict(run_stop_ms=0.0), "run_stop is not after run_start"),
        (dict(log_format=None), "no MLPerf log lines"),
    ],
)
def test_invalid_runs_say_why(overrides, reason):
    verdict = judge_run(facts(**overrides), [], V41)
    assert not verdict.valid
    assert reason in verdict.reason


@pytest.mark.parametrize(
    "overrides, reason",
    [
        (dict(run_stop_status="aborted"), "status: aborted"),
        (dict(n_parse_errors=1, first_parse_error="not JSON"), "do not parse"),
        (dict(run_start_ms=None), "run_start missing"),
    ],
)
def test_rounds_without_checked_rules_use_the_generic_rules(overrides, reason):
    verdict = judge_run(facts(**overrides), None, rules_for_round("v9.9"))
    assert not verdict.valid and reason in verdict.reason


def test_time_s_logs_the_official_parser_cannot_read_need_success():
    # v0.7 Alibaba: the official parser stops on time_s lines; the published scores count only successful runs
    assert judge_run(facts(n_lines_in_seconds=40), [], rules_for_round("v0.7")).valid
    aborted = judge_run(facts(n_lines_in_seconds=40, run_stop_status="aborted"), [], rules_for_round("v0.7"))
    assert not aborted.valid and "time_s" in aborted.reason


def test_v06_and_v05_have_no_quality_target_but_need_success():
    assert judge_run(facts(log_format=MLL, quality_events=[]), None, rules_for_round("v0.6")).valid
    assert not judge_run(facts(log_format=MLP, run_stop_status="failure"), None, rules_for_round("v0.5")).valid
    bare_reached = facts(log_format=MLP, run_stop_status=None, eval_target=0.749, quality_events=[("eval_accuracy", {"value": 0.75}, None)])
    assert judge_run(bare_reached, None, rules_for_round("v0.5")).valid
    bare_short = facts(log_format=MLP, run_stop_status=None, eval_target=0.749, quality_events=[("eval_accuracy", {"value": 0.70}, None)])
    assert "eval_target" in judge_run(bare_short, None, rules_for_round("v0.5")).reason


def test_olympic_average_drops_fastest_and_slowest():
    assert olympic_average([5.0, 1.0, 3.0, 2.0, 4.0], 0, 1) == 3.0


def test_invalid_runs_count_as_the_slowest_already_dropped():
    # 5 files, one invalid: drop the fastest only
    assert olympic_average([1.0, 2.0, 3.0, 4.0], 1, 1) == 3.0


def test_gpt3_three_runs_score_the_median():
    result = score([valid(30.0), valid(27.0), valid(28.0)], "gpt3", "v4.1", 1.0)
    assert result.time_to_train_min == 28.0 and result.status == SCORED


def test_unet3d_drops_four_each_side():
    times = [float(t) for t in range(1, 41)]
    result = score([valid(t) for t in times], "unet3d", "v4.0", 1.0)
    assert result.time_to_train_min == sum(times[4:36]) / 32


def test_too_many_invalid_runs_leave_no_score():
    result = score([valid(1.0)] * 8 + [invalid(), invalid()], "bert", "v4.1", 1.0)
    assert result.status == NOT_SCORED and result.time_to_train_min is None
    assert "2 invalid runs" in result.status_reason


def test_scaling_factor_multiplies_and_unscaled_is_kept():
    result = score([valid(t) for t in (10.0, 11.0, 12.0, 13.0, 14.0)], "ssd", "v4.1", 1.5)
    assert result.time_to_train_unscaled_min == 12.0
    assert result.time_to_train_min == 18.0


def test_logs_absent_from_the_copy_flag_the_score():
    result = score([valid(t) for t in (1.0, 2.0, 3.0)], "bert", "v1.0", 1.0, n_missing=7)
    assert result.status == SCORED_INCOMPLETE and "7 log(s) absent" in result.status_reason
    nothing = score([], "bert", "v4.0", 1.0, n_missing=10)
    assert nothing.status == NOT_SCORED and nothing.status_reason == "logs absent from this copy"


def test_benchmark_names_are_normalised_with_aliases_kept():
    assert benchmark_name("ssd", "v4.1").canonical_name == "retinanet"
    assert benchmark_name("ssd", "v1.0").canonical_name == "ssd_resnet34"
    assert benchmark_name("mask", "v0.6").canonical_name == "maskrcnn"
    assert benchmark_name("gnn", "v4.1").canonical_name == "rgat"


def test_run_counts_and_drops_come_from_the_official_package():
    assert benchmark_rules("unet3d", rules_for_round("v4.0")).max_dropped == 4
    assert benchmark_rules("llama2_70b_lora", V41).n_required == 10
    assert benchmark_rules("gpt3", V41).n_required == 3
    # v0.6 Google's `mask` folder counts as maskrcnn, as the summarizer's alias has it: five runs
    assert benchmark_rules("mask", rules_for_round("v0.6")).n_required == 5
    assert benchmark_rules("gpt_oss_20b", rules_for_round("v6.0")).accepted
    assert not benchmark_rules("resnet", V41).accepted  # retired before v4.1
    assert "not a benchmark of ruleset 4.1.0" in benchmark_rules("resnet", V41).note


def test_a_round_newer_than_the_rules_is_scored_unchecked_and_says_which_package_brings_the_rules():
    result = score([valid(t) for t in (10.0, 11.0, 12.0, 13.0, 14.0)], "brand_new_benchmark", "v9.9", 1.0)
    assert result.status == SCORED_UNCHECKED and result.time_to_train_min == 12.0
    assert result.n_required is None
    assert "ruleset 9.9.0 is newer than the rules installed (mlperf-logging" in result.status_reason
    assert "compliance_checker/training_9.9.0" in result.status_reason
    assert "'brand_new_benchmark' is unknown to mlperf-logging" in result.status_reason
