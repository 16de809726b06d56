"""Planning a language model that is not a benchmark: the attention count, the transfer of utilisation between the
measured language models, the cross-benchmark backtest and its targets, the refusals, and the command."""

from __future__ import annotations

import functools
import json
import math
import re

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlperf_scaling.cli import main
from mlperf_scaling.tasks.metrics.model_plan import make_model_plan, resolve_group
from mlperf_scaling.tasks.metrics.plan import PlanError
from mlperf_scaling.tasks.metrics.production import production_backtest, production_cases
from mlperf_scaling.tasks.metrics.transfer import (
    ACCELERATOR,
    Request,
    attention_share,
    backtest_figures,
    d_model,
    language_model_evidence,
    transfer,
    transfer_backtest,
)

LANGUAGE_MODEL_ROUNDS = ("v3.1", "v4.0", "v4.1", "v5.1")  # the shipped rounds with gpt3, llama2_70b_lora, llama31_8b, llama31_405b


@functools.cache
def _evidence() -> pl.DataFrame:
    from mlperf_scaling.tasks.metrics.context import result_context
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

    contexts = []
    for round_name in LANGUAGE_MODEL_ROUNDS:
        data, _ = read_shipped_round(round_name)
        efficiency, _ = efficiency_table(data.scores)
        contexts.append(result_context(data.scores, data.systems, data.energy, efficiency))
    return language_model_evidence(pl.concat(contexts, how="diagonal_relaxed"))


@functools.cache
def _backtest() -> pl.DataFrame:
    return transfer_backtest(_evidence())


@functools.cache
def _production() -> pl.DataFrame:
    return production_backtest(production_cases(_evidence()))


@pytest.mark.parametrize(("parameters", "published"), [(7.50e9, 4096), (68.71e9, 8192), (174.57e9, 12288), (402.17e9, 16384)])
def test_hidden_size_from_parameters_is_within_twelve_percent_of_the_published_architectures(parameters, published):
    # Llama 3.1 8B, Llama 2 70B, GPT-3 175B, Llama 3.1 405B: d_model as their papers give it; Llama 2 70B is the farthest
    # (80 layers of 8,192: an aspect ratio of 102, not 128), at +10 %
    assert d_model(parameters) == pytest.approx(published, rel=0.12)


def test_attention_is_counted_as_palm_does():
    # 12 L d s over 6 P: benchmark_work.tsv's note says +8.4 % for Llama 3.1 405B at 8,192 tokens
    assert attention_share(402.17e9, 8192) == pytest.approx(0.084, abs=0.003)
    assert attention_share(174.57e9, 2048) < 0.03 < 0.3 < attention_share(7.5e9, 8192)


def test_the_evidence_is_every_language_model_score_with_a_known_utilisation():
    evidence = _evidence()
    assert dict(evidence.group_by("benchmark").len().iter_rows()) == {"gpt3": 35, "llama2_70b_lora": 122, "llama31_405b": 8, "llama31_8b": 39}
    assert set(evidence.filter(pl.col("benchmark") == "llama31_405b")["accelerator_group"]) == {"B200-SXM", "GB200", "GB300", "H200-SXM"}
    assert (evidence["mfu_with_attention"] > 0).all() and evidence["training"].is_in(["pretraining", "LoRA fine-tuning"]).all()


def test_the_cross_benchmark_backtest_meets_its_targets():
    backtest = _backtest()
    figures = backtest_figures(backtest)
    # the targets: median error at most 20 %, the stated 90 % interval holding in 80 to 95 % of cases
    assert figures.median_abs_error_pct is not None and figures.median_abs_error_pct <= 20
    assert figures.coverage is not None and 0.80 <= figures.coverage <= 0.95
    assert set(figures.per_benchmark) == {"gpt3", "llama2_70b_lora", "llama31_405b", "llama31_8b"}
    # nothing is refused for lying far from the evidence: every case is predicted, and the ones beyond it hold as often
    assert figures.refused == 0 and figures.cases == 204
    assert figures.beyond[1] > 100 and 0.80 <= figures.beyond[0] / figures.beyond[1] <= 0.95
    # a held-out accelerator is planned from every other accelerator, and that backtest holds too
    pooled = backtest_figures(backtest, ACCELERATOR)
    assert pooled.cases == 204 and pooled.median_abs_error_pct is not None and pooled.median_abs_error_pct <= 25
    assert pooled.coverage is not None and pooled.coverage >= 0.85
    # a predicted case's interval brackets its prediction, and a precision change says where it came from
    predicted = backtest.filter(pl.col("predicted_time_min").is_not_null())
    assert (predicted["predicted_time_min_low"] < predicted["predicted_time_min"]).all()
    assert (predicted["predicted_time_min"] < predicted["predicted_time_min_high"]).all()
    changed = predicted.filter(pl.col("precision_change").is_not_null())
    assert changed.height > 0 and changed["precision_change"].str.contains("to").all()


