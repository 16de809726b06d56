"""Planning a language model that is not a benchmark: the attention count, the transfer of utilisation between the
measured language models, the step overhead and the batch that make the count matter, the backtests and their targets,
the refusals, and the command."""

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
from mlperf_scaling.tasks.planning.evidence import language_model_evidence
from mlperf_scaling.tasks.planning.model_plan import make_model_plan, resolve_group
from mlperf_scaling.tasks.planning.pace import learn, pace
from mlperf_scaling.tasks.planning.pace_backtest import ACCELERATOR, backtest_figures, transfer_backtest
from mlperf_scaling.tasks.planning.production import production_backtest, production_cases, production_learnt
from mlperf_scaling.tasks.planning.requests import PlanError
from mlperf_scaling.tasks.planning.scale_backtest import scale_backtest
from mlperf_scaling.tasks.planning.work import Request, attention_share, d_model

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
def _scale() -> pl.DataFrame:
    return scale_backtest(_evidence())


@functools.cache
def _backtest() -> pl.DataFrame:
    return transfer_backtest(_evidence(), scale=_scale())


@functools.cache
def _production() -> pl.DataFrame:
    learnt = production_learnt(_evidence())
    return production_backtest(production_cases(learnt), learnt)


def _plan(request: Request, tokens: float, **options):
    return make_model_plan(_evidence(), _backtest(), request, tokens, production=_production(), scale=_scale(), **options)


def _pace(request: Request):
    return pace(learn(_evidence()), request)


@pytest.mark.parametrize(("parameters", "published"), [(7.50e9, 4096), (68.71e9, 8192), (174.57e9, 12288), (402.17e9, 16384)])
def test_hidden_size_from_parameters_is_within_twelve_percent_of_the_published_architectures(parameters, published):
    # Llama 3.1 8B, Llama 2 70B, GPT-3 175B, Llama 3.1 405B: d_model as their papers give it; Llama 2 70B is the farthest
    # (80 layers of 8,192: an aspect ratio of 102, not 128), at +10 %
    assert d_model(parameters) == pytest.approx(published, rel=0.12)


def test_attention_is_counted_as_palm_does():
    # 12 L d s over 6 P: benchmark_work.tsv's note says +8.4 % for Llama 3.1 405B at 8,192 tokens
    assert attention_share(402.17e9, 8192) == pytest.approx(0.084, abs=0.003)
    assert attention_share(174.57e9, 2048) < 0.03 < 0.3 < attention_share(7.5e9, 8192)


@pytest.mark.parametrize(("benchmark", "round_name", "hand"), [
    # GPT-3 175B: 12 x 96 layers x d_model 12,288 x 2,048 tokens a token, over 6 x 174.57B
    ("gpt3", "v4.1", 12 * 96 * 12288 * 2048 / (6 * 174.57e9)),
    # Llama 2 70B LoRA: 64 query heads of 128 (grouped-query: the 8 key-value heads change no score), over 4 x 68.71B
    # (frozen weights: forward and backward through the activations only), about 23 %
    ("llama2_70b_lora", "v4.1", 12 * 80 * (64 * 128) * 8192 / (4 * 68.71e9)),
    ("llama31_405b", "v5.1", 12 * 126 * 16384 * 8192 / (6 * 402.17e9)),
    ("llama31_8b", "v5.1", 12 * 32 * 4096 * 8192 / (6 * 7.50e9)),
    # gpt-oss-20b: 12 layers attend to all 8,192 tokens, 12 to a window of 128; 64 heads of 64 for scores and values, about 24 %
    ("gpt_oss_20b", "v6.0", 6 * (12 * 8192 + 12 * 128) * (64 * 64 + 64 * 64) / (6 * 3.40e9)),
    # DeepSeek-V3: 61 layers of multi-head latent attention, 128 heads: scores of 128 + 64 = 192, values of 128; about 28 %
    ("deepseekv3_671b", "v6.0", 6 * 61 * 4096 * (128 * 192 + 128 * 128) / (6 * 36.62e9)),
])
def test_attention_is_counted_on_each_benchmarks_own_architecture(benchmark, round_name, hand):
    from mlperf_scaling.reference.lookup import benchmark_work
    from mlperf_scaling.tasks.planning.evidence import benchmark_attention_share

    work = benchmark_work(benchmark, round_name)
    assert work is not None and benchmark_attention_share(work) == pytest.approx(hand, rel=1e-9)
    issue = {"llama2_70b_lora": 0.23, "gpt_oss_20b": 0.24, "deepseekv3_671b": 0.28}  # the shares the issue counted by hand
    if benchmark in issue:
        assert round(benchmark_attention_share(work), 2) == issue[benchmark]


