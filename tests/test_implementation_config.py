"""The submission's own word: each result's precision read from the config files its submitter published beside the
results (tasks/parse/implementation.py), matched to the result (tasks/parse/config_match.py), and scored at it."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given, settings
from hypothesis import strategies as st

from mlperf_scaling.tasks.metrics.context import Phases, RunPrecision, hardware_of, result_context
from mlperf_scaling.tasks.parse.config_match import ResultClues, match_config
from mlperf_scaling.tasks.parse.implementation import implementation_configs
from mlperf_scaling.tasks.parse.shell_config import ShellFiles
from mlperf_scaling.tasks.source.archive import archive_members
from mlperf_scaling.tasks.source.companion import companion_of, with_companion
from mlperf_scaling.tasks.source.resolve import resolve_source, source_version

LORA = "Dell/benchmarks/llama2_70b_lora/implementations/nemo"
# Dell's v5.1 files as published (mlcommons/training_results_v5.1), cut to the lines that matter
DELL_LORA = {
    f"{LORA}/config_1xXE9680Lx8B200-SXM-180GB.sh": (
        "#!/bin/bash\n\nsource $(dirname ${BASH_SOURCE[0]})/config_common.sh\nsource $(dirname ${BASH_SOURCE[0]})/config_common_fp4.sh\n\n"
        "# hyperparameters\nexport MAX_STEPS=700\nexport LR=0.0006\nexport MINIBS=2\nexport CP=2\nexport MCORE_CUDA_GRAPH=1\n\n"
        "export HEALING_ITER=350\n\n# system parameters\nexport DGXNNODES=1\nexport DGXNGPU=8\n"),
    f"{LORA}/config_common.sh": "export TP=1\nexport PP=1\nexport FP8=True\nexport FP8_AMAX_ALGO=max\nexport FP8_REDUCE_AMAX=True\n",
    f"{LORA}/config_common_fp4.sh": ('export FP4=True\nexport FP8=False\nexport FP8_PARAM_GATHER=0\nexport FP4_RECIPE="nvfp4"\nexport FP4_PARAM=False\n\n'
                                     'export HEALING_PRECISION="FP8_DS" # Options: FP8_DS, MXFP8\n'),
    f"{LORA}/config_DGXB200_8x8x1xtp1pp1cp8.sh": "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\nexport DGXNNODES=8\nexport DGXNGPU=8\n",
    f"{LORA}/config_MI300X_1x8x1.sh": "export FP8=True\nexport DGXNNODES=1\n",
    f"{LORA}/config_2xXE9680Lx8B200-SXM-180GB_2x8x1xtp1pp1cp1.sh": "source $(dirname ${BASH_SOURCE[0]})/config_common.sh\nexport DGXNNODES=2\n",
}


def _configs(files: dict[str, str]):
    return {config.path.rsplit("/", 1)[-1]: config for config in implementation_configs(files)}


def test_a_config_is_read_as_the_shell_reads_it_through_the_files_it_sources():
    variables, absent = ShellFiles(DELL_LORA).read(f"{LORA}/config_1xXE9680Lx8B200-SXM-180GB.sh", (LORA, "Dell/benchmarks/llama2_70b_lora"))
    assert absent == []
    # config_common.sh sets FP8=True; config_common_fp4.sh, sourced after it, sets FP8=False: the later wins
    assert (variables["FP8"].value, variables["FP8"].path.rsplit("/", 1)[-1], variables["FP8"].line) == ("False", "config_common_fp4.sh", 2)
    reading = _configs(DELL_LORA)["config_1xXE9680Lx8B200-SXM-180GB.sh"].precision
    assert (reading.precision, reading.recipe, reading.phases) == ("nvfp4", "nvfp4", (("nvfp4", 0), ("fp8", 350)))
    assert "config_common_fp4.sh:1 FP4=True" in reading.evidence and "HEALING_ITER" in reading.evidence
    assert _configs(DELL_LORA)["config_DGXB200_8x8x1xtp1pp1cp8.sh"].precision.precision == "fp8"
    settings = _configs(DELL_LORA)["config_1xXE9680Lx8B200-SXM-180GB.sh"].settings
    assert settings == {"tensor_parallelism": 1, "pipeline_parallelism": 1, "context_parallelism": 2, "micro_batch_size": 2}


def test_the_lowest_precision_a_config_states_wins_and_run_scripts_give_the_default():
    bert = "NVIDIA/benchmarks/bert/implementations/pytorch"
    files = {
        # NVIDIA's BERT: --fp16 in every run, and Transformer Engine layers under fp8_autocast where a config asks
        f"{bert}/run_and_time.sh": 'PARAMS=(\n      --fp16  \\\n      --max_seq_length=512\n)\n[ "$BF16" = 1 ] && ARGS+=" --bf16"\n',
        f"{bert}/config_DGXH100_1x8x48x1_pack.sh": "export EXTRA_PARAMS='--dense_seq_output --use_transformer_engine2 --fp16'\nexport DGXNNODES=1\n",
        f"{bert}/config_DGXH100_434x8x2x1_pack_clipafter.sh": "export EXTRA_PARAMS='--use_cuda_graph --pad_fmha'\nexport DGXNNODES=434\n",
    }
    configs = _configs(files)
    assert configs["config_DGXH100_1x8x48x1_pack.sh"].precision.precision == "fp8"
    eos = configs["config_DGXH100_434x8x2x1_pack_clipafter.sh"]
    # the conditional `--bf16` line is no statement; the unconditional --fp16 is
    assert (eos.precision.precision, eos.from_scripts) == ("fp16", True) and "run_and_time.sh:2" in eos.precision.evidence


def test_an_unpublished_file_or_an_option_left_open_is_not_read_as_16_bits():
    lora = "Lambda/benchmarks/llama31_8b/implementations/gb300"
    files = {f"{lora}/config_GB300_18x4x1xtp1pp1cp2_8b.sh": "source $(dirname ${BASH_SOURCE[0]})/config_GB200_18x4x1xtp1pp1cp2_8b.sh\n",
             f"{lora}/conf/custom.yaml": "  precision: bf16\n",
             f"{lora}/config_GB200_2x4x1.sh": "export FP8=True\nexport DGXNNODES=2\n"}
    lambda_config = _configs(files)["config_GB300_18x4x1xtp1pp1cp2_8b.sh"].precision
    assert lambda_config.precision is None and "which is not there" in lambda_config.evidence
    # Habana's v3.1 GPT-3 launcher passes --bf16, and FP8 when called with -te: which it was is not in the file
    habana = {"Intel-HabanaLabs/benchmarks/gpt3/Megatron-DeepSpeed/run_gpt.sh":
              '            -te | --use-fp8-transformer-engine )\n                TRANSFORMER_ENGINE_FLAG="--use-hpu-fp8-transformer-engine"\n'
              "    --bf16 \\\n    --hpu-fp8-measure-interval $FP8_MEASURE_INTERVAL \\\n"}
    assert implementation_configs(habana) == []


def test_only_what_runs_whatever_happens_is_read():
    root = "Anyone/benchmarks/llama31_8b/implementations/nemo"
    files = {
        # both branches of an `if` set FP8: neither is what ran; a here-document and an echo are text; TP=² is no count
        f"{root}/config_DGXB200_1x8x1.sh": ('if [[ "$X" == 1 ]]; then\n  export FP8=True\nelse\n  export FP8=False\nfi\n'
                                           'cat << EOF\nfor more, export FP4=True\nEOF\necho "export FP4=True"\n'
                                           "export TP=\u00b2\nexport PP=" + "9" * 5000 + "\nexport A=1; export MINIBS=2\nexport DGXNNODES=1\n"),
        # a config that turns off the FP8 its run scripts' YAML turns on
        f"{root}/config_DGXB200_2x8x1.sh": "export FP8=False\nexport DGXNNODES=2\n",
        f"{root}/conf/custom.yaml": "model:\n  fp8: true\n",
    }
    configs = _configs(files)
    first = configs["config_DGXB200_1x8x1.sh"]
    assert first.precision.precision == "fp8" and first.from_scripts and first.settings == {}
    off = configs["config_DGXB200_2x8x1.sh"].precision
    assert off.precision is None and "FP8=False" in off.evidence and "turns off" in off.evidence


def test_v21_supermicros_layout_and_a_launchers_cluster_settings():
    files = {
        # benchmarks/implementations/<system>/<benchmark>/ (Supermicro, training_results_v2.1)
        "Supermicro/benchmarks/implementations/AS-4124GS/resnet/config_AS-4124GS.sh": "export DGXNNODES=1\n",
        "Supermicro/benchmarks/implementations/AS-4124GS/resnet/run_and_time.sh": 'PARAMS=(\n      --dtype              "float16"\n)\n',
        # a launcher sources the cluster's settings and the system configs: the settings are no system's config
        "UF/benchmarks/flux1/implementations/hpg/flux_training_scale.sh": "source config_hpg.sh\nsource config_DGXB200_02x08x32.sh\n",
        "UF/benchmarks/flux1/implementations/hpg/config_hpg.sh": "export SLURM_PARTITION=hpg\n",
        "UF/benchmarks/flux1/implementations/hpg/config_DGXB200_02x08x32.sh": 'export FP8_RECIPE="mxfp8"  # Use FP8 on Blackwell\n',
    }
    configs = implementation_configs(files)
    assert {(c.benchmark_folder, c.name, c.precision.precision) for c in configs} == {
        ("resnet", "AS-4124GS", "fp16"), ("flux1", "DGXB200_02x08x32", "fp8")}


def test_accelerators_are_named_not_guessed_from_part_numbers():
    from mlperf_scaling.tasks.parse.config_match import named_accelerators

    assert named_accelerators("AS-A126GS-TNBR_1x8x6912") == set() and named_accelerators("Blackwell_llama31_8b") == set()
    assert named_accelerators("c885a01x8H200-SXM-141GB_001x08x40") == {"h200"} and named_accelerators("DGXB200_1x8") == {"b200"}
    assert named_accelerators("GB200_18x4") == {"gb200"} and named_accelerators("L40Sx16") == {"l40s"} and named_accelerators("hpg.dgxb200x8") == {"b200"}
    both = implementation_configs({"X/benchmarks/bert/implementations/p/config_L40S_1x8.sh": "export EXTRA_PARAMS='--use_transformer_engine2'\n",
                                   "X/benchmarks/bert/implementations/p/config_L4_1x8.sh": "export EXTRA_PARAMS='--fp16'\n"})
    l4 = match_config(both, _clues("l4box", "NVIDIA L4"))
    assert l4 is not None and (l4.config.name, l4.config.precision.precision) == ("L4_1x8", "fp16")


def _clues(system, accelerator, nodes=1, per_node=8, printed=(), readme=()):
    return ResultClues(system, tuple(printed), accelerator, nodes, per_node, tuple(readme))


def test_a_result_is_matched_to_its_config_by_the_clues_or_not_at_all():
    configs = implementation_configs(DELL_LORA)
    dell = match_config(configs, _clues("1xXE9680Lx8B200-SXM-180GB", "NVIDIA Blackwell GPU (B200-SXM-180GB)"))
    assert dell is not None and dell.config.name == "1xXE9680Lx8B200-SXM-180GB" and "named for the system" in dell.how
    # the log's name with a typo (280GB for 180GB: Dell's v5.1 `:::DLPAL` line) still finds its file
    typo = match_config(configs, _clues("x", "NVIDIA Blackwell GPU (B200-SXM-180GB)", printed=["2xXE9680Lx8B200-SXM-280GB_2x8x1xtp1pp1cp1"]))
    assert typo is not None and typo.config.name == "2xXE9680Lx8B200-SXM-180GB_2x8x1xtp1pp1cp1" and "nearly named in the log" in typo.how
    # the only MI300X config is no config of a GB200 system (Dell's v5.0 LoRA)
    amd_only = [c for c in configs if c.name.startswith("MI300X")]
    assert match_config(amd_only, _clues("4xXE9712x4GB200", "NVIDIA GB200", 4, 4)) is None
    assert match_config(amd_only, _clues("1xXE9680x8MI300X", "AMD Instinct MI300X 192GB HBM3")) is not None
    # FP4 and FP8 configs both fit an H100 system by nothing: no guess
    assert match_config([c for c in configs if "MI300X" not in c.name], _clues("somewhere", "NVIDIA H100-SXM5-80GB", 2, 8)) is None


def test_the_readme_of_a_system_names_its_config():
    configs = implementation_configs(DELL_LORA)
    named = match_config(configs, _clues("theia", "NVIDIA GB300", 8, 8, readme=["DGXB200_8x8x1xtp1pp1cp8"]))
    assert named is not None and named.config.precision.precision == "fp8" and "README" in named.how


_SHELL_LINE = st.one_of(
    st.sampled_from(["export FP8=True", "export FP4=True", "FP8=False", "export FP4_RECIPE=mxfp4", "export HEALING_ITER=350",
                     "source $(dirname ${BASH_SOURCE[0]})/config_common.sh", "source config_missing.sh", "export EXTRA_PARAMS='--fp16'",
                     "--bf16 \\", "  precision: 16", "export TP=${TP:-4}", "export MINIBS=", "if [[ $FP8 == 1 ]]; then", "fi"]),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["config_DGXB200_1x8x1.sh", "config_common.sh", "run_and_time.sh", "conf/custom.yaml",
                                        "config_GB200_2x4x2_fp4.sh", "README.md"]),
                       st.lists(_SHELL_LINE, max_size=12).map("\n".join), max_size=6))
def test_any_files_give_a_precision_of_the_rules_or_none(files):
    root = "Anyone/benchmarks/llama31_8b/implementations/nemo"
    for config in implementation_configs({f"{root}/{name}": text for name, text in files.items()}):
        assert config.precision.precision in (None, "nvfp4", "mxfp4", "fp8", "int8", "fp16", "bfloat16")
        assert (config.precision.precision is None) or config.precision.evidence
        phases = config.precision.phases
        assert phases == () or (len(phases) == 2 and phases[0][1] == 0 and phases[1][1] > 0)


def test_a_run_at_two_precisions_is_measured_against_the_step_weighted_peak():
    from mlperf_scaling.reference.lookup import accelerator_spec

    spec = accelerator_spec("B200", "SXM", 180)
    fp4, fp8 = spec.peak_tflops["fp4"], spec.peak_tflops["fp8"]
    precision = RunPrecision("nvfp4", "config file", "x")
    # 350 steps at FP4, then 34 at FP8: the time both take at their own peaks
    both = hardware_of(spec, precision, Phases("nvfp4", "fp8", 350, 384.0))
    assert both["peak_tflops"] == pytest.approx(384 / (350 / fp4 + 34 / fp8)) and both["peak_precision"] == "fp4+fp8"
    assert fp8 < both["peak_tflops"] < fp4
    # converged before the switch: FP4 throughout
    assert hardware_of(spec, precision, Phases("nvfp4", "fp8", 350, 300.0))["peak_tflops"] == fp4
    assert "before the switch" in Phases("nvfp4", "fp8", 350, 300.0).words()


def _context(round_name: str) -> pl.DataFrame:
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

    data, _ = read_shipped_round(round_name)
    return result_context(data.scores, data.systems, data.energy, efficiency_table(data.scores)[0])


# Read by hand from the submitters' files (../shared/mlperf/training_results_vX.Y.configs.tar.xz), each with what says it
HAND_READ = [
    # config_1xXE9680Lx8B200-SXM-180GB.sh sources config_common_fp4.sh: FP4=True FP4_RECIPE="nvfp4"
    ("v5.1", "Dell", "1xXE9680Lx8B200-SXM-180GB", "llama2_70b_lora", "nvfp4"),
    ("v5.1", "Dell", "1xXE9680Lx8B200-SXM-180GB", "llama31_8b", "nvfp4"),
    # Lenovo's only llama31_8b config, config_SR780aV3_SR680aV3_SR680aV4.sh, sources config_common_fp4.sh
    ("v5.1", "Lenovo", "SR680aV3-8xB200_SXM_180GB", "llama31_8b", "nvfp4"),
    ("v5.1", "Lenovo", "SR780aV3-8xB200_SXM_180GB", "llama31_8b", "nvfp4"),
    ("v5.1", "Lenovo", "SR680aV4-8xB300_SXM", "llama31_8b", "nvfp4"),
    # hpg.dgxb200x8/config_DGXB200_02x08x32.sh: FP8_RECIPE="mxfp8"
    ("v5.1", "University-of-Florida", "hpg.dgxb200x8.n2", "flux1", "fp8"),
    ("v5.1", "University-of-Florida", "hpg.dgxb200x8.n9", "flux1", "fp8"),
    # README-theia_ngpu512_ngc25.09_nemo.md names config_GB300_128x4x72xtp2pp8cp2_cg_fp4.sh
    ("v5.1", "NVIDIA", "theia_ngpu512_ngc25.09_nemo", "llama31_405b", "nvfp4"),
    # config_common.sh FP8=True, no fp4 file sourced at 72 GPUs
    ("v5.1", "NVIDIA", "theia_ngpu72_ngc25.09_nemo", "llama2_70b_lora", "fp8"),
    # retinanet EXTRA_PARAMS --master-weights --frozen-bn-fp16 (AMP on by default in train.py)
    ("v5.1", "NVIDIA", "tyche_ngpu8_ngc25.04_pytorch", "retinanet", "fp16"),
    # run/run.sub: --bf16 True (Hugging Face accelerate + DeepSpeed)
    ("v4.0", "JuniperNetworks", "h100_n1_ngc24.1_pytorch_deepspeed", "llama2_70b_lora", "bfloat16"),
    ("v4.0", "JuniperNetworks", "h100_n4_ngc24.1_pytorch_deepspeed", "llama2_70b_lora", "bfloat16"),
    # run_and_time.sh: --dtype "float16"
    ("v4.0", "NVIDIA", "eos_n8_ngc24.04_mxnet", "resnet", "fp16"),
    # config_DGXH100_common.sh: EXTRA_PARAMS with --use_transformer_engine2
    ("v4.1", "NVIDIA", "eos_ngc23.04_pytorch", "bert", "fp8"),
    # v5p-*.sh: quantization=int8
    ("v4.0", "Google", "cloud-tpu-v5p-1024-maxtext", "gpt3", "int8"),
    # config_fp8.sh: FP8=True
    ("v3.1", "NVIDIA", "eos_n64_ngc23.09_nemo", "gpt3", "fp8"),
    # config_common_benchmark.sh: AMP_LVL=2
    ("v3.1", "NVIDIA", "eos_n8_ngc23.04_pytorch", "rnnt", "fp16"),
]


@pytest.fixture(scope="module")
def contexts() -> dict[str, pl.DataFrame]:
    return {round_name: _context(round_name) for round_name in ("v3.1", "v4.0", "v4.1", "v5.1")}


def test_the_hand_read_list_agrees(contexts):
    found = []
    for round_name, submitter, system, benchmark, precision in HAND_READ:
        row = contexts[round_name].filter(pl.col("submitter") == submitter, pl.col("system") == system, pl.col("benchmark") == benchmark)
        assert row.height == 1, (round_name, submitter, system, benchmark)
        found.append((row["precision"][0], row["precision_source"][0]))
        assert (row["precision"][0], row["precision_source"][0]) in ((precision, "config file"), (precision, "log")), (system, benchmark, found[-1])


def test_few_results_rest_on_an_assumption_and_none_passes_the_peak(contexts):
    rows = pl.concat([frame.select("precision_source", "mfu", "precision_phases", "system", "benchmark") for frame in contexts.values()])
    sources = rows["precision_source"].value_counts().to_dicts()
    counts = {row["precision_source"]: row["count"] for row in sources}
    assert counts.get("assumed", 0) <= 0.10 * rows.height, counts
    # the submitters' own word (log, config file, config name, statement) for most
    own = sum(counts.get(kind, 0) for kind in ("log", "config file", "config name", "submitter's statement"))
    assert own >= 0.85 * rows.height, counts
    assert rows.filter(pl.col("mfu") > 1).height == 0
    # NVIDIA's FP4 LoRA recipe at 8 GPUs, and Dell's copy of it, heal at FP8 from step 350: their phases are named
    healed = rows.filter(pl.col("precision_phases").is_not_null())
    assert {"theia_ngpu8_ngc25.09_nemo", "tyche_ngpu8_ngc25.09_nemo", "1xXE9680Lx8B200-SXM-180GB"} <= set(healed["system"])
    assert all(text.startswith("nvfp4 for steps 1-350, then fp8") for text in healed["precision_phases"])


def test_dells_b200_lora_is_scored_at_its_fp4_recipe(contexts):
    dell = contexts["v5.1"].filter(pl.col("submitter") == "Dell", pl.col("system") == "1xXE9680Lx8B200-SXM-180GB",
                                   pl.col("benchmark") == "llama2_70b_lora").row(0, named=True)
    # it was scored at FP8 (MFU 0.36); against the FP4-then-FP8 peak it is about half that
    assert dell["peak_precision"] == "fp4+fp8" and dell["mfu"] == pytest.approx(0.196, abs=0.01)


def _tar(path: Path, members: dict[str, bytes], mode: str) -> None:
    with tarfile.open(path, mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))


def test_a_mirror_archive_is_read_with_its_configuration_companion(tmp_path):
    archive = tmp_path / "training_results_v9.9.tar.gz"
    _tar(archive, {"training_results_v9.9/Dell/systems/x.json": b"{}"}, "w:gz")
    assert companion_of(archive) is None
    before = source_version(resolve_source(str(archive))).sha256
    companion = tmp_path / "training_results_v9.9.configs.tar.xz"
    _tar(companion, {f"training_results_v9.9/{path}": text.encode() for path, text in DELL_LORA.items()}, "w:xz")
    assert companion_of(archive) == companion
    stream = with_companion(archive_members(archive, 1 << 30, "v9.9"), companion, "v9.9")
    paths = [path for path, _, _ in stream.members]
    assert paths[0] == "Dell/systems/x.json" and set(paths[1:]) == set(DELL_LORA)
    # the round's version covers both archives, the same read or not
    assert stream.provenance.sha256 == source_version(resolve_source(str(archive))).sha256 != before
    # a broken companion is said, and the round's own files still read
    companion.write_bytes(b"not an xz archive")
    stream = with_companion(archive_members(archive, 1 << 30, "v9.9"), companion, "v9.9")
    assert [path for path, _, _ in stream.members] == ["Dell/systems/x.json"]
    assert any("configuration archive unreadable" in skipped.reason for skipped in stream.skipped)


# Supermicro's v3.0 BERT folder: an H100 system's NVIDIA-style config beside the Gaudi2 system's Habana scripts, cut to
# the lines that matter (mlcommons/training_results_v3.0)
SUPERMICRO_BERT = "Supermicro/benchmarks/bert/implementations"
SUPERMICRO_V30 = {
    f"{SUPERMICRO_BERT}/AS-8125GS-TNHR/config_AS-8125GS-TNHR_1x8x48x1_pack.sh": (
        'export BATCHSIZE=48\nexport EXTRA_PARAMS="--dense_seq_output --pad_fmha --packed_samples --use_transformer_engine2 "\n'
        "export DGXNNODES=1\nexport DGXSYSTEM=$(basename $(readlink -f ${BASH_SOURCE[0]}) | sed 's/^config_//' | sed 's/\\.sh$//' )\n"
        "export DGXNGPU=8\n"),
    f"{SUPERMICRO_BERT}/SYS-820GH-TNR2/scripts/run.sh": "PRECISION=${PRECISION:-fp32}\nprecision=\"--noamp\"\n",
}


def test_an_nvidia_style_config_is_no_gaudis():
    """Supermicro's Gaudi2 system (SYS-820GH-TNR2, "Habana Gaudi2") was matched, by its 1 x 8 shape, to the H100 config beside
    it and scored at FP8; NVIDIA's launcher variables (DGXNNODES ...) belong to GPU implementations only."""
    configs = implementation_configs(SUPERMICRO_V30)
    assert match_config(configs, _clues("SYS-820GH-TNR2", "Habana Gaudi2")) is None
    h100 = match_config(configs, _clues("AS-8125GS-TNHR", "NVIDIA H100-SXM5-80GB"))
    assert h100 is not None and h100.config.precision.precision == "fp8"


