"""The precision each run trained at: from its log under every spelling seen, the configuration it prints, its
configuration's name, the submitter's own word, and only then an assumption; MFU against that precision's peak."""

from pathlib import Path

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.reference.lookup import accelerator_spec, precision_statement, precision_statements
from mlperf_scaling.tasks.metrics.context import result_context, run_precision
from mlperf_scaling.tasks.parse.result_log import parse_log
from mlperf_scaling.tasks.parse.run_config import printed_configuration, run_configuration

EXCERPTS = Path(__file__).parent / "fixtures" / "logs" / "precision"


def _configuration(name: str):
    facts = parse_log((EXCERPTS / name).read_bytes())
    return run_configuration(facts.configuration, 8, None, facts.printed)


@pytest.mark.parametrize("name, precision, source", [
    # AMD's v6.0 logs spell the key without `_in_`
    ("v6.0_AMD_MI355X_EPYC_9575F_primus_llama2_70b_lora_result_0_excerpt.txt", "mxfp4", "log key lowest_numerical_precision_linear"),
    ("v6.0_AMD_MI350X_EPYC_9575F_primus_llama31_8b_result_0_excerpt.txt", "mxfp4", "log key lowest_numerical_precision_linear"),
    # NVFP4 under a config name without fp4: only the printed configuration says it
    ("v5.1_Nebius_nebius_b300_n1_llama2_70b_lora_result_1_excerpt.txt", "nvfp4", "the configuration the log prints: fp4 true, fp4_recipe nvfp4"),
    # FP8 although the dump prints `fp4_recipe: nvfp4` and `precision: bf16-mixed`
    ("v5.1_Dell_1xXE9780x8B300-SXM-270GB_llama2_70b_lora_result_4_excerpt.txt", "fp8", "the configuration the log prints: fp8 true"),
    ("v5.1_Oracle_2xBM.GPU.B200.8_flux1_result_0_excerpt.txt", "fp8", "the configuration the log prints: fp8 e4m3, fp8_recipe mxfp8"),
    ("v4.0_Oracle_8xBM.GPU.H100.8_stable_diffusion_result_1_excerpt.txt", "fp16", "the configuration the log prints: precision: 16"),
    # BERT prints its arguments, wrapped over lines behind the rank: Transformer Engine's encoder is FP8 whatever fp16=True says
    ("v4.1_Lambda_lambda_1cc_n2_H100-SXM-80GB_ngc24.04_nemo_bert_result_240928162719380693721_01_excerpt.txt", "fp8",
     "the arguments the log prints: use_transformer_engine2=True (BERT's encoder built from Transformer Engine layers under fp8_autocast)"),
    # an L40S run whose arguments say use_transformer_engine2=False: FP16, where the config matched by its shape had said FP8
    ("v4.0_Fujitsu_PRIMERGY-CDI-L40Sx16_bert_result_0_excerpt.txt", "fp16", "the arguments the log prints: fp16=True"),
    ("v2.1_Dell_XE8545x4A100-SXM-80GB_dlrm_result_0_excerpt.txt", "fp16", "HugeCTR's log: Use mixed precision: True (FP16 with a loss scaler)"),
])
def test_real_logs_say_their_precision(name, precision, source):
    configuration = _configuration(name)
    assert (configuration.precision_linear, configuration.precision_source) == (precision, source)


def test_the_rules_spelling_is_read_too():
    line = (':::MLLOG {"namespace": "", "time_ms": 1, "event_type": "POINT_IN_TIME", "key": "lowest_numerical_precision_in_linear", '
            '"value": "nvfp4", "metadata": {"file": "train.py", "lineno": 1}}\n')
    facts = parse_log(line.encode())
    assert run_configuration(facts.configuration, 8, None, facts.printed).precision_source == "log key lowest_numerical_precision_in_linear"


def test_the_printed_config_name_is_read_when_the_dump_is_silent():
    text = ":::DLPAL /images/llama.sqsh 712 1 worker-0 'unknown' DGXB200_1x8x1xtp1pp1cp1_fp4\n"
    printed = printed_configuration(text)
    assert printed is not None and printed.precision is None and printed.config_name == "DGXB200_1x8x1xtp1pp1cp1_fp4"
    configuration = run_configuration({}, 8, None, printed)
    assert (configuration.precision_linear, configuration.precision_source) == ("fp4", "config name DGXB200_1x8x1xtp1pp1cp1_fp4")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=400))
def test_any_text_prints_at_most_one_precision_of_the_rules(text):
    printed = printed_configuration(text)
    assert printed is None or printed.precision in (None, "nvfp4", "mxfp4", "fp8", "fp16", "bfloat16")