def test_a_held_out_benchmarks_interval_is_learnt_without_it():
    # doubling every llama31_8b time (halving its utilisation) moves its predictions' errors but not the width of their
    # intervals: those come from the other benchmarks' backtests alone
    evidence = _evidence()
    slower = evidence.with_columns(
        pl.when(pl.col("benchmark") == "llama31_8b").then(pl.col("time_to_train_min") * 2).otherwise(pl.col("time_to_train_min")).alias("time_to_train_min"),
        pl.when(pl.col("benchmark") == "llama31_8b").then(pl.col("mfu_with_attention") / 2).otherwise(pl.col("mfu_with_attention")).alias("mfu_with_attention"),
    )

    def widths(backtest: pl.DataFrame) -> list[float]:
        rows = backtest.filter((pl.col("left_out") == "benchmark") & (pl.col("held_out") == "llama31_8b") & pl.col("predicted_time_min").is_not_null())
        return (rows["predicted_time_min_high"] / rows["predicted_time_min"]).round(9).to_list()

    before, after = _backtest(), transfer_backtest(slower)
    assert widths(before) == widths(after)
    held = (pl.col("left_out") == "benchmark") & (pl.col("held_out") == "llama31_8b")
    moved = after.filter(held)["error_pct"] - before.filter(held)["error_pct"]
    assert (moved.drop_nulls() < 0).all()  # measured twice as slow: the same prediction is now too fast


def test_seventy_billion_on_1024_h100s():
    request = Request(70e9, 70e9, 8192, "H100-SXM", accelerators=1024)
    plan = make_model_plan(_evidence(), _backtest(), request, 1e12, production=_production())
    answer = plan.chosen
    assert answer is not None and answer.pace is not None and answer.production is not None
    pace, made = answer.pace, answer.production
    assert pace.hours_low is not None and pace.hours_high is not None and pace.hours_low < pace.hours < pace.hours_high
    assert 5 * 24 < pace.hours < 20 * 24  # days, as a 70B model on 10^12 tokens takes
    # it leaned most on the measured model closest in size, Llama 2 70B (LoRA), then GPT-3 175B
    weights = {c.benchmark: c.weight for c in plan.transfer.cells}
    assert weights["llama2_70b_lora"] > weights["gpt3"] > weights["llama31_8b"]
    # no precision named: 16 bits, said so, carried from the FP8 the H100's language models were measured at
    assert plan.transfer.precision == "bf16" and plan.transfer.precision_assumed and plan.transfer.change is not None
    assert plan.transfer.change.source == "fp8" and plan.power is not None
    # a production run on H100 takes longer than the MLPerf pace, by the factor public Hopper runs took
    assert plan.production is not None and plan.production.factor > 1 and "NVIDIA Hopper" in plan.production.leaned_on
    assert made.hours == pytest.approx(pace.hours * plan.production.factor)
    assert pace.energy_mwh is not None and pace.accelerator_hours == pytest.approx(pace.hours * 1024)


