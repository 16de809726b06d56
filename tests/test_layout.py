"""Which files are runs, systems, scaling factors or noise, from their paths in real rounds."""

from mlperf_scaling.tasks.parse.layout import ENTRY_JSON, IGNORED, OUTSIDE_DATA, POWER_LOG, RESULT_LOG, SCALING_JSON, SYSTEMS_JSON, classify


def test_current_layout():
    m = classify("NVIDIA/results/b200_preview_nemo/llama2_70b_lora/result_3.txt")
    assert (m.kind, m.submitter, m.system, m.benchmark) == (RESULT_LOG, "NVIDIA", "b200_preview_nemo", "llama2_70b_lora")
    assert classify("Dell/systems/XE9680x8H100-SXM-80GB.json").kind == SYSTEMS_JSON
    assert classify("Dell/results/XE9680x8H100-SXM-80GB/ssd/scaling.json").kind == SCALING_JSON
    assert classify("Dell/results/8xXE9680x8H100-SXM-80GB-POWER/llama2_70b_lora/power/result_0/node_0.txt").kind == POWER_LOG


def test_v05_layout_keeps_the_submission():
    m = classify("v0.5.0/google/cloud_v2.8/gnmt-tpuv2-8/results/tpu/gnmt/result_0.txt")
    assert (m.kind, m.submitter, m.submission, m.system, m.benchmark) == (RESULT_LOG, "google", "cloud_v2.8/gnmt-tpuv2-8", "tpu", "gnmt")
    assert classify("v0.5.0/intel/intel_ncf_submission/results/skx8180/entry.json").kind == ENTRY_JSON


def test_irregular_result_files():
    alibaba = classify("Alibaba/results/v100-256/result_1.txt")
    assert alibaba.kind == RESULT_LOG and alibaba.benchmark is None  # the log names its benchmark
    assert classify("Alibaba/results/a100-8/resnet/120093101102935432567_1.log").kind == RESULT_LOG
    assert classify("Intel/results/1-node-4s-cpx-tensorflow/minigo/result_run3.txt").kind == RESULT_LOG
    nested = classify("Habana/results/SYS-420GH-TNGR/resnet/bert/result_0.txt")
    assert nested.kind == IGNORED and "nested" in nested.reason


def test_noise_is_ignored_with_a_reason():
    for path in (
        "Supermicro/results/as-2124gq-checker-log.txt",
        "Intel/results/1-node-8s-cpx-1-tensorflow/resnet/raw_logs/train_run1.log",
        "NVIDIA/results/dgxa100/unet3d/compliance_1.out",
        ".DS_Store",
    ):
        member = classify(path)
        assert member.kind == IGNORED and member.reason


def test_code_and_documents_beside_the_data_are_not_data():
    assert classify("NVIDIA/benchmarks/bert/implementations/pytorch/run.sh").kind == OUTSIDE_DATA
    assert classify("README.md").kind == OUTSIDE_DATA