def test_every_statement_is_sourced_and_in_the_rules_vocabulary():
    for said in precision_statements():
        assert said.kind in ("configuration", "statement") and said.source.startswith("https://") and said.quote
        assert said.precision in ("fp8", "nvfp4", "mxfp4", "int8", "bfloat16", "fp16")


def test_nvidia_v51_runs_are_scored_at_the_precision_their_config_names():
    said = precision_statement("v5.1", "NVIDIA", "theia_ngpu512_ngc25.09_nemo", "llama31_405b", "GB300")
    assert said is not None and said.precision == "nvfp4" and "config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh" in said.quote
    # its LoRA ran in NVFP4 at 8 GPUs only, FP8 at 72 and 512
    assert precision_statement("v5.1", "NVIDIA", "theia_ngpu8_ngc25.09_nemo", "llama2_70b_lora", "GB300").precision == "nvfp4"
    assert precision_statement("v5.1", "NVIDIA", "theia_ngpu72_ngc25.09_nemo", "llama2_70b_lora", "GB300").precision == "fp8"


def test_an_assumption_is_the_last_resort_and_says_so():
    spec = accelerator_spec("H100", "SXM", 80)
    assumed = run_precision(None, None, "v4.1", "Dell", "XE9680x8H100-SXM-80GB", "gpt3", "H100", spec, True)
    assert (assumed.precision, assumed.source) == ("fp8", "assumed") and "say nothing" in assumed.evidence
    logged = run_precision("mxfp4", "log key lowest_numerical_precision_linear", "v6.0", "AMD", "x", "llama31_8b", "MI350X", spec, True)
    assert (logged.precision, logged.source) == ("mxfp4", "log")
    google = run_precision(None, None, "v4.1", "Google", "cloud-tpu-v5p-8192-maxtext", "gpt3", "TPU v5p", accelerator_spec("TPU v5p", "board", 95), True)
    assert (google.precision, google.source) == ("int8", "config name") and "quantization=int8" in google.evidence


def _context(round_name: str) -> pl.DataFrame:
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

    data, _ = read_shipped_round(round_name)
    return result_context(data.scores, data.systems, data.energy, efficiency_table(data.scores)[0])


def test_v51_language_models_are_scored_at_the_precision_they_used():
    context = _context("v5.1")
    gb300 = context.filter(pl.col("system") == "theia_ngpu512_ngc25.09_nemo", pl.col("benchmark") == "llama31_405b").row(0, named=True)
    # the system's README names config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh, which sources config_common_fp4.sh (FP4=True)
    assert (gb300["precision"], gb300["precision_source"], gb300["peak_precision"]) == ("nvfp4", "config file", "fp4")
    assert "config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh" in gb300["implementation_config"] and "FP4=True" in gb300["precision_evidence"]
    assert gb300["mfu"] == pytest.approx(0.22, abs=0.01) and gb300["achieved_over_16bit_peak"] > 1  # not a utilisation
    nebius = context.filter(pl.col("submitter") == "Nebius", pl.col("system") == "nebius_b300_n1", pl.col("benchmark") == "llama2_70b_lora")
    assert nebius.row(0, named=True)["precision"] == "nvfp4" and nebius.row(0, named=True)["precision_source"] == "log"
    # no MFU above the physical peak, and each missing MFU says why
    assert context.filter(pl.col("mfu") > 1).height == 0
    assert context.filter(pl.col("mfu").is_null() & pl.col("achieved_tflops_per_accelerator").is_not_null() & pl.col("mfu_note").is_null()).height == 0


def test_google_tpu_gpt3_is_scored_at_int8():
    context = _context("v4.1")
    tpu = context.filter(pl.col("submitter") == "Google", pl.col("benchmark") == "gpt3")
    assert tpu.height == 7 and set(tpu["precision"]) == {"int8"} and set(tpu["peak_precision"]) == {"int8"}
    assert tpu["mfu"].max() < 0.5