# NVIDIA's v2.0 MiniGo configs (mlcommons/training_results_v2.0), cut to the lines that matter: the multi-node ones turn
# FP16 on, the single-node one leaves TensorFlow's default
MINIGO = "NVIDIA/benchmarks/minigo/implementations/tensorflow"
MINIGO_V20 = {
    f"{MINIGO}/config_DGXA100.sh": "export DGXNNODES=1\nexport DGXNGPU=8\nexport NUM_GPUS_TRAIN=4\n",
    f"{MINIGO}/config_DGXA100_multi.sh": ("## Turn on FP16 training via AMP\nexport TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE=1\n"
                                          "export DGXNGPU=8\n"),
    f"{MINIGO}/config_DGXA100_multi_8nodes.sh": "source $(dirname ${BASH_SOURCE[0]})/config_DGXA100_multi.sh\nexport DGXNNODES=8\n",
}


def test_a_precision_chosen_per_config_is_not_carried_to_another_submitter():
    from mlperf_scaling.tasks.parse.config_match import family_consensus

    configs = implementation_configs(MINIGO_V20)
    multi = match_config(configs, _clues("dgxa100_n8_ngc22.04_tensorflow", "NVIDIA A100-SXM4-80GB", 8, 8, printed=["DGXA100_multi_8nodes"]))
    assert multi is not None and multi.config.precision.precision == "fp16"
    single = match_config(configs, _clues("dgxa100_ngc22.04_tensorflow", "NVIDIA A100-SXM4-80GB", 1, 8, printed=["DGXA100"]))
    assert single is not None and single.config.precision.precision is None
    # a partner's copy of the multi-node config says FP16 too, yet the single-node config beside it says nothing: a partner
    # with no config of its own gets no round's consensus, and falls to MiniGo's 32-bit default (tf32 on an A100)
    partner = {path.replace("NVIDIA/", "Partner/"): text for path, text in MINIGO_V20.items()}
    assert family_consensus(implementation_configs({**MINIGO_V20, **partner}), "NVIDIA A100-SXM4-80GB") is None


