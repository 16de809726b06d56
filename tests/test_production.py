"""The production estimate: public production runs against the MLPerf pace, the factor that separates them, its
backtest with each organisation (and each architecture) left out, and the precision changes it carries."""

from __future__ import annotations

import functools
import math

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.reference.lookup import accelerator_spec, production_runs
from mlperf_scaling.tasks.planning.evidence import language_model_evidence
from mlperf_scaling.tasks.planning.precision import PrecisionChanges
from mlperf_scaling.tasks.planning.production import (
    ARCHITECTURE,
    ORGANISATION,
    estimate_factor,
    production_backtest,
    production_cases,
    production_figures,
    production_learnt,
    run_facts,
    without_runs,
)


@functools.cache
def _evidence() -> pl.DataFrame:
    from mlperf_scaling.tasks.metrics.context import result_context
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

    contexts = []
    for round_name in ("v3.1", "v4.0", "v4.1", "v5.1"):
        data, _ = read_shipped_round(round_name)
        contexts.append(result_context(data.scores, data.systems, data.energy, efficiency_table(data.scores)[0]))
    return language_model_evidence(pl.concat(contexts, how="diagonal_relaxed"))


@functools.cache
def _learnt():
    return production_learnt(_evidence())


@functools.cache
def _cases() -> pl.DataFrame:
    return production_cases(_learnt())


def test_every_public_run_is_sourced_and_planned():
    runs = production_runs()
    assert len(runs) == 64 and len({r.run for r in runs}) == 64
    for run in runs:
        assert run.source.startswith("https://") and run.accelerator_hours > 0 and 0 < run.active_parameters <= run.parameters
        facts = run_facts(run)
        assert facts is not None and 0 < facts.mfu < 1, run.run  # a reported run never beats its accelerators' peak
    # Meta's Llama 3.1 405B as its model card and paper give it
    llama = next(r for r in runs if r.run == "Llama 3.1 405B")
    assert (llama.accelerator_hours, llama.accelerators, llama.precision, llama.global_batch_tokens) == (30_840_000, 16_384, "bfloat16", 16e6)
    # a global batch where the developer states one, with where it is said
    assert sum(r.global_batch_tokens is not None for r in runs) >= 45
    # every row's evidence is dated; Phi-3-mini's as its card read after its June 2024 revision (10 days, 4.9T tokens)
    assert all(__import__("re").fullmatch(r"\d{4}-\d{2}-\d{2}", r.evidence_read) for r in runs)
    phi = next(r for r in runs if r.run == "Phi-3-mini")
    assert (phi.tokens, phi.evidence_read >= "2026-11-29") == (4.9e12, True)


def test_epoch_ai_rows_carry_its_attribution():
    text = (__import__("pathlib").Path(__file__).parents[1] / "mlperf_scaling" / "reference" / "production_runs.tsv").read_text()
    assert "Epoch AI" in text and "CC BY 4.0" in text
    rows = pl.read_csv(__import__("io").StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#"))), separator="\t",
                       infer_schema=False)
    assert rows.filter(pl.col("epoch_ai") == "yes")["notes"].str.contains("Epoch AI").all()


def test_every_run_has_its_mlperf_pace_and_factor():
    cases = _cases()
    # every run that reports its count, at that count (a pace is a pace at a count): 49 of the 64
    assert cases.height == 49 and cases["accelerators"].null_count() == 0
    assert {r.run for r in production_runs() if r.accelerators is None} & set(cases["run"]) == set()
    assert (cases["factor"] > 0).all() and (cases["pace_mfu"] <= 1).all() and (cases["production_mfu"] <= 1).all()
    # the TPU v3 and v4 and V100 runs have no language model measured on their generation: their pace is pooled; the GH200's
    # is its generation's (an H100's chip)
    assert set(cases.filter(pl.col("pace_pooled"))["architecture"]) == {"Google TPU v3", "Google TPU v4", "NVIDIA Volta", "NVIDIA Hopper"}
    assert cases.filter(pl.col("pace_pooled") & (pl.col("architecture") == "NVIDIA Hopper"))["run"].to_list() == ["Apertus 70B"]
    # Hopper's public runs took longer than the MLPerf pace of an H100 at their precision
    hopper = cases.filter(pl.col("architecture") == "NVIDIA Hopper")
    assert hopper.height == 10 and float(hopper["factor"].log().mean()) > 0
    # a small model on few accelerators keeps each busy: its pace is near its utilisation while computing
    tiny = cases.filter(pl.col("run") == "GPT-2 124M (nanoGPT, OpenWebText)").row(0, named=True)
    assert tiny["accelerators"] == 8 and 0.25 < tiny["pace_mfu"] < 0.6


def test_the_backtest_meets_the_issues_targets():
    backtest = production_backtest(_cases(), _learnt())
    figures = production_figures(backtest)
    # the issue's targets on runs never seen: median error at most 30 %, the 90 % interval holding 80 to 95 % of them
    assert figures.runs == 49 and figures.organisations >= 20
    assert figures.median_abs_error_pct is not None and figures.median_abs_error_pct <= 30
    assert figures.coverage is not None and 0.80 <= figures.coverage <= 0.95
    # a whole architecture left out is harder (the V100 runs of 2019 took three times the pace): wider, and still held.
    # 41 % on the labels before issue 54, 47 % on the corrected ones: Ampere's pace rests on one LoRA score carried to
    # pretraining by a change the relabelled FP4 cells now pull down (x1.16 to x1.07), and its runs took less than the
    # other architectures' factor says
    arch_error, covered, with_interval = figures.by_architecture
    assert arch_error is not None and arch_error <= 50 and covered / with_interval >= 0.80
    # Meta's Llama 3.1 405B, with every Meta run left out
    llama = backtest.filter(pl.col("left_out") == ORGANISATION, pl.col("run") == "Llama 3.1 405B").row(0, named=True)
    assert llama["covered"] and abs(llama["error_pct"]) < 30
    assert set(backtest["left_out"]) == {ORGANISATION, ARCHITECTURE}


