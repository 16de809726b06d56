"""Run validity and olympic scoring, rule by rule as the MLCommons summarizer applies them."""

import pytest

from tasks.parse_logs import LogFacts, MLL, MLLOG, MLP
from tasks.reference import benchmark_info, meets_target, quality_target
from tasks.scoring import NOT_SCORED, SCORED, SCORED_INCOMPLETE, RunVerdict, judge_run, olympic_average, score_group


def facts(**overrides) -> LogFacts:
    base = dict(log_format=MLLOG, run_start_ms=0.0, run_stop_ms=600_000.0, run_stop_status="success",
                quality_events=[("eval_accuracy", 0.73, {})], global_batch_size=256)
    base.update(overrides)
    return LogFacts(**base)


def valid(minutes: float) -> RunVerdict:
    return RunVerdict(True, minutes, None)


def invalid() -> RunVerdict:
    return RunVerdict(False, None, "run_stop missing")


def test_valid_run_time_is_in_minutes():
    verdict = judge_run(facts(), "v4.1", "bert")
    assert verdict.valid and verdict.time_to_train_min == 10.0


@pytest.mark.parametrize(
    "overrides, reason",
    [
        (dict(run_start_ms=None), "run_start missing"),
        (dict(run_stop_ms=None), "run_stop missing"),
        (dict(run_stop_status="aborted"), "status: aborted"),
        (dict(n_parse_errors=1, first_parse_error="not JSON"), "do not parse"),
        (dict(quality_events=[("eval_accuracy", 0.70, {})]), "quality target not reached"),
        (dict(log_format=None), "no MLPerf log lines"),
    ],
)
def test_invalid_runs_say_why(overrides, reason):
    verdict = judge_run(facts(**overrides), "v4.1", "bert")
    assert not verdict.valid
    assert reason in verdict.reason


def test_v06_and_v05_have_no_quality_target_but_need_success():
    assert judge_run(facts(log_format=MLL, quality_events=[]), "v0.6", "resnet").valid
    assert not judge_run(facts(log_format=MLP, run_stop_status="failure"), "v0.5", "ncf").valid
    bare_reached = facts(log_format=MLP, run_stop_status=None, eval_target=0.749, quality_events=[("eval_accuracy", {"value": 0.75}, None)])
    assert judge_run(bare_reached, "v0.5", "resnet").valid
    bare_short = facts(log_format=MLP, run_stop_status=None, eval_target=0.749, quality_events=[("eval_accuracy", {"value": 0.70}, None)])
    assert "eval_target" in judge_run(bare_short, "v0.5", "resnet").reason


def test_olympic_average_drops_fastest_and_slowest():
    assert olympic_average([5.0, 1.0, 3.0, 2.0, 4.0], 0, 1) == 3.0


def test_invalid_runs_count_as_the_slowest_already_dropped():
    # 5 files, one invalid: drop the fastest only
    assert olympic_average([1.0, 2.0, 3.0, 4.0], 1, 1) == 3.0


def test_gpt3_three_runs_score_the_median():
    result = score_group([valid(30.0), valid(27.0), valid(28.0)], "gpt3", "v4.1", 1.0)
    assert result.time_to_train_min == 28.0 and result.status == SCORED


def test_unet3d_drops_four_each_side():
    times = [float(t) for t in range(1, 41)]
    result = score_group([valid(t) for t in times], "unet3d", "v4.0", 1.0)
    assert result.time_to_train_min == sum(times[4:36]) / 32


def test_too_many_invalid_runs_leave_no_score():
    result = score_group([valid(1.0)] * 8 + [invalid(), invalid()], "bert", "v4.1", 1.0)
    assert result.status == NOT_SCORED and result.time_to_train_min is None
    assert "2 invalid runs" in result.status_reason


def test_scaling_factor_multiplies_and_unscaled_is_kept():
    result = score_group([valid(t) for t in (10.0, 11.0, 12.0, 13.0, 14.0)], "ssd", "v4.1", 1.5)
    assert result.time_to_train_unscaled_min == 12.0
    assert result.time_to_train_min == 18.0


def test_logs_absent_from_the_copy_flag_the_score():
    result = score_group([valid(t) for t in (1.0, 2.0, 3.0)], "bert", "v1.0", 1.0, n_missing=7)
    assert result.status == SCORED_INCOMPLETE and "7 log(s) absent" in result.status_reason
    nothing = score_group([], "bert", "v4.0", 1.0, n_missing=10)
    assert nothing.status == NOT_SCORED and nothing.status_reason == "logs absent from this copy"


def test_benchmark_names_are_normalised_with_aliases_kept():
    assert benchmark_info("ssd", "v4.1").canonical_name == "retinanet"
    assert benchmark_info("ssd", "v1.0").canonical_name == "ssd_resnet34"
    assert benchmark_info("mask", "v0.6").canonical_name == "maskrcnn"
    assert benchmark_info("gnn", "v4.1").canonical_name == "rgat"
    assert benchmark_info("unet3d", "v4.0").max_dropped == 4
    assert benchmark_info("llama2_70b_lora", "v4.1").n_required == 10


def test_quality_conditions_from_the_rules_file():
    bert_07 = quality_target("v0.7", "bert").condition
    assert meets_target(bert_07, 0.708, global_batch_size=8192)  # large batches have a lower target
    assert not meets_target(bert_07, 0.708, global_batch_size=4096)
    mask = quality_target("v1.0", "maskrcnn").condition
    assert meets_target(mask, {"BBOX": 0.38, "SEGM": 0.34}, None)
    assert not meets_target(mask, {"BBOX": 0.38}, None)  # SEGM missing: not reached
    assert meets_target(quality_target("v1.0", "rnnt").condition, 0.057, None)
    assert not meets_target(quality_target("v4.1", "llama2_70b_lora").condition, "0.92", None)  # text is not a number


def test_stable_diffusion_joins_fid_and_clip_per_evaluation():
    events = [
        ("eval_accuracy", 123.0, {"samples_count": 1024000, "metric": "FID"}),
        ("eval_accuracy", 0.127, {"samples_count": 1024000, "metric": "CLIP"}),
        ("eval_accuracy", 79.8, {"samples_count": 2048000, "metric": "FID"}),
        ("eval_accuracy", 0.151, {"samples_count": 2048000, "metric": "CLIP"}),
    ]
    assert judge_run(facts(quality_events=events), "v4.1", "stable_diffusion").valid
    assert not judge_run(facts(quality_events=events[:3]), "v4.1", "stable_diffusion").valid