@pytest.mark.parametrize(("request_", "far"), [
    (Request(3e12, 3e12, 8192, "H100-SXM"), "active parameters 3T is x17.2 beyond those measured"),
    (Request(37e9, 671e9, 8192, "H100-SXM"), "no mixture-of-experts language model measured: planned from the other kind"),
    (Request(70e9, 70e9, 8192, "H100-SXM", accelerators=200_000), "200,000 accelerators is x17.2 beyond the counts measured (4 to 11,616)"),
    (Request(70e9, 70e9, 128, "H100-SXM"), "sequence length 128 is x16.0 beyond those measured"),
    (Request(70e9, 70e9, 2048, "TPU v4"), "no language model measured on TPU v4: planned from every accelerator measured"),
])
def test_far_from_the_evidence_the_answer_widens_and_says_why(request_, far):
    found = transfer(_evidence(), request_)
    assert found.mfu_with_attention is not None and found.refused == []
    assert any(far in reason for reason in found.far), found.far


@pytest.mark.parametrize(("request_", "missing"), [
    (Request(405e9, 405e9, 8192, "H100-SXM", accelerators=8), "405B parameters need about 6,480 GB of weights and optimiser state (16 "
                                                               "bytes each); 8 H100-SXM hold"),
    (Request(70e9, 70e9, 8192, "A100-SXM", precision="fp8"), "A100's datasheet lists no fp8 peak"),
    (Request(70e9, 70e9, 8192, "XPU9"), "no datasheet for XPU9 (reference/accelerator_specs.tsv lists: A100-PCIe"),
])
def test_only_what_cannot_be_stated_is_refused(request_, missing):
    found = transfer(_evidence(), request_)
    assert found.mfu_with_attention is None
    assert any(missing in reason for reason in found.refused), found.refused


def test_accelerators_are_resolved_as_people_type_them():
    evidence = _evidence()
    assert resolve_group(evidence, "h100 sxm") == "H100-SXM" and resolve_group(evidence, "B200") == "B200-SXM"
    assert resolve_group(evidence, "TPU-v5p") == "TPU v5p" and resolve_group(evidence, "tpu v4") == "TPU v4"
    assert resolve_group(evidence, "A100-SXM4-80GB") == "A100-SXM"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parameters=st.floats(1e9, 2e12), tokens=st.floats(1e10, 2e13), doublings=st.integers(3, 16),
       group=st.sampled_from(["H100-SXM", "B200-SXM", "TPU v5p", "MI300X-OAM", "A100-SXM", "TPU v4", "GB300"]),
       precision=st.sampled_from([None, "bf16", "fp8", "fp4", "int8"]))
def test_time_follows_the_work_and_no_interval_passes_the_peak(parameters, tokens, doublings, group, precision):
    evidence, backtest = _evidence(), _backtest()
    accelerators = 2**doublings
    plan = make_model_plan(evidence, backtest, Request(parameters, parameters, 8192, group, precision, accelerators), tokens, production=_production())
    answer = plan.chosen
    if plan.refused:  # only what cannot be stated: a precision the chip lacks
        assert all("datasheet lists no" in reason for reason in plan.refused)
        return
    assert answer is not None
    if answer.refused:  # no number at all where the request is refused: the weights do not fit
        assert answer.pace is None and answer.production is None and "of weights and optimiser state" in answer.refused[0]
        return
    assert answer.pace is not None and answer.pace.hours_low is not None and answer.pace.hours_high is not None
    assert answer.pace.hours_low <= answer.pace.hours < answer.pace.hours_high
    # a utilisation and its interval never pass the physical peak: no time faster than every accelerator at its peak
    assert plan.mfu_high is not None and plan.mfu_high <= 1 and plan.transfer.mfu_with_attention <= 1
    fastest = plan.flops / (accelerators * plan.transfer.peak_tflops * 1e12) / 3600
    assert answer.pace.hours_low >= fastest * (1 - 1e-9)
    assert answer.production is None or (answer.production.hours_low or fastest) >= fastest * (1 - 1e-9)
    # the production interval is never narrower than the pace's own: it is that pace times a factor
    if answer.production is not None and answer.production.hours_high is not None:
        assert answer.production.hours_high / answer.production.hours >= answer.pace.hours_high / answer.pace.hours * (1 - 1e-9)
    # twice the tokens, twice the time
    twice = make_model_plan(evidence, backtest, Request(parameters, parameters, 8192, group, precision, accelerators), 2 * tokens).chosen
    assert twice is not None and twice.pace is not None and twice.pace.hours == pytest.approx(2 * answer.pace.hours)


