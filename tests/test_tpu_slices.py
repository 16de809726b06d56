"""TPU systems counted in chips (tasks/parse/tpu_slices.py), on the real systems files of the shipped rounds."""

import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.parse.tpu_slices import counted_in_chips, tpu_generation, tpu_slice


@pytest.mark.parametrize("name, chips", [
    ("tpuv3-8", 4), ("tpuv2-512", 256), ("tpu-v3-1024", 512), ("tpu-v4-128-TF", 64), ("cloud-tpu-v5p-12288-maxtext", 6144),
    ("cloud-tpu-v5e-4096-PAX", 4096), ("cloud-tpu-trillium-1024-maxtext", 1024), ("TPU-v5p", None), ("TPU v3", None),
    ("NVIDIA H100-SXM5-80GB", None), ("v5litepod-16", 16),
])
def test_a_slice_name_gives_its_chips(name, chips):
    found = tpu_slice(name)
    assert (found.chips if found else None) == chips


def test_a_bare_tpu_takes_its_generation_from_the_system_name():
    assert tpu_generation("tpu-v4-128") == "TPU v4"
    assert tpu_generation("cloud-tpu-trillium-512-maxtext") == "TPU Trillium"
    assert tpu_generation("dgxa100_n8") is None


def test_v05_google_systems_are_counted_in_chips():
    data, _ = read_shipped_round("v0.5")
    google = {row["system"]: row for row in data.systems.filter(pl.col("submitter") == "google").iter_rows(named=True)}
    # 64 hosts x 512 TensorCores in the file: a TPU v2-512 is 256 chips
    assert google["resnet-tpuv2-512/tpu"]["accelerators"] == 256
    assert google["resnet-tpuv3-512/tpu"]["accelerators"] == 256
    assert google["gnmt-tpuv3-32/tpu"]["accelerators"] == 16
    assert google["ssd-tpuv3-8/tpu"]["accelerators"] == 4
    assert "counted in chips" in google["resnet-tpuv2-512/tpu"]["notes"]
    tpus = [row for row in google.values() if (row["accelerator_model_name"] or "").startswith("tpu")]
    assert len(tpus) == 11 and all(row["accelerators"] == tpu_slice(row["accelerator_model_name"]).chips for row in tpus)


@pytest.mark.parametrize("round_name", ["v0.5", "v0.6", "v0.7", "v1.0", "v3.1", "v4.0", "v4.1"])
def test_every_google_tpu_system_has_the_chips_its_name_states(round_name):
    """From v0.6 the files count chips; v0.5's are read so; none is left contradicting its name."""
    data, _ = read_shipped_round(round_name)
    checked = 0
    for row in data.systems.filter(pl.col("submitter").str.to_lowercase() == "google").iter_rows(named=True):
        named = tpu_slice(row["system"]) or tpu_slice(row["accelerator_model_name"])
        if named is not None and row["accelerators"]:
            assert row["accelerators"] == named.chips, row
            checked += 1
    assert checked >= 1


def test_the_v05_tpu_scores_are_analysed_again():
    data, _ = read_shipped_round("v0.5")
    efficiency, excluded = efficiency_table(data.scores)
    assert not excluded.filter(pl.col("reason").str.contains("known to be wrong")).height
    resnet = efficiency.filter((pl.col("benchmark") == "resnet") & pl.col("accelerator_model_name").str.starts_with("tpu")).sort("accelerators")
    assert resnet["accelerators"].to_list() == [4, 4, 16, 256, 256]


def test_v07_tpu_v4_systems_are_tpu_v4():
    data, _ = read_shipped_round("v0.7")
    v4 = data.systems.filter(pl.col("system").str.starts_with("tpu-v4"))
    assert v4.height == 3 and set(v4["accelerator_model_name"]) == {"TPU v4"}


@given(generation=st.sampled_from(["v2", "v3", "v4", "v5p"]), chips=st.integers(1, 10_000), hosts=st.integers(1, 2_000))
def test_a_count_of_cores_or_hosts_times_cores_becomes_chips(generation, chips, hosts):
    name = f"tpu{generation}-{2 * chips}"
    for count in (2 * chips, 2 * chips * hosts, chips):
        assert counted_in_chips(name, None, count, hosts)[0] == chips


@given(count=st.integers(1, 100_000), hosts=st.integers(1, 1_000))
def test_a_count_that_is_neither_is_kept_as_written(count, hosts):
    name = "tpuv3-8"
    kept, note = counted_in_chips(name, None, count, hosts)
    assert kept == (4 if count in (4, 8, 8 * hosts) else count)
    assert (note is None) == (count in (4,) or kept == count)