def test_the_evidence_is_every_language_model_score_with_a_known_utilisation():
    evidence = _evidence()
    assert dict(evidence.group_by("benchmark").len().iter_rows()) == {"gpt3": 35, "llama2_70b_lora": 122, "llama31_405b": 8, "llama31_8b": 39}
    assert set(evidence.filter(pl.col("benchmark") == "llama31_405b")["accelerator_group"]) == {"B200-SXM", "GB200", "GB300", "H200-SXM"}
    assert (evidence["mfu_with_attention"] > 0).all() and evidence["training"].is_in(["pretraining", "LoRA fine-tuning"]).all()
    # every score's global batch was logged: one step's compute on each accelerator is known, and its pipeline's share
    assert evidence["step_compute_s"].null_count() == 0 and (evidence["pipeline_efficiency"] <= 1).all()
    gpt3 = evidence.filter((pl.col("benchmark") == "gpt3") & (pl.col("accelerators") == 11_616)).row(0, named=True)
    # 2,904 sequences of 2,048 on 11,616 H100: 512 tokens a step on each, at 6 x 174.57B FLOPs a token plus attention's
    # 12 x 96 x 12,288 x 2,048, at 1,979 TFLOP/s
    assert gpt3["global_batch_tokens"] == 2904 * 2048
    assert gpt3["step_compute_s"] == pytest.approx((6 * 174.57e9 + 12 * 96 * 12288 * 2048) * 512 / 1979e12, rel=1e-6)


def test_the_cross_benchmark_backtest_meets_its_targets():
    backtest = _backtest()
    figures = backtest_figures(backtest)
    # the issue's targets: median error at most 20 %, the stated 90 % interval holding in 80 to 95 % of cases
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
    plan = _plan(Request(70e9, 70e9, 8192, "H100-SXM", accelerators=1024), 1e12)
    answer = plan.chosen
    assert answer is not None and answer.production is not None
    pace_, made = answer.pace, answer.production
    assert pace_.hours_low is not None and pace_.hours_high is not None and pace_.hours_low < pace_.hours < pace_.hours_high
    assert 5 * 24 < pace_.hours < 20 * 24  # days, as a 70B model on 10^12 tokens takes
    # a pretraining leans on the pretrainings measured on H100, the closest in size most: GPT-3 175B, then Llama 3.1 8B
    weights = {c.benchmark: c.weight for c in plan.pace.cells}
    assert set(weights) == {"gpt3", "llama31_8b"} and weights["gpt3"] > weights["llama31_8b"]
    # no precision named: 16 bits, said so, carried from the FP8 the H100's language models were measured at
    assert plan.pace.precision == "bf16" and plan.pace.precision_assumed and plan.pace.change is not None
    assert plan.pace.change.source == "fp8" and plan.power is not None
    # a production run on H100 takes longer than the MLPerf pace, by the factor public Hopper runs took
    assert plan.production is not None and plan.production.factor > 1 and "NVIDIA Hopper" in plan.production.leaned_on
    assert made.hours == pytest.approx(pace_.hours * plan.production.factor)
    assert pace_.energy_mwh is not None and pace_.accelerator_hours == pytest.approx(pace_.hours * 1024)
    # the batch public 70B runs used (3M to 17M tokens) keeps 8-way model-parallel replicas busy up to thousands of H100
    batch = plan.batch
    assert batch is not None and 3e6 < batch.tokens < 17e6 and not batch.given and "Llama-2-70B" in batch.basis
    assert batch.model_parallel == 8 and batch.largest_useful == batch.sequences * 8 and 2_000 < batch.largest_useful < 20_000