def test_a_deadline_is_met_on_the_production_intervals_slow_end():
    request = Request(70e9, 70e9, 8192, "H100-SXM")
    plan = make_model_plan(_evidence(), _backtest(), request, 1e12, deadline_min=30 * 1440, production=_production())
    chosen = plan.chosen
    assert chosen is not None and chosen.meets_deadline and chosen.accelerators % 8 == 0 and chosen.production is not None
    assert chosen.production.hours_high is not None and chosen.production.hours_high * 60 <= 30 * 1440
    fewer = make_model_plan(_evidence(), _backtest(), Request(70e9, 70e9, 8192, "H100-SXM", accelerators=chosen.accelerators - 8), 1e12,
                            deadline_min=30 * 1440, production=_production()).chosen
    assert fewer is not None and fewer.meets_deadline is False  # the fewest whole nodes


@pytest.fixture(scope="module")
def v41_with_trends(v41_warehouse, tmp_path_factory) -> str:
    """The shipped v4.1 as `run` leaves it, its cross-round tables (transfer_backtest among them) computed too."""
    import shutil

    from mlperf_scaling.tasks.metrics.steps import compute_trends, write_trends

    copy = tmp_path_factory.mktemp("trends") / "v41.duckdb"
    shutil.copy(v41_warehouse, copy)
    write_trends.fn(str(copy), compute_trends.fn(str(copy)))
    return str(copy)


def test_the_command_answers_at_the_pace_and_in_production(v41_with_trends, capsys):
    warehouse = v41_with_trends
    argv = ["plan", "--model-params", "70e9", "--tokens", "1e12", "--accelerator", "H100-SXM", "--warehouse", warehouse]
    assert main([*argv, "--accelerators", "1024", "--format", "json", "--price-per-accelerator-hour", "2"]) == 0
    document = json.loads(capsys.readouterr().out)
    answer = document["answer"]
    pace, made = answer["pace"], answer["production"]
    assert answer["accelerators"] == 1024 and pace["hours_low"] < pace["hours"] < pace["hours_high"]
    assert made["hours_low"] < made["hours"] < made["hours_high"] and made["cost_usd"] == pytest.approx(made["accelerator_hours"] * 2)
    assert {c["benchmark"] for c in document["leaned_on"]} == {"gpt3", "llama2_70b_lora"}  # v4.1's language models on H100
    assert document["backtest"]["mlperf_pace"]["cases"] > 0 and document["refused"] == []
    assert document["backtest"]["production"]["runs"] >= 40 and document["production"]["factor"] > 1
    assert math.isclose(pace["accelerator_hours"], pace["hours"] * 1024)

    assert main([*argv, "--accelerators", "1024", "--price-per-accelerator-hour", "2"]) == 0
    out = capsys.readouterr().out
    assert "At 1,024 H100-SXM (the count asked for): in production about" in out and "USD" in out and "MLPerf pace, backtested" in out
    assert "In production: x" in out and "each organisation left out" in out
    at = " ".join(out.split()).split("At 1,024 H100-SXM (the count asked for): in production about ")[1].split("; at the MLPerf")[0]
    assert re.search(r"accelerator-hours, .* MWh, USD [\d,]+ \[[\d,]+, [\d,]+\]", at), at
    assert "(1 scores" not in out and " parameters need" not in out

    assert main([*argv, "--precision", "fp8", "--format", "csv"]) == 0
    rows = pl.read_csv(__import__("io").StringIO(capsys.readouterr().out))
    assert rows.height >= 5 and {"pace_hours", "production_hours", "production_accelerator_hours_high"} <= set(rows.columns)

    for bad, message in [
        (["plan", "--model-params", "70e9", "--accelerator", "H100-SXM"], "plan --model-params: give --tokens T and --accelerator A too"),
        (["plan", "bert", "--model-params", "70e9", "--tokens", "1e12", "--accelerator", "H100-SXM"], "plan: a BENCHMARK or --model-params, not both"),
        (["plan", "bert", "--tokens", "1e12"], "--tokens: for a model's plan, with --model-params"),
        ([*argv, "--active-params", "80e9"], "--active-params: at most --model-params"),
        ([*argv, "--round", "v4.1"], "--round and --rounds are for a benchmark's plan"),
        ([*argv, "--deadline", "soon"], "--deadline: not a duration: 'soon'"),
    ]:
        assert main([*bad, "--warehouse", warehouse] if "--warehouse" not in bad else bad) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mlperf-scaling: {message}") and err.count("\n") == 1


