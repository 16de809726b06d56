"""The curated accelerator mapping: every name published in the shipped rounds is mapped or listed as unknown."""

import polars as pl
import pytest

from conftest import ROUNDS, read_shipped_round
from tasks.metrics import accelerator_families, efficiency_table
from tasks.reference import accelerator_table


def test_every_published_accelerator_name_is_in_the_mapping():
    known = {row[0] for row in accelerator_table()}
    names = set()
    for round_name in ROUNDS:
        data, _ = read_shipped_round(round_name)
        names |= set(data.systems["accelerator_model_name"].drop_nulls().to_list())
    assert names - known == set(), "add these to mlperf_scaling/reference/accelerators.tsv"
    assert len(names) == 67


@pytest.mark.parametrize(
    "name, family",
    [("NVIDIA H100 80GB HBM3", "H100"), ("NVIDIA H100-SXM5-80GB", "H100"), ("H100 NVL Tensor Core GPU (PCIe)", "H100"),
     ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200"), ("Intel(R) Gaudi(R) 2 AI Accelerator", "Gaudi2"),
     ("TPU-trillium", "TPU Trillium"), ("tpuv3-8", "TPU v3"), ("Nvidia Tesla V100S-PCIe-32GB", "V100")],
)
def test_spellings_map_to_one_family(name, family):
    mapping = dict(zip(accelerator_families()["accelerator_model_name"], accelerator_families()["accelerator_family"], strict=True))
    assert mapping[name] == family


def test_unknown_names_are_reported_not_guessed():
    mapping = dict(zip(accelerator_families()["accelerator_model_name"], accelerator_families()["accelerator_family"], strict=True))
    assert mapping["TPU"] is None  # the generation is not stated


def test_same_model_reference_uses_the_family():
    data, _ = read_shipped_round("v4.1")
    table, _ = efficiency_table(data.scores)
    bert = table.filter(pl.col("benchmark") == "bert")
    # "NVIDIA H100 80GB HBM3" (one Lambda system) now shares the H100 reference with the SXM5 systems
    hbm3 = bert.filter(pl.col("accelerator_model_name") == "NVIDIA H100 80GB HBM3").row(0, named=True)
    sxm5 = bert.filter(pl.col("accelerator_model_name") == "NVIDIA H100-SXM5-80GB").row(0, named=True)
    assert hbm3["accelerator_family"] == "H100" and hbm3["reference_system_same_model"] == sxm5["reference_system_same_model"]