def test_accelerator_hours_grow_with_the_count_as_in_the_benchmarks():
    """The issue's check: 405B on 15T tokens on H100, hours at 16,384 over hours at 1,024 between 1.05 and 2.5 (gpt3 on H100
    lost x1.6 of its utilisation from 256 to 11,616 accelerators)."""
    hours = {n: _plan(Request(405e9, 405e9, 8192, "H100-SXM", accelerators=n), 15e12).chosen for n in (1024, 16384)}
    ratio = hours[16384].pace.accelerator_hours / hours[1024].pace.accelerator_hours
    assert 1.05 <= ratio <= 2.5
    # production runs lose efficiency with the count as the benchmarks do, if less: they keep part of the overhead's cost
    made = hours[16384].production.accelerator_hours / hours[1024].production.accelerator_hours
    assert 1.05 <= made <= ratio
    assert hours[16384].mfu < hours[1024].mfu and hours[16384].overhead_share > hours[1024].overhead_share
    # Meta's 405B at 16,384 H100 (16M-token batches): the production estimate's interval holds its reported 30.84M hours
    meta = _plan(Request(405e9, 405e9, 8192, "H100-SXM", accelerators=16384, global_batch_tokens=16e6), 15.6e12).chosen.production
    assert meta.accelerator_hours_low < 30.84e6 < meta.accelerator_hours_high


def test_a_deadline_no_count_can_meet_is_said_with_the_fastest_count():
    """The issue's check: 70B on 15T tokens in an hour: no count of millions, nothing promised."""
    plan = _plan(Request(70e9, 70e9, 8192, "H100-SXM"), 15e12, deadline_min=60)
    chosen = plan.chosen
    assert chosen is not None and chosen.accelerators <= plan.batch.largest_useful <= 200_000 and chosen.meets_deadline is False
    assert plan.why_chosen.startswith("no count meets the deadline: the fastest within the batch's bound of") and "nothing is promised" in plan.why_chosen
    assert chosen.production.hours > 24 * 7  # weeks, not an hour


@pytest.mark.parametrize(("request_", "far"), [
    (Request(3e12, 3e12, 8192, "H100-SXM"), "active parameters 3T is 17.2x beyond those measured (7.5B to 175B)"),
    (Request(37e9, 671e9, 8192, "H100-SXM"), "no mixture-of-experts language model measured on it: planned from the other kind"),
    (Request(70e9, 70e9, 128, "H100-SXM"), "sequence length 128 is 16.0x beyond those measured"),
    (Request(70e9, 70e9, 2048, "TPU v4"), "no language model measured on TPU v4: planned from every accelerator measured"),
    (Request(70e9, 70e9, 4096, "GH200"), "no language model measured on GH200: planned from its generation's, NVIDIA Hopper (H100-SXM, H200-SXM)"),
])
def test_far_from_the_evidence_the_answer_widens_and_says_why(request_, far):
    found = _pace(request_)
    assert found.mfu_compute is not None and found.refused == []
    assert any(far in reason for reason in found.far), found.far


def test_a_count_beyond_the_largest_measured_is_named_with_its_distance_and_widened():
    found = _pace(Request(70e9, 70e9, 8192, "H100-SXM"))
    assert found.largest_measured == 11_616 and found.count_beyond(11_616) == 1 and found.count_beyond(200_000) == pytest.approx(200_000 / 11_616)
    assert found.count_words(200_000) == ("200,000 accelerators is 17.2x beyond the largest count measured on NVIDIA Hopper (11,616): "
                                          "an extrapolation")
    from mlperf_scaling.tasks.planning.pace import Calibrated, CountBounds

    bounds, count = Calibrated(-0.3, 0.3, 10.0), CountBounds(-0.1, 0.2, 38)
    assert found.widened(bounds, count, 8_192) == found.widened(bounds)  # within the counts measured: as calibrated
    low, high = found.widened(bounds, count, 200_000)
    base_low, base_high = found.widened(bounds)
    assert high == pytest.approx(math.hypot(base_high, 0.2 * math.log(200_000 / 11_616))) and low < base_low


@pytest.mark.parametrize(("request_", "missing"), [
    (Request(70e9, 70e9, 8192, "A100-SXM", precision="fp8"), "A100's datasheet lists no fp8 peak"),
    (Request(70e9, 70e9, 8192, "XPU9"), "no datasheet for XPU9 (reference/accelerator_specs.tsv lists: A100-PCIe"),
])
def test_only_what_cannot_be_stated_is_refused(request_, missing):
    found = _pace(request_)
    assert found.mfu_compute is None
    assert any(missing in reason for reason in found.refused), found.refused