def test_parallelism_read_from_a_config_says_its_lines_and_leaves_the_data_parallelism():
    from mlperf_scaling.tasks.parse.run_config import RunConfiguration
    from mlperf_scaling.tasks.score.configured import with_config_file

    match = match_config(implementation_configs(DELL_LORA), _clues("1xXE9680Lx8B200-SXM-180GB", "NVIDIA Blackwell GPU (B200-SXM-180GB)"))
    row = with_config_file(RunConfiguration(), match, accelerators=8)
    assert (row["tensor_parallelism"], row["pipeline_parallelism"], row["context_parallelism"], row["micro_batch_size"]) == (1, 1, 2, 2)
    assert row["data_parallelism"] == 4 and row["configuration_source"] == "config file"
    evidence = row["configuration_evidence"]
    assert f"{LORA}/config_common.sh:1 TP=1" in evidence and f"{LORA}/config_1xXE9680Lx8B200-SXM-180GB.sh:10 CP=2" in evidence
    assert "data parallelism 8 / (TP x PP x CP 2) = 4" in evidence
    # what the log says stays the log's: a logged degree is not overwritten, nor said to come from the file
    logged = with_config_file(RunConfiguration(tensor_parallelism=4, pipeline_parallelism=1, context_parallelism=2, micro_batch_size=1,
                                               configuration_source="log"), match, accelerators=8)
    assert logged["tensor_parallelism"] == 4 and logged["configuration_evidence"] is None
