"""Each round judged by its rules as they stood when MLCommons published it: the recorded changes, their application
per rule, and the published scores as the truth (the conformance suite covers every shipped round)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from conftest import official_verdict, score_stream

from mlperf_scaling.reference.lookup import AS_PUBLISHED, SET_ASIDE, TODAY, round_publications, rule_changes
from mlperf_scaling.tasks.parse.result_log import parse_log
from mlperf_scaling.tasks.score.compliance import ComplianceJudge
from mlperf_scaling.tasks.score.rules import (
    changes_for,
    installed_rulesets,
    load_ruleset,
    published_behaviours,
    published_ruleset,
    rules_for_round,
    rules_identity,
)
from mlperf_scaling.tasks.score.validity import judge_run

FIXTURES = Path(__file__).parent / "fixtures"
V11_BERT = FIXTURES / "logs" / "v1.1_NVIDIA_dgxa100_ngc21.09_pytorch_bert_result_3.txt"  # logs no weights_initialization
V21_BERT = FIXTURES / "logs" / "v2.1_NVIDIA_dgxa100_ngc22.09_pytorch_bert_result_0.txt"  # logs opt_epsilon, as then required
LLAMA405B = FIXTURES / "slices" / "v5.1_llama31_405b"  # 3 runs, RCP scaling factor 1.0226


def judged(path: Path, ruleset: str):
    judge = ComplianceJudge(ruleset)
    facts = parse_log(path.read_bytes(), judge.keep, judge.decode)
    return facts, judge(facts)


def test_every_ruleset_of_a_published_round_has_its_publication_date():
    published = round_publications()
    for ruleset in installed_rulesets():
        round_name = "v" + ruleset.rsplit(".", 1)[0]
        assert round_name in published, f"rounds.tsv lacks {round_name}"
    assert published["v2.1"].published == "2022-11-09" and published["v6.0"].published == "2026-06-16"
    assert published["v6.1"].published is None  # not yet published: judged by today's rules
    # docs/scoring.md's comparison with the summarizer of each round's day needs the logging commit of that day
    assert all(len(published[r].logging_commit or "") == 40 for r in ("v1.1", "v2.0", "v2.1", "v3.0", "v5.0", "v6.0"))
    dates = [dt.date.fromisoformat(p.published) for p in published.values() if p.published]
    assert dates == sorted(dates)


def test_every_recorded_change_came_after_the_publication_of_the_rounds_it_names():
    by_ruleset = {p.ruleset: p for p in round_publications().values() if p.ruleset}
    for change in rule_changes():
        assert change.action in (AS_PUBLISHED, TODAY, SET_ASIDE)
        assert len(change.commit) >= 7 and change.change and change.why
        for ruleset in change.rulesets:
            published = by_ruleset[ruleset].published
            assert published is not None and change.date > published, f"{ruleset} {change.rules}: {change.date} is not after {published}"


def test_published_rules_differ_only_where_a_change_is_recorded():
    # 6.0.0 (published 2026-06-16) and the rulesets of the shipped rounds from v3.1 on are today's rules, untouched
    for ruleset in ("3.0.0", "3.1.0", "4.0.0", "4.1.0", "5.0.0", "5.1.0", "6.0.0", "6.1.0"):
        assert published_ruleset(ruleset) is None
        assert not [c for c in changes_for(ruleset) if c.action == AS_PUBLISHED]
    assert published_behaviours("1.1.0") == {"weights_initialization", "submission_keys_every_line"}
    assert published_behaviours("2.1.0") == frozenset()
    then = published_ruleset("2.1.0")
    assert then is not None and then.changed_files == {"training_2.1.0/closed_bert.yaml"}
    bert = then.files["training_2.1.0/closed_bert.yaml"].keys
    assert "opt_epsilon" in bert and "opt_lamb_epsilon" not in bert
    today = load_ruleset("2.1.0").files["training_2.1.0/closed_bert.yaml"].keys
    assert "opt_lamb_epsilon" in today and "opt_epsilon" not in today
    assert set(bert) - {"opt_epsilon"} == set(today) - {"opt_lamb_epsilon"}  # nothing else moved


def test_a_v21_bert_run_that_only_the_renamed_key_fails_counts_and_says_so(tmp_path):
    facts, judgement = judged(V21_BERT, "2.1.0")
    assert judgement.failures == [] and judgement.valid_today is False
    assert [f.rule for f in judgement.later] == ["training_2.1.0/closed_bert.yaml:opt_lamb_epsilon"]
    verdict = judge_run(facts, judgement.failures, rules_for_round("v2.1"), judgement.later, judgement.valid_today)
    assert verdict.valid and verdict.valid_today is False
    assert round(verdict.time_to_train_min, 9) == 15.430466667
    assert verdict.later_rule_failed == "training_2.1.0/closed_bert.yaml:opt_lamb_epsilon (mlcommons/logging@d82b94d, 2022-11-22)"
    assert verdict.later_rule_reason == "'opt_lamb_epsilon' is never logged; the rules require it exactly once (training_2.1.0/closed_bert.yaml)"
    # what today's official checker says of the same log: the oracle for `valid_today`
    copy = tmp_path / "result_0.txt"
    copy.write_bytes(V21_BERT.read_bytes())
    assert official_verdict(copy, "2.1.0") is False


def test_the_published_rule_still_judges_a_v21_bert_log_that_lacks_its_key():
    without = b"\n".join(line for line in V21_BERT.read_bytes().splitlines() if b'"opt_epsilon"' not in line) + b"\n"
    judge = ComplianceJudge("2.1.0")
    judgement = judge(parse_log(without, judge.keep, judge.decode))
    assert [f.rule for f in judgement.failures] == ["training_2.1.0/closed_bert.yaml:opt_epsilon"]


def test_a_v11_bert_run_without_weight_initialisation_lines_counts_as_it_did_when_published(tmp_path):
    facts, judgement = judged(V11_BERT, "1.1.0")
    assert judgement.failures == [] and judgement.valid_today is False
    assert {f.rule for f in judgement.later} == {"training_1.1.0/closed_bert.yaml:weights_initialization", "training_1.1.0/closed_bert.yaml:END"}
    verdict = judge_run(facts, judgement.failures, rules_for_round("v1.1"), judgement.later, judgement.valid_today)
    assert verdict.valid and verdict.later_rule_failed.endswith("(mlcommons/logging@4c04112, 2022-03-29)")
    copy = tmp_path / "result_3.txt"
    copy.write_bytes(V11_BERT.read_bytes())
    assert official_verdict(copy, "1.1.0") is False


def test_a_failure_the_checker_of_the_time_did_not_excuse_still_fails_in_v11():
    # the per-line CHECK of weights_initialization ('tensor' in metadata) stayed an error in 2021: only the END test
    # and a missing key were warnings
    line = (b':::MLLOG {"namespace": "", "time_ms": 1634000000000, "event_type": "POINT_IN_TIME", "key": "weights_initialization", '
            b'"value": null, "metadata": {"file": "x.py", "lineno": 1}}\n')
    data = V11_BERT.read_bytes()
    judge = ComplianceJudge("1.1.0")
    judgement = judge(parse_log(line + data, judge.keep, judge.decode))
    assert [f.rule for f in judgement.failures] == ["training_1.1.0/closed_bert.yaml:weights_initialization"]


def test_a_ruleset_unchanged_since_publication_is_judged_once():
    # v5.1's rules are today's: nothing is run twice, nothing is reported as a later rule
    facts, judgement = judged(FIXTURES / "logs" / "v5.1_ASUSTeK_ESC_A8A_MI325X_llama2_70b_lora_result_0.txt", "5.1.0")
    assert judgement.failures == [] and judgement.later == [] and judgement.valid_today is None


def test_a_three_run_benchmark_with_an_rcp_scaling_factor_is_scored_as_published(tmp_path):
    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    with open_source(resolve_source(str(LLAMA405B / "training_results_v5.1"))) as stream:
        data = score_stream(stream, "v5.1", workers=1)
    row = data.scores.row(0, named=True)
    # official_scores_v5.1.csv: University-of-Florida hpg.dgxb200x8.n56 llama31_405b, 448 accelerators
    assert (row["n_runs"], row["n_valid"], row["n_required"], row["accelerators"]) == (3, 3, 3, 448)
    assert row["scaling_factor"] == 1.0225563909774436
    assert abs(row["time_to_train_min"] - 147.1554426065163) < 1e-9
    assert row["status"] == "scored"


def test_the_rules_identity_covers_every_reference_table():
    from mlperf_scaling.reference.lookup import reference_digest, reference_tables

    tables = reference_tables()
    # what scores a round and what its analysis reads: an edit to any of them re-reads a loaded round
    assert {"rule_changes.tsv", "rules_as_published.yaml", "published_result_ids.tsv", "accelerator_specs.tsv",
            "precision_statements.tsv", "production_runs.tsv"} <= set(tables)
    assert rules_identity() == f"mlperf-logging 4.1.68, reference tables {reference_digest(*tables)}"
    assert reference_digest(*tables) != reference_digest(*(t for t in tables if t != "accelerator_specs.tsv"))
