"""Compliance rules from mlperf-logging, judged on small real logs and their mutations, with the official checker
itself as the oracle for every case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import official_verdict

from mlperf_scaling.tasks.parse.result_log import parse_log
from mlperf_scaling.tasks.score.compliance import check_log, describe
from mlperf_scaling.tasks.score.rules import (
    RulesCoverage,
    allowed_benchmarks,
    installed_rulesets,
    load_ruleset,
    olympic_drops,
    required_runs,
    rules_for_round,
    rules_version,
)

FIXTURES = Path(__file__).parent / "fixtures" / "logs"
LORA = FIXTURES / "v5.1_ASUSTeK_ESC_A8A_MI325X_llama2_70b_lora_result_0.txt"  # 46 lines, closed division
DIFFUSION = FIXTURES / "v4.1_Google_cloud-tpu-v5p-128-maxdiffusion_stable_diffusion_result_4.txt"


def ours(data: bytes, ruleset: str) -> list:
    rules = load_ruleset(ruleset)
    facts = parse_log(data, rules.keys, rules.value_keys)
    return check_log(facts.lines, facts.n_marker_lines - facts.n_parse_errors, facts.n_parse_errors, facts.first_parse_error, rules)


def official(data: bytes, ruleset: str, tmp_path: Path) -> bool | None:
    path = tmp_path / "result_0.txt"
    path.write_bytes(data)
    return official_verdict(path, ruleset)


def mutate(path: Path, change) -> bytes:
    """Apply `change(event) -> event | None | list` to each MLLOG event of a real log; None drops the line."""
    out = []
    for line in path.read_text(encoding="latin-1").splitlines():
        event = json.loads(line.split(":::MLLOG ", 1)[1])
        changed = change(event)
        for item in changed if isinstance(changed, list) else [changed]:
            if item is not None:
                out.append(":::MLLOG " + json.dumps(item))
    return ("\n".join(out) + "\n").encode("latin-1")


def first_time(path: Path, key: str) -> int:
    return next(json.loads(line.split(":::MLLOG ", 1)[1])["time_ms"] for line in path.read_text().splitlines() if f'"key": "{key}"' in line)


def test_real_logs_pass_as_they_do_officially(tmp_path):
    for path, ruleset in ((LORA, "5.1.0"), (DIFFUSION, "4.1.0")):
        assert ours(path.read_bytes(), ruleset) == []
        assert official(path.read_bytes(), ruleset, tmp_path)


def test_slow_initialisation_is_dropped_and_said_in_words(tmp_path):
    late = first_time(LORA, "init_start") + int(31.4 * 60_000)
    data = mutate(LORA, lambda e: {**e, "time_ms": late} if e["key"] == "init_stop" else e)
    failures = ours(data, "5.1.0")
    assert not official(data, "5.1.0", tmp_path)
    assert describe(failures) == "initialisation took 31.4 min; closed division allows 30 (training_5.1.0/common.yaml)"
    assert failures[0].rule == "training_5.1.0/common.yaml:init_stop"


def test_the_open_division_allows_four_hours_of_initialisation(tmp_path):
    late = first_time(LORA, "init_start") + int(31.4 * 60_000)

    def change(event):
        if event["key"] == "init_stop":
            return {**event, "time_ms": late}
        if event["key"] == "submission_division":
            return {**event, "value": "open"}
        return event

    data = mutate(LORA, change)
    failures = ours(data, "5.1.0")
    assert not any(f.rule.endswith(":init_stop") for f in failures)
    # the open rules want epoch_num on eval_accuracy, which this closed log does not write: both checkers agree
    assert [f.rule for f in failures] == ["training_5.1.0/open_llama2_70b_lora.yaml:eval_accuracy"]
    assert not official(data, "5.1.0", tmp_path)


def test_quality_target_not_reached(tmp_path):
    # the last evaluation (0.9249) is the only one at or under the 0.925 target
    data = mutate(LORA, lambda e: None if e["key"] == "eval_accuracy" and e["value"] < 0.925 else e)
    failures = ours(data, "5.1.0")
    assert not official(data, "5.1.0", tmp_path)
    assert describe(failures).startswith("quality target not reached: no eval_accuracy satisfies `(v['value'] <= 0.925) and v['value'] > 0.0`")


def test_a_fixed_hyperparameter_changed(tmp_path):
    data = mutate(LORA, lambda e: {**e, "value": 8} if e["key"] == "lora_rank" else e)
    assert not official(data, "5.1.0", tmp_path)
    assert describe(ours(data, "5.1.0")).startswith("'lora_rank' = 8 on log line 17 fails the rule `v['value'] == 16`")


def test_repeats_of_one_value_pass_but_different_values_do_not(tmp_path):
    same = mutate(LORA, lambda e: [e, e] if e["key"] == "global_batch_size" else e)
    assert ours(same, "5.1.0") == [] and official(same, "5.1.0", tmp_path)
    different = mutate(LORA, lambda e: [e, {**e, "value": 16}] if e["key"] == "global_batch_size" else e)
    assert not official(different, "5.1.0", tmp_path)
    assert "'global_batch_size' is logged 2 times with different values (16, 8)" in describe(ours(different, "5.1.0"))


def test_a_missing_required_key(tmp_path):
    data = mutate(LORA, lambda e: None if e["key"] == "opt_gradient_clip_norm" else e)
    assert not official(data, "5.1.0", tmp_path)
    assert describe(ours(data, "5.1.0")) == (
        "'opt_gradient_clip_norm' is never logged; the rules require it exactly once (training_5.1.0/closed_llama2_70b_lora.yaml)"
    )


def test_stable_diffusion_joins_fid_and_clip_as_the_rules_file_does(tmp_path):
    # the rules' BEGIN block builds one aggregated line per step from the FID and CLIP lines
    fid_too_high = mutate(DIFFUSION, lambda e: {**e, "value": 95.0} if e.get("metadata", {}).get("metric") == "FID" else e)
    assert not official(fid_too_high, "4.1.0", tmp_path)
    assert describe(ours(fid_too_high, "4.1.0")).startswith("quality target not reached: no aggregated_eval_accuracy satisfies")
    no_clip = mutate(DIFFUSION, lambda e: None if e.get("metadata", {}).get("metric") == "CLIP" else e)
    assert official(no_clip, "4.1.0", tmp_path) is None  # the official checker raises KeyError: 'CLIP'
    assert "the official checker stops on this log: KeyError: 'CLIP'" in describe(ours(no_clip, "4.1.0"))


def test_a_corrupt_line_invalidates_the_run_first(tmp_path):
    text = LORA.read_text(encoding="latin-1").replace('"key": "seed", "value": 24352', '"key": "seed", "value": 24352,,', 1)
    data = text.encode("latin-1")
    assert not official(data, "5.1.0", tmp_path)
    assert describe(ours(data, "5.1.0")).startswith("1 line(s) do not parse, which invalidates the run")


def test_rules_files_of_another_ruleset_are_loaded_when_queued():
    # 4.0.0's closed_resnet.yaml queues training_3.1.0/closed_resnet_lars.yaml, as the official checker loads it
    assert "training_3.1.0/closed_resnet_lars.yaml" in load_ruleset("4.0.0").files


def test_the_package_is_the_source_of_every_rule_count():
    assert rules_version() == "4.1.68"
    assert installed_rulesets()[0] == "0.6.0" and installed_rulesets()[-1] == "6.1.0"
    assert {"gpt_oss_20b", "deepseekv3_671b"} <= allowed_benchmarks("6.0.0")
    assert not {"retinanet", "rgat"} & allowed_benchmarks("6.0.0")
    assert required_runs("llama31_405b") == 3 and required_runs("unet3d") == 40
    assert olympic_drops("unet3d") == 4 and olympic_drops("flux1") == 1


@pytest.mark.parametrize(
    "round_name, coverage, note",
    [
        ("v0.5", RulesCoverage.PREDATES, "v0.5 predates the compliance checker"),
        ("v0.6", RulesCoverage.SET_ASIDE, "ruleset 0.6.0 set aside: The 0.6.0 rule files reached mlcommons/logging"),
        ("v4.1", RulesCoverage.CHECKED, None),
        ("v6.1", RulesCoverage.CHECKED, None),
        ("v6.2", RulesCoverage.NEWER, "ruleset 6.2.0 is newer than the rules installed (mlperf-logging 4.1.68 ends at 6.1.0)"),
    ],
)
def test_each_round_says_which_rules_judge_it(round_name, coverage, note):
    rules = rules_for_round(round_name)
    assert rules.coverage is coverage
    assert (rules.note is None) if note is None else rules.note.startswith(note)


def _samples_to_converge(data: bytes, ruleset: str) -> float | None:
    from mlperf_scaling.tasks.score.compliance import ComplianceJudge
    from mlperf_scaling.tasks.score.convergence import run_convergence

    judge = ComplianceJudge(ruleset)
    facts = parse_log(data, judge.keep, judge.decode)
    return run_convergence(facts, judge(facts)).samples


@pytest.mark.parametrize("first_fails", [False, True])
def test_stable_diffusion_converges_where_the_rcp_checker_says(tmp_path, first_fails):
    # the first evaluation (2,560,000 samples) passes as logged; made to fail, the run converges at the next one
    from mlperf_logging.rcp_checker.rcp_checker import read_submission_file

    failing = lambda e: {**e, "value": 95.0} if e.get("metadata", {}).get("metric") == "FID" and e["metadata"]["samples_count"] == 2560000 else e  # noqa: E731
    data = mutate(DIFFUSION, failing) if first_fails else DIFFUSION.read_bytes()
    path = tmp_path / "result_0.txt"
    path.write_bytes(data)
    not_converged, official_samples, _, _ = read_submission_file(str(path), "4.1.0", False)
    assert not not_converged
    assert official_samples == (3072000 if first_fails else 2560000)
    assert _samples_to_converge(data, "4.1.0") == official_samples