@pytest.mark.parametrize(("request_", "tokens", "message"), [
    (Request(405e9, 405e9, 8192, "H100-SXM", accelerators=8), 15e12, "405B parameters need about 6,480 GB of weights and optimiser state (16 "
                                                                      "bytes each); 8 H100-SXM hold"),
    (Request(70e9, 70e9, 8192, "H100-SXM"), 1e6, "--tokens 1M: fewer than one global batch"),
    (Request(70e9, 70e9, 8192, "H100-SXM"), 1, "--tokens 1: less than one sequence of 8,192 tokens"),
    (Request(1e30, 1e30, 8192, "H100-SXM"), 1e12, "--model-params 1e+30: beyond any model trained"),
    (Request(9e12, 9e12, 8192, "L4-PCIe"), 1e13, "9T parameters do not fit even at the largest model-parallel degree: 4,096 L4-PCIe"),
    (Request(70e9, 70e9, 8192, "H100-SXM", accelerators=1_000_000), 15e12, "1,000,000 H100-SXM is more than the global batch keeps busy: "),
    (Request(70e9, 70e9, 8192, "H100-SXM", global_batch_tokens=4096), 1e12, "--global-batch-tokens 4.1K: less than one sequence"),
])
def test_what_cannot_be_planned_is_one_line(request_, tokens, message):
    with pytest.raises(PlanError) as raised:
        _plan(request_, tokens)
    assert str(raised.value).startswith(message) and "\n" not in str(raised.value), str(raised.value)


def test_accelerators_are_resolved_as_people_type_them():
    evidence = _evidence()
    assert resolve_group(evidence, "h100 sxm") == "H100-SXM" and resolve_group(evidence, "B200") == "B200-SXM"
    assert resolve_group(evidence, "TPU-v5p") == "TPU v5p" and resolve_group(evidence, "tpu v4") == "TPU v4"
    assert resolve_group(evidence, "A100-SXM4-80GB") == "A100-SXM"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parameters=st.floats(1e8, 9e12), tokens=st.floats(1e9, 5e13), doublings=st.integers(0, 20), batch=st.one_of(st.none(), st.floats(1e5, 1e9)),
       group=st.sampled_from(["H100-SXM", "B200-SXM", "TPU v5p", "MI300X-OAM", "A100-SXM", "TPU v4", "GB300", "GH200", "V100-SXM"]),
       precision=st.sampled_from([None, "bf16", "fp8", "fp4", "int8"]))
