"""The curated accelerator mapping: every name published in the shipped rounds is mapped or listed as unknown."""

import polars as pl
import pytest
from conftest import ROUNDS, read_shipped_round

from mlperf_scaling.reference.lookup import accelerator_table, classify_accelerator
from mlperf_scaling.tasks.metrics.accelerators import accelerator_families
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table


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


def test_a_name_without_a_form_factor_takes_its_systems_or_says_it_is_not_stated():
    """v0.7 named "NVIDIA A100" (Inspur NF5488) and "Nvidia Tesla V100" (Fujitsu GX2570M5) and "NVIDIA V100" (Google),
    which grouped them as `A100` and `V100` beside the SXM groups. The systems' own descriptions show SXM for the first
    two (accelerator_systems.tsv); Google's says nothing ("TODO"), so its group says the form factor is not stated."""
    from mlperf_scaling.tasks.metrics.accelerators import with_accelerator_classes

    assert classify_accelerator("NVIDIA A100").form_factor is None  # the name alone says nothing
    frame = pl.DataFrame({"round": ["v0.7", "v0.7", "v0.7", "v9.9"], "submitter": ["Inspur", "Fujitsu", "Google", "Another"],
                          "system": ["nf5488_mxnet", "gx_V100x8_ngc20.06_pytorch", "gpu-v100-8-TF2.0", "nf5488_mxnet"],
                          "accelerator_model_name": ["NVIDIA A100", "Nvidia Tesla V100", "NVIDIA V100", "NVIDIA A100"]})
    classed = with_accelerator_classes(frame)
    assert classed["accelerator_group"].to_list() == ["A100-SXM", "V100-SXM", "V100 (form factor not stated)", "A100 (form factor not stated)"]
    assert classed["accelerator_form_factor"].to_list() == ["SXM", "SXM", None, None]

    data, _ = read_shipped_round("v0.7")
    table, _ = efficiency_table(data.scores)
    groups = dict(table.group_by("submitter", "system").agg(pl.col("accelerator_group").first()).select(
        pl.format("{}/{}", "submitter", "system"), "accelerator_group").iter_rows())
    assert groups["Inspur/nf5488_mxnet"] == groups["NVIDIA/dgxa100_ngc20.06_mxnet"] == "A100-SXM"
    assert groups["Fujitsu/gx_V100x8_ngc20.06_mxnet"] == "V100-SXM" and groups["Google/gpu-v100-8-TF2.0"] == "V100 (form factor not stated)"
    # every group of the round names its form factor, says it is not stated, or is a family of one form (TPU, Ascend)
    bare = {g for g in table["accelerator_group"].unique().to_list() if "-" not in g and "not stated" not in g}
    assert bare == {"TPU v3", "TPU v4", "Ascend 910"}, bare
    # each row of accelerator_systems.tsv is a system of its round that publishes that name
    from mlperf_scaling.reference.lookup import system_form_factors

    published = set(data.systems.select("submitter", "system", "accelerator_model_name").iter_rows())
    assert all((row.submitter, row.system, row.accelerator_model_name) in published for row in system_form_factors() if row.round == "v0.7")


@pytest.mark.parametrize(
    "name, group",
    [("NVIDIA A30-PCIE-24GB", "A30-PCIe"), ("TPU-v4", "TPU v4"), ("Habana Gaudi HL-205", "Gaudi-OAM"),
     ("Graphcore Bow IPU", "IPU Bow"), ("Intel Gaudi 3", "Gaudi3-OAM"), ("NVIDIA V100-SXM2-32GB-CTS", "V100-SXM")],
)
def test_the_names_of_rounds_never_shipped_have_a_group_and_a_datasheet(name, group):
    """v2.0 and v3.0 (mlcommons/training_results_v2.0 and _v3.0, read as unseen rounds) spell accelerators no shipped
    round does: each falls in its family's group by the documented patterns, and that family has a datasheet row."""
    from mlperf_scaling.reference.lookup import accelerator_spec
    from mlperf_scaling.tasks.metrics.accelerators import group_name

    found = classify_accelerator(name)
    assert group_name(found.family, found.form_factor, name) == group
    assert accelerator_spec(found.family, found.form_factor, found.memory_gb, name) is not None