def test_amd_v60_logs_are_scored_at_mxfp4_against_the_fp4_peak(tmp_path):
    """Real v6.0 logs (tests/fixtures/rounds/training_results_v6.0): AMD spells the key `..._precision_linear` and
    trained in MXFP4; the MFU is against the datasheet's FP4 peak and the 16-bit figure is named apart."""
    from conftest import fixture_round, score_stream

    from mlperf_scaling.tasks.metrics.context import result_context
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    folder = fixture_round("v6.0", tmp_path)
    with open_source(resolve_source(str(folder))) as stream:
        data = score_stream(stream, "v6.0")
    scores = data.scores.sort("system")
    assert scores["system"].to_list() == ["MI350X_EPYC_9575F_primus", "MI355X_EPYC_9575F_primus"]
    # three runs each: olympic scoring drops the fastest and the slowest, leaving the middle run
    # (MI350X 587.343 s of 586.506/587.343/587.941; MI355X 475.076 s of 474.955/475.076/553.034)
    assert scores["time_to_train_min"].to_list() == pytest.approx([587.343 / 60, 475.076 / 60], abs=1e-9)
    assert set(scores["status"]) == {"scored_incomplete"}
    efficiency, _ = efficiency_table(data.scores)
    context = result_context(data.scores, data.systems, data.energy, efficiency).sort("system")
    assert context["accelerator_group"].to_list() == ["MI350X-OAM", "MI355X-OAM"]
    assert context["precision"].to_list() == ["mxfp4", "mxfp4"]
    assert set(context["precision_source"]) == {"log"}
    assert set(context["precision_evidence"]) == {"log key lowest_numerical_precision_linear"}
    mfu = context["mfu"].to_list()
    assert all(0.1 < m < 0.3 for m in mfu)
    # the same work against the 16-bit peak: MI350X 2.3 of 9.2 PF, MI355X 2.5 of 10.1 PF (AMD's dense figures)
    ratios = [m / a for m, a in zip(mfu, context["achieved_over_16bit_peak"].to_list())]
    assert ratios == pytest.approx([2300 / 9200, 2500 / 10100], rel=1e-9)


_DUMP_LINES = ["0:   fp8: true", "  fp8: hybrid", "fp8: false", "fp4: true", "  fp4: null", "fp4_recipe: mxfp4", "0: fp8_recipe: mxfp8",
               "Config(fp4='e2m1', fp8=None, fp4_recipe='nvfp4')", "model(fp8='hybrid', fp8_recipe='mxfp8')", "precision: bf16-mixed",
               "  unet_precision: fp16", "precision: 16", "FP8: TRUE", "Fp4_Recipe: NVFP4", "x fp8: true", "çfp8: true", "fp8:true  ",
               ":::DLPAL /w/config_DGXH100_8x8x1.sh 12 config_DGXH100_8x8x1", "Config shell script: conf/config_MI355X_1x8x1.sh", "", "  ", "\t"]


@given(st.lists(st.one_of(st.sampled_from(_DUMP_LINES), st.text(max_size=20)), max_size=14))
def test_searching_only_the_lines_that_hold_the_word_finds_what_a_search_of_the_whole_head_finds(lines):
    """The configuration dump is searched line by line where the pattern's word is (speed); the answer must be the
    whole-text search's: the same first value, and the same matched text but for the blank lines before it."""
    import mlperf_scaling.tasks.parse.run_config as rc

    text = "\n".join(lines)
    head = rc._Head(text)
    for pattern, word in ((rc._DUMP_FP4, "fp4"), (rc._DUMP_FP8, "fp8"), (rc._DUMP_FP4_RECIPE, "fp4_recipe"),
                          (rc._DUMP_FP8_RECIPE, "fp8_recipe"), (rc._DUMP_SIXTEEN, "precision")):
        whole, by_line = pattern.search(text), head.search(pattern, word)
        assert (whole is None) == (by_line is None), (pattern.pattern, text)
        if whole is not None:
            assert whole.groups() == by_line.groups() and whole.group(0).strip() == by_line.group(0).strip()


def test_the_assumed_sixteen_bits_are_the_chips_and_the_models():
    """Where nothing says it: a vision, speech or recommendation model on an NVIDIA or AMD GPU ran FP16 AMP (MLPerf's GPU
    implementations, as the hand-read v2.0 and v3.0 logs print it), a language model without FP8 BF16, a TPU or Gaudi
    BF16, and MiniGo TensorFlow's 32-bit default (TF32 on an A100, FP32 on a V100)."""
    h100, a100, tpu = accelerator_spec("H100", "SXM", 80), accelerator_spec("A100", "SXM", 80), accelerator_spec("TPU v4", "board", 32)
    assert run_precision(None, None, "v3.0", "GIGABYTE", "G593-SD0", "bert", "H100", h100, False).precision == "fp16"
    assert run_precision(None, None, "v2.1", "NVIDIA", "dgxa100", "gpt3", "A100", a100, True).precision == "bfloat16"
    assert run_precision(None, None, "v2.0", "Google", "tpu-v4", "resnet", "TPU v4", tpu, False).precision == "bfloat16"
    assert run_precision(None, None, "v3.0", "Intel-HabanaLabs", "HLS-Gaudi2-PT", "bert", "Gaudi2",
                         accelerator_spec("Gaudi2", "OAM", 96), False).precision == "bfloat16"
    assert run_precision(None, None, "v2.0", "ASUSTeK", "x", "minigo", "A100", a100, False).precision == "tf32"
    assert run_precision(None, None, "v0.7", "x", "x", "minigo", "V100", accelerator_spec("V100", "SXM", 32), False).precision == "fp32"