def test_time_follows_the_work_and_no_interval_passes_the_peak(parameters, tokens, doublings, batch, group, precision):
    import warnings

    accelerators = 2**doublings
    request = Request(parameters, parameters, 8192, group, precision, accelerators, global_batch_tokens=batch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning on any input
        try:
            plan = _plan(request, tokens)
        except PlanError as refused:  # one line, naming what cannot be planned
            assert "\n" not in str(refused) and any(word in str(refused) for word in (
                "weights and optimiser state", "more than the global batch keeps busy", "fewer than one global batch", "less than one sequence",
                "do not fit even at the largest model-parallel degree")), str(refused)
            return
    if plan.refused:  # only what cannot be stated: a precision the chip lacks
        assert all("datasheet lists no" in reason for reason in plan.refused)
        return
    answer = plan.chosen
    assert answer is not None and plan.batch is not None and accelerators <= plan.batch.largest_useful
    assert answer.pace.hours_low is not None and answer.pace.hours_high is not None
    assert answer.pace.hours_low <= answer.pace.hours < answer.pace.hours_high
    # a utilisation and its interval never pass the physical peak: no time faster than every accelerator at its peak
    assert plan.mfu_high is not None and plan.mfu_high <= 1 and plan.pace.mfu_compute <= 1 and 0 < answer.mfu <= plan.pace.mfu_compute
    fastest = plan.flops / (accelerators * plan.pace.peak_tflops * 1e12) / 3600
    assert answer.pace.hours_low >= fastest * (1 - 1e-9)
    assert answer.production is None or (answer.production.hours_low or fastest) >= fastest * (1 - 1e-9)
    # never faster than its steps allow: each pays the overhead of its count
    steps = tokens / plan.batch.tokens
    assert answer.pace.hours * 3600 >= steps * plan.pace.overhead_s(accelerators) * (1 - 1e-9)
    # the production interval is never narrower than the pace's own: it is that pace times a factor
    if answer.production is not None and answer.production.hours_high is not None:
        assert answer.production.hours_high / answer.production.hours >= answer.pace.hours_high / answer.pace.hours * (1 - 1e-9)
    # twice the tokens, twice the time; twice the accelerators, never fewer accelerator-hours
    twice = _plan(request, 2 * tokens).chosen
    assert twice is not None and twice.pace.hours == pytest.approx(2 * answer.pace.hours)
    if 2 * accelerators <= plan.batch.largest_useful:
        more = _plan(Request(parameters, parameters, 8192, group, precision, 2 * accelerators, global_batch_tokens=batch), tokens).chosen
        assert more.pace.accelerator_hours >= answer.pace.accelerator_hours * (1 - 1e-9)


def test_a_deadline_is_met_on_the_production_intervals_slow_end():
    plan = _plan(Request(70e9, 70e9, 8192, "H100-SXM"), 1e12, deadline_min=30 * 1440)
    chosen = plan.chosen
    assert chosen is not None and chosen.meets_deadline and chosen.accelerators % 8 == 0 and chosen.production is not None
    assert chosen.production.hours_high is not None and chosen.production.hours_high * 60 <= 30 * 1440
    fewer = _plan(Request(70e9, 70e9, 8192, "H100-SXM", accelerators=chosen.accelerators - 8), 1e12, deadline_min=30 * 1440).chosen
    assert fewer is not None and fewer.meets_deadline is False  # the fewest whole nodes


@pytest.fixture(scope="module")
def v41_with_trends(v41_warehouse, tmp_path_factory) -> str:
    """The shipped v4.1 as `run` leaves it, its cross-round tables (transfer_backtest among them) computed too."""
    import shutil

    from mlperf_scaling.tasks.metrics.steps import compute_trends, write_trends
    from mlperf_scaling.tasks.planning.steps import plan_models

    copy = tmp_path_factory.mktemp("trends") / "v41.duckdb"
    shutil.copy(v41_warehouse, copy)
    write_trends.fn(str(copy), plan_models.fn(compute_trends.fn(str(copy))))
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
    assert {c["benchmark"] for c in document["leaned_on"]} == {"gpt3"}  # v4.1's pretraining on H100
    assert document["backtest"]["mlperf_pace"]["cases"] > 0 and document["refused"] == []
    assert document["backtest"]["production"]["runs"] >= 40 and document["production"]["factor"] > 1
    assert document["batch"]["largest_useful_accelerators"] >= 1024 and document["backtest"]["counts_never_seen"]["cases"] > 0
    assert math.isclose(pace["accelerator_hours"], pace["hours"] * 1024)

    assert main([*argv, "--accelerators", "1024", "--price-per-accelerator-hour", "2"]) == 0
    out = capsys.readouterr().out
    assert "At 1,024 H100-SXM (the count asked for): in production about" in out and "USD" in out and "MLPerf pace, backtested" in out
    assert "In production: x" in out and "each organisation left out" in out and "at most" in out and "are useful" in out
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
        ([*argv, "--accelerators", "1000000"], "1,000,000 H100-SXM is more than the global batch keeps busy"),
        ([*argv, "--global-batch", "64"], "--global-batch is a benchmark's batch in samples"),
        (["plan", "--model-params", "1e30", "--tokens", "1e12", "--accelerator", "H100-SXM"], "--model-params 1e+30: beyond any model trained"),
        (["plan", "--model-params", "70e9", "--tokens", "1e12", "--accelerator", "XPU9"], "no datasheet for XPU9"),
        # a name nearly a group's: said, with the group meant
        (["plan", "--model-params", "70e9", "--tokens", "1e12", "--accelerator", "MI300"],
         "no accelerator 'MI300' with a datasheet; did you mean MI300X-OAM?"),
        (["plan", "--model-params", "70e9", "--tokens", "1e12", "--accelerator", "H100-SXMM"],
         "no accelerator 'H100-SXMM' with a datasheet; did you mean H100-SXM?"),
        (["plan", "bert", "--global-batch-tokens", "4e6"], "--global-batch-tokens: for a model's plan"),
    ]:
        assert main([*bad, "--warehouse", warehouse] if "--warehouse" not in bad else bad) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mlperf-scaling: {message}") and err.count("\n") == 1