def test_an_architecture_no_run_used_takes_the_pooled_factor_and_the_wider_interval():
    cases = _cases()
    hopper = estimate_factor(cases, 989.5, "bf16", False, "NVIDIA Hopper", 0.6, 0.5)
    mi300 = estimate_factor(cases, 1307.4, "bf16", False, "AMD CDNA 3", 0.6, 0.5)
    # the factor at another count moves with the pace's step overhead there, by the power the runs taught
    assert hopper.factor_at(0.5) == pytest.approx(hopper.factor) and hopper.factor_at(0.3) < hopper.factor
    assert hopper.architecture_runs == 10 and "10 public runs on NVIDIA Hopper" in hopper.leaned_on
    assert mi300.architecture_runs == 0 and "no public run on AMD CDNA 3" in mi300.leaned_on and mi300.basis == "each architecture left out"
    assert hopper.log_bounds is not None and mi300.log_bounds is not None


def test_precision_changes_are_learnt_where_measured():
    changes = _learnt().changes
    spec = accelerator_spec("B200", "SXM", 180).peak_tflops
    to_fp4 = changes.between("fp8", "fp4", spec)
    # v5.1's B200 and B300 runs at NVFP4 and FP8 side by side: FP4 utilisation is about half of FP8's
    assert "MLPerf results at both precisions" in to_fp4.basis and 0.35 < to_fp4.factor < 0.75
    to_bf16 = changes.between("fp8", "bf16", accelerator_spec("H100", "SXM", 80).peak_tflops)
    assert "public production runs" in to_bf16.basis and 1 < to_bf16.factor < 2


@given(source=st.sampled_from(["bf16", "fp8", "fp4", "int8"]), target=st.sampled_from(["bf16", "fp8", "fp4", "int8"]),
       peak=st.floats(10, 5000), ratio=st.floats(1.01, 8))
def test_an_unmeasured_change_lies_within_the_physical_bounds(source, target, peak, ratio):
    from mlperf_scaling.tasks.planning.precision import BITS

    peaks = {source: peak * (ratio if BITS[source] < BITS[target] else 1 / ratio if BITS[source] > BITS[target] else 1), target: peak}
    change = PrecisionChanges({}, {}).between(source, target, peaks)
    # the narrower precision runs between as fast as the wider one and as much faster as its peak is higher
    bound = peaks[source] / peaks[target]
    assert min(1.0, bound) - 1e-9 <= change.factor <= max(1.0, bound) + 1e-9
    assert change.log_sd >= 0 and (BITS[source] != BITS[target] or change.factor == 1)
    assert math.isfinite(change.log_sd)


@pytest.mark.parametrize("name", ["Llama 3 8B", "PaLM 540B", "DeepSeek-V3"])
def test_runs_are_read_on_their_datasheet(name):
    run = next(r for r in production_runs() if r.run == name)
    facts = run_facts(run)
    assert facts is not None
    assert (facts.accelerator_group, facts.precision) == {"Llama 3 8B": ("H100-SXM", "bf16"), "PaLM 540B": ("TPU v4", "bf16"),
                                                          "DeepSeek-V3": ("H100-SXM", "fp8")}[name]


def test_a_held_out_runs_pace_is_learnt_without_its_own_utilisation():
    """Hopper's BF16 runs teach the change from FP8 (MLPerf's precision on H100) to BF16: held out, a run's pace must
    come from that change learnt without its group's runs, or the backtest would lean on what it predicts."""
    cases, learnt = _cases(), _learnt()
    backtest = production_backtest(cases, learnt)
    meta = frozenset(cases.filter(pl.col("organisation") == "Meta AI")["run"].to_list())
    alone = production_cases(without_runs(learnt, meta), meta).sort("run")
    held = backtest.filter(pl.col("left_out") == ORGANISATION, pl.col("held_out") == "Meta AI").sort("run")
    assert held["run"].to_list() == alone["run"].to_list() and "Llama 3.1 405B" in held["run"].to_list()
    predicted_pace = (held["predicted_accelerator_hours"] / held["predicted_factor"]).to_list()
    assert predicted_pace == pytest.approx(alone["pace_accelerator_hours"].to_list(), rel=1e-12)
    # the row keeps the case as a plan uses it: the pace with every run
    everything = cases.filter(pl.col("run").is_in(list(meta))).sort("run")
    assert held["pace_accelerator_hours"].to_list() == everything["pace_accelerator_hours"].to_list()
    assert any(abs(a / b - 1) > 1e-6 for a, b in zip(predicted_pace, everything["pace_accelerator_hours"].to_list()))
    # a group that taught no change is predicted from the paces computed once
    eleuther = backtest.filter(pl.col("left_out") == ORGANISATION, pl.col("held_out") == "EleutherAI").sort("run")
    assert eleuther.height and (eleuther["predicted_accelerator_hours"] / eleuther["predicted_factor"]).to_list() == pytest.approx(
        eleuther["pace_accelerator_hours"].to_list(), rel=1e-12)
