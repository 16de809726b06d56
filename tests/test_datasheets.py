"""The accelerator datasheets: every row from the vendor, dense per chip, every accelerator of the shipped rounds' language
and vision results with its row or a stated reason, and no utilisation above the physical peak."""

from urllib.parse import urlparse

import polars as pl
import pytest
from conftest import ROUNDS, read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.contracts.result_context import ResultContextSchema
from mlperf_scaling.reference.lookup import accelerator_spec, accelerator_specs
from mlperf_scaling.tasks.metrics.context import RunPrecision, hardware_of, result_context, utilisation
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

# nvdam.widen.net is where NVIDIA serves its datasheets (the GH200 one among them)
VENDORS = ("nvidia.com", "nvdam.widen.net", "amd.com", "google.com", "intel.com", "habana.ai", "huawei.com", "graphcore.ai", "aws.amazon.com")
# the vendor documents that are no web page: Intel's Hot Chips 2024 deck (the only place Intel gives first-generation Gaudi's peak)
VENDOR_DOCUMENTS = ("Intel, 'Intel Gaudi 3 AI Accelerator",)
VISION_AND_LANGUAGE = ("resnet", "ssd_resnet34", "retinanet", "maskrcnn", "unet3d", "stable_diffusion", "flux1", "bert", "gpt3",
                       "llama2_70b_lora", "llama31_405b", "llama31_8b")


def test_every_row_is_sourced_from_its_vendor():
    for spec in accelerator_specs():
        first = spec.source.split(" ")[0]
        host = urlparse(first).hostname or ""
        assert host.endswith(VENDORS) or spec.source.startswith(VENDOR_DOCUMENTS), (spec.family, spec.source)


def test_the_gaps_are_filled():
    assert accelerator_spec("MI350X", "OAM", 288).peak_tflops["fp4"] == 9200
    # the NVL cards are matched by name, whatever memory a systems file states (v4.1 has H100 NVL systems at 80 and 94)
    assert accelerator_spec("H100", "PCIe", 94, "H100 NVL Tensor Core GPU (PCIe)").peak_tflops["bf16"] == 835.5
    assert accelerator_spec("H100", "PCIe", 80, "H100 NVL Tensor Core GPU (PCIe)").peak_tflops["bf16"] == 835.5
    assert accelerator_spec("H100", "PCIe", 80, "NVIDIA H100 PCIe 80GB").peak_tflops["bf16"] == 756.5
    assert accelerator_spec("H200", "PCIe", 141, "NVIDIA H200 NVL 141GB").peak_tflops["fp8"] == 1670.5
    assert accelerator_spec("TPU v4", "board", 32).peak_tflops == {"bf16": 275, "int8": 275}
    assert accelerator_spec("TPU v5e", "board", 16).peak_tflops["int8"] == 393
    # a V100S is not a V100: its row is matched by name
    assert accelerator_spec("V100", "PCIe", 32, "Nvidia Tesla V100S-PCIe-32GB").peak_tflops["fp16"] == 130
    assert accelerator_spec("V100", "PCIe", 32, "Tesla V100-PCIE-32GB").peak_tflops["fp16"] == 112
    # the four the planner lacked: a GH200 is an H100's chip (NVIDIA's GH200 datasheet, sparse figures halved), its 144 GB
    # part matched by name; Gaudi 3's matrix engines; Ironwood's FP8 as Google states it per chip; B100 from NVIDIA's HGX table
    gh200 = accelerator_spec("GH200", "superchip", None)
    assert gh200 is not None and gh200.peak_tflops["bf16"] == 989.5 and gh200.peak_tflops["fp8"] == 1979 and gh200.memory_gb == 96
    assert accelerator_spec("GH200", "superchip", 144, "NVIDIA GH200 144G HBM3e").memory_gb == 144
    assert accelerator_spec("Gaudi3", "OAM", 128).peak_tflops["bf16"] == 1678
    assert accelerator_spec("TPU Ironwood", "board", 192).peak_tflops == {"bf16": 2307, "fp8": 4614}
    assert accelerator_spec("B100", "SXM", 192).peak_tflops["fp4"] == 7000


def test_peaks_are_dense_and_ordered_by_precision():
    for spec in accelerator_specs():
        peaks = spec.peak_tflops
        for wider, narrower in (("bf16", "fp8"), ("fp8", "fp4"), ("tf32", "bf16"), ("fp32", "bf16")):
            if wider in peaks and narrower in peaks:
                assert peaks[wider] <= peaks[narrower], (spec.family, wider, narrower)


@pytest.mark.parametrize("round_name", ROUNDS)
def test_every_vision_and_language_result_has_its_datasheet_row_or_a_reason(round_name):
    data, _ = read_shipped_round(round_name)
    context = result_context(data.scores, data.systems, data.energy, efficiency_table(data.scores)[0])
    shown = context.filter(pl.col("benchmark_canonical").is_in(VISION_AND_LANGUAGE), pl.col("achieved_tflops_per_accelerator").is_not_null())
    assert shown.filter(pl.col("mfu").is_null() & pl.col("mfu_note").is_null()).height == 0
    assert shown.filter(pl.col("mfu") > 1).height == 0
    # the reasons: only the A10G, whose throughput no vendor publishes
    assert set(shown.filter(pl.col("mfu").is_null())["accelerator_family"].drop_nulls()) <= {"A10G"}


@given(achieved=st.floats(1e-3, 1e6), peak=st.floats(1e-3, 1e6))
def test_no_utilisation_is_above_the_peak(achieved, peak):
    spec = accelerator_spec("H100", "SXM", 80)
    hardware = hardware_of(spec, RunPrecision("fp8", "assumed", "x")) | {"peak_tflops": peak}
    mfu, note = utilisation(achieved, hardware, RunPrecision("fp8", "assumed", "x"), spec, "H100")
    assert (mfu is None) != (note is None)
    assert mfu is None or 0 < mfu <= 1


def test_the_contract_refuses_a_utilisation_above_one():
    import pandera.errors

    data, _ = read_shipped_round("v4.1")
    context = result_context(data.scores, data.systems, data.energy, efficiency_table(data.scores)[0])
    ResultContextSchema.validate(context)
    broken = context.with_columns(pl.when(pl.col("mfu").is_not_null()).then(pl.col("mfu") + 1).otherwise(None).alias("mfu"))
    with pytest.raises(pandera.errors.SchemaError):
        ResultContextSchema.validate(broken)