def test_published_names_resolve_to_their_group_and_a_slip_is_named():
    evidence = _evidence()
    for name, group in [("A100-SXM4-80GB", "A100-SXM"), ("H100-SXM5-80GB", "H100-SXM"), ("h100 sxm", "H100-SXM"),
                        ("H200-SXM-141GB", "H200-SXM"), ("A100-SXM4-40GB (400W)", "A100-SXM"), ("GB200 NVL72", "GB200"),
                        ("GB300-NVL72", "GB300")]:
        assert resolve_group(evidence, name) == group
    for slip, meant in [("H100-SXMM", "H100-SXM"), ("A100-SXMX", "A100-SXM")]:
        with pytest.raises(PlanError, match=f"did you mean {meant}"):
            resolve_group(evidence, slip)


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

    from mlperf_scaling.tasks.planning.datasheets import datasheet_of, memory_of

    evidence = _evidence()
    eighty = Request(70e9, 70e9, 8192, resolve_group(evidence, "A100-SXM4-80GB"), None, 24, accelerator_name="A100-SXM4-80GB")
    group = dataclasses.replace(eighty, accelerator_name=None)
    assert eighty.accelerator_group == "A100-SXM" and (memory_of(eighty, evidence), memory_of(group, evidence)) == (80, 40)
    # 70B x 16 bytes = 1,120 GB: 24 x 90 % of 80 GB holds it, 24 x 90 % of 40 GB does not
    answer = _plan(eighty, 2e12).chosen
    assert answer is not None and answer.pace is not None
    with pytest.raises(PlanError, match="at least 32 are needed"):
        _plan(group, 2e12)
    nvl = Request(70e9, 70e9, 8192, resolve_group(evidence, "H100 NVL"), None, 64, accelerator_name="H100 NVL")
    assert nvl.accelerator_group == "H100-PCIe"
    assert datasheet_of(nvl).peak_tflops["bf16"] == 835.5 and datasheet_of(nvl).memory_gb == 94
    assert datasheet_of(dataclasses.replace(nvl, accelerator_name=None)).peak_tflops["bf16"] == 756.5


def test_a_score_at_a_precision_the_chip_lacks_is_carried_at_the_usual_rate_of_bits():
    """TPU v4 has no FP4: a score measured at FP4 elsewhere is carried to 16 bits as on a chip whose FP4 runs 4x its BF16
    (between 1 and 4, at its middle: x2, with that spread), not at x1 as if FP4 were 16-bit utilisation."""
    from mlperf_scaling.tasks.planning.datasheets import datasheet_of_group
    from mlperf_scaling.tasks.planning.pace import carried_to
    from mlperf_scaling.tasks.planning.precision import PrecisionChanges

    rows = pl.DataFrame({"precision": ["fp4", "bf16"], "mfu_compute": [0.2, 0.4]})
    carried, change = carried_to(rows, "bf16", datasheet_of_group("TPU v4"), PrecisionChanges({}, {}))
    assert carried["mfu_compute"].to_list() == pytest.approx([0.4, 0.4])
    assert change is not None and change.factor == pytest.approx(2.0) and change.log_sd == pytest.approx(math.log(4) / math.sqrt(12))


def test_the_count_backtest_meets_the_issues_targets():
    """The largest counts of each benchmark and accelerator hidden and predicted from the smaller ones (gpt3 on H100 at
    3,072-11,616 from 256-1,536): median error at most 20 %, the stated interval holding 80 to 95 %."""
    scale = _scale()
    figures = backtest_figures(scale, held_out="benchmark")
    assert figures.cases >= 30 and figures.median_abs_error_pct is not None and figures.median_abs_error_pct <= 20
    assert figures.coverage is not None and 0.80 <= figures.coverage <= 0.95
    gpt3 = scale.filter((pl.col("benchmark") == "gpt3") & (pl.col("accelerator_group") == "H100-SXM"))
    assert gpt3["learnt_from"].unique().to_list() == ["256-1,536"] and gpt3["accelerators"].min() == 3_072 and gpt3["accelerators"].max() == 11_616
    assert (gpt3["count_beyond"] > 1).all() and (gpt3["largest_seen"] == 1_536).all()


def test_the_batch_bounds_the_count_and_the_pipeline_the_step():
    from mlperf_scaling.tasks.planning.batch import default_batch_tokens, pipeline_efficiency, plan_batch

    tokens, basis = default_batch_tokens(405e9)
    assert 4e6 < tokens < 64e6 and "Llama 3.1 405B 16M" in basis
    batch = plan_batch(Request(405e9, 405e9, 8192, "H100-SXM", global_batch_tokens=16 * 2**20), 80)
    assert (batch.sequences, batch.model_parallel, batch.largest_useful) == (2048, 64, 131_072)
    # one sequence per replica: a step is one sequence through every pipeline stage (64 = 8 wide x 8 deep)
    assert pipeline_efficiency(405e9, False, 80, 8192, 16 * 2**20, 131_072) == pytest.approx(1 / 8)
    # many micro-batches per replica: the pipeline computes nearly all the time
    assert pipeline_efficiency(405e9, False, 80, 8192, 16 * 2**20, 1024) > 0.99