def test_a_family_with_two_groups_must_be_named():
    two = _evidence().with_columns(pl.when(pl.col("accelerator_group") == "H200-SXM").then(pl.lit("H100-SXM-NVL"))
                                   .otherwise(pl.col("accelerator_group")).alias("accelerator_group"),
                                   pl.when(pl.col("accelerator_group") == "H200-SXM").then(pl.lit("H100"))
                                   .otherwise(pl.col("accelerator_family")).alias("accelerator_family"))
    with pytest.raises(PlanError, match="'H100' is more than one comparable group: H100-PCIe, H100-SXM, H100-SXM-NVL"):
        resolve_group(two, "H100")


def test_a_refusal_says_its_numbers_as_people_do():
    from mlperf_scaling.model_plan_command import readable

    assert readable("7e+10 parameters need about 1,120 GB of weights") == "70B parameters need about 1,120 GB of weights"
    assert readable("1.5e+12 tokens, 405B and v4.1") == "1.5T tokens, 405B and v4.1"


def test_a_named_part_is_planned_on_its_own_datasheet_row():
    """A100-SXM4-80GB is the 80 GB row, not its group's first (40 GB) one; H100 NVL is NVIDIA's NVL column."""
    import dataclasses

    from mlperf_scaling.tasks.metrics.transfer import datasheet_of, memory_of

    evidence = _evidence()
    eighty = Request(70e9, 70e9, 8192, resolve_group(evidence, "A100-SXM4-80GB"), None, 24, accelerator_name="A100-SXM4-80GB")
    group = dataclasses.replace(eighty, accelerator_name=None)
    assert eighty.accelerator_group == "A100-SXM" and (memory_of(eighty, evidence), memory_of(group, evidence)) == (80, 40)
    # 70B x 16 bytes = 1,120 GB: 24 x 90 % of 80 GB holds it, 24 x 90 % of 40 GB does not
    answer = make_model_plan(evidence, _backtest(), eighty, 2e12).chosen
    assert answer is not None and not answer.refused and answer.pace is not None
    refused = make_model_plan(evidence, _backtest(), group, 2e12).chosen
    assert refused is not None and "at least 32 are needed" in refused.refused[0]
    nvl = Request(70e9, 70e9, 8192, resolve_group(evidence, "H100 NVL"), None, 64, accelerator_name="H100 NVL")
    assert nvl.accelerator_group == "H100-PCIe"
    assert datasheet_of(nvl).peak_tflops["bf16"] == 835.5 and datasheet_of(nvl).memory_gb == 94
    assert datasheet_of(dataclasses.replace(nvl, accelerator_name=None)).peak_tflops["bf16"] == 756.5


def test_a_score_at_a_precision_the_chip_lacks_is_carried_at_the_usual_rate_of_bits():
    """TPU v4 has no FP4: a score measured at FP4 elsewhere is carried to 16 bits as on a chip whose FP4 runs 4x its BF16
    (between 1 and 4, at its middle: x2, with that spread), not at x1 as if FP4 were 16-bit utilisation."""
    from mlperf_scaling.tasks.metrics.precision_change import PrecisionChanges
    from mlperf_scaling.tasks.metrics.transfer import carried_to, datasheet_of_group

    rows = pl.DataFrame({"precision": ["fp4", "bf16"], "mfu_with_attention": [0.2, 0.4]})
    carried, change = carried_to(rows, "bf16", datasheet_of_group("TPU v4"), PrecisionChanges({}, {}))
    assert carried["mfu_with_attention"].to_list() == pytest.approx([0.4, 0.4])
    assert change is not None and change.factor == pytest.approx(2.0) and change.log_sd == pytest.approx(math.log(4) / math.sqrt(12))
