"""The curated accelerator mapping: every name published in the shipped rounds is mapped or listed as unknown."""

import polars as pl
import pytest
from conftest import ROUNDS, read_shipped_round

from mlperf_scaling.reference.lookup import accelerator_table, classify_accelerator
from mlperf_scaling.tasks.metrics.efficiency import accelerator_families, efficiency_table


def test_every_published_accelerator_name_is_in_the_mapping():
    known = {row[0] for row in accelerator_table()}
    names = set()
    for round_name in ROUNDS:
        data, _ = read_shipped_round(round_name)
        names |= set(data.systems["accelerator_model_name"].drop_nulls().to_list())
    assert names - known == set(), "add these to mlperf_scaling/reference/accelerators.tsv"
    assert len(names) == 81  # 67 up to v4.1, 10 more in v5.1 (GB200, GB300, B300, MI355X, ...), 4 more in v2.1 (A40, ...)


@pytest.mark.parametrize(
    "name, family",
    [("NVIDIA H100 80GB HBM3", "H100"), ("NVIDIA H100-SXM5-80GB", "H100"), ("H100 NVL Tensor Core GPU (PCIe)", "H100"),
     ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "B200"), ("Intel(R) Gaudi(R) 2 AI Accelerator", "Gaudi2"),
     ("TPU-trillium", "TPU Trillium"), ("tpuv3-8", "TPU v3"), ("Nvidia Tesla V100S-PCIe-32GB", "V100")],
)
def test_spellings_map_to_one_family(name, family):
    mapping = dict(zip(accelerator_families()["accelerator_model_name"], accelerator_families()["accelerator_family"], strict=True))
    assert mapping[name] == family


@pytest.mark.parametrize(
    "name, family, form_factor",
    [("NVIDIA Blackwell Ultra GPU (GB300-NVL72)", "GB300", "superchip"), ("NVIDIA B300-SXM-288GB", "B300", "SXM"),
     ("AMD Instinct MI355X OAM 288GB", "MI355X", "OAM"), ("TPU-v6e", "TPU Trillium", "board"),
     ("TPU7x (Ironwood)", "TPU Ironwood", "board"), ("NVIDIA H100 NVL 94GB", "H100", "PCIe")],
)
def test_new_names_get_a_family_from_the_documented_patterns_marked_inferred(name, family, form_factor):
    found = accelerator_families([name]).row(0, named=True)
    assert (found["accelerator_family"], found["accelerator_family_inferred"]) == (family, True)
    assert classify_accelerator(name).form_factor == form_factor


def test_a_name_no_pattern_knows_has_no_family_and_breaks_nothing():
    found = classify_accelerator("Quantum Abacus 9000")
    assert found.family is None and not found.inferred


def test_unknown_names_are_reported_not_guessed():
    mapping = dict(zip(accelerator_families()["accelerator_model_name"], accelerator_families()["accelerator_family"], strict=True))
    assert mapping["TPU"] is None  # the generation is not stated


def test_comparable_groups_keep_form_factors_apart():
    data, _ = read_shipped_round("v4.1")
    table, _ = efficiency_table(data.scores)
    bert = table.filter(pl.col("benchmark") == "bert")
    # "NVIDIA H100 80GB HBM3" (one Lambda system) is an SXM part: it shares the H100-SXM reference with the SXM5 systems
    hbm3 = bert.filter(pl.col("accelerator_model_name") == "NVIDIA H100 80GB HBM3").row(0, named=True)
    sxm5 = bert.filter(pl.col("accelerator_model_name") == "NVIDIA H100-SXM5-80GB").row(0, named=True)
    assert hbm3["accelerator_group"] == sxm5["accelerator_group"] == "H100-SXM"
    assert hbm3["reference_system"] == sxm5["reference_system"]
    groups = table.group_by("accelerator_group").agg(pl.col("accelerator_form_factor").n_unique().alias("forms"), pl.col("accelerator_family").n_unique().alias("families"))
    assert groups["forms"].max() == 1 and groups["families"].max() == 1  # never two form factors or models in one group
    ssd = table.filter(pl.col("benchmark") == "ssd")
    assert {"H100-PCIe", "H100-SXM"} <= set(ssd["accelerator_group"].to_list())
