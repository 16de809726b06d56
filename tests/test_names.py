"""One name per workload: a label every page and command uses, aliases accepted on input, and a round's workload
analysed once however many folders hold it (v0.6 Google's `mask` beside `maskrcnn`)."""

from __future__ import annotations

import csv
import re
from importlib import resources

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.reference.lookup import analysis_folder, benchmark_name, canonical_benchmark, workload_names, workloads_named
from mlperf_scaling.rounds import round_in_suite, round_order, suite_of
from mlperf_scaling.tasks.metrics.efficiency import by_workload, efficiency_table
from mlperf_scaling.tasks.planning.plan import PlanError, resolve_workload

ROWS = list(csv.DictReader(resources.files("mlperf_scaling.reference").joinpath("benchmarks.tsv").read_text().splitlines(), delimiter="\t"))
CANONICAL = sorted({row["canonical_name"] for row in ROWS})
ROUNDS = [f"v{major}.{minor}" for major in range(7) for minor in range(2)]
HPC_ROUNDS = [round_in_suite("hpc", name) for name in ROUNDS]


def test_every_workload_has_one_label_and_no_two_share_one():
    labels = {canonical: canonical_benchmark(canonical).label for canonical in CANONICAL}
    assert len(set(labels.values())) == len(labels)
    assert labels["ssd_resnet34"] == "SSD-ResNet34" and labels["retinanet"] == "RetinaNet"
    assert labels["bert"] == "BERT-large (bert)" and labels["dlrm_dcnv2"] == "DLRM DCNv2" and labels["maskrcnn"] == "Mask R-CNN"
    assert labels["cosmoflow"] == "CosmoFlow" and labels["oc20"] == "OpenCatalyst DimeNet++ (oc20)"  # MLPerf HPC
    # a label names no folder: the folder ssd is in neither detection label
    assert all(not re.search(r"\((ssd|gnn|mask)\)", label) for label in labels.values())


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['benchmark']}@{r['first_round']}" for r in ROWS])
def test_a_folder_in_any_of_its_rounds_is_labelled_as_its_workload(row):
    first = round_order(row["first_round"])
    for round_name in HPC_ROUNDS if suite_of(row["first_round"]) == "hpc" else ROUNDS:
        if round_order(round_name) < first or (row["last_round"] and round_order(round_name) > round_order(row["last_round"])):
            continue
        name = benchmark_name(row["benchmark"], round_name)
        assert name.canonical_name == row["canonical_name"]
        assert name.label == canonical_benchmark(row["canonical_name"]).label
        assert "folder" not in name.workload and ";" not in name.workload  # what a folder was called is a note, not the workload


@pytest.mark.parametrize("canonical", CANONICAL)
def test_every_name_of_a_workload_finds_it(canonical):
    for alias in [canonical, *workload_names()[canonical]]:
        found = workloads_named(alias)
        assert canonical in found
        for spelling in (alias.upper(), alias.replace("_", "-"), f" {alias} "):
            assert workloads_named(spelling) == found
        if alias != "ssd":
            assert found == [canonical], alias


def test_ssd_names_two_workloads_and_a_round_says_which():
    assert workloads_named("ssd") == ["ssd_resnet34", "retinanet"]
    efficiency = pl.DataFrame({"benchmark": ["ssd", "ssd"], "benchmark_canonical": ["ssd_resnet34", "retinanet"]})
    with pytest.raises(PlanError, match=r"'ssd' names 2 workloads: SSD-ResNet34 \(ssd_resnet34: the folder ssd v0.5-v1.1\) and "
                                        r"RetinaNet \(retinanet: the folder ssd from v2.0\); name one, or give --round"):
        resolve_workload(efficiency, "ssd")
    assert resolve_workload(efficiency, "ssd", "v0.7") == "ssd_resnet34"
    assert resolve_workload(efficiency, "ssd", "v4.1") == "retinanet"
    assert resolve_workload(efficiency, "RetinaNet") == "retinanet"
    # a warehouse that holds one of the two: the folder means it
    assert resolve_workload(efficiency.filter(pl.col("benchmark_canonical") == "retinanet"), "ssd") == "retinanet"


@given(folder=st.sampled_from(sorted({row["benchmark"] for row in ROWS}) + ["not_listed"]), round_name=st.sampled_from(ROUNDS + HPC_ROUNDS))
def test_the_folder_a_workload_is_analysed_under_is_of_the_same_workload(folder, round_name):
    analysed = analysis_folder(folder, round_name)
    assert benchmark_name(analysed, round_name).canonical_name == benchmark_name(folder, round_name).canonical_name
    assert analysis_folder(analysed, round_name) == analysed  # once folded, it stays


def test_v06_mask_rcnn_is_one_workload():
    data, _ = read_shipped_round("v0.6")
    assert set(data.scores.filter(pl.col("benchmark_canonical") == "maskrcnn")["benchmark"].to_list()) == {"mask", "maskrcnn"}
    efficiency, _ = efficiency_table(by_workload(data.scores))
    mask_rcnn = efficiency.filter(pl.col("benchmark_canonical") == "maskrcnn")
    assert set(mask_rcnn["benchmark"].to_list()) == {"maskrcnn"}
    # NVIDIA's V100 systems and Google's three TPU v3 systems, compared in one workload
    assert sorted(set(mask_rcnn["submitter"].to_list())) == ["Google", "NVIDIA"] and mask_rcnn.filter(pl.col("submitter") == "Google").height == 3
    # every analysed benchmark of every shipped round is one workload
    assert efficiency.group_by("benchmark_canonical").agg(pl.col("benchmark").n_unique())["benchmark"].max() == 1
