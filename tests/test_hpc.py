"""MLPerf HPC beside Training: round names, layout, the weak-scaling score, bad HPC input, and one warehouse for both."""

from __future__ import annotations

import datetime as dt
import json
import tarfile
from pathlib import Path

import duckdb
import polars as pl
import pytest
from conftest import archive, ingest_source, score_stream
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.contracts.enums import ScoreStatus
from mlperf_scaling.rounds import (
    normal_round,
    repository_name,
    round_from_name,
    round_in_suite,
    round_label,
    round_order,
    sorted_rounds,
    suite_of,
    version_of,
)
from mlperf_scaling.tasks.load.steps import validate_round
from mlperf_scaling.tasks.parse.layout import IGNORED, RESULT_LOG, SCALING_JSON, classify
from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.score.rules import benchmark_rules, rules_for_round
from mlperf_scaling.tasks.score.steps import ScoredRound
from mlperf_scaling.tasks.score.validity import RunVerdict
from mlperf_scaling.tasks.score.weak import score_weak
from mlperf_scaling.tasks.source.resolve import open_source, resolve_source
from mlperf_scaling.warehouse.read import read_queries

# --- round names -------------------------------------------------------------------------------------------------

versions = st.builds(lambda major, minor: f"v{major}.{minor}", st.integers(0, 30), st.integers(0, 30))
suites = st.sampled_from(["training", "hpc"])


@given(suites, versions)
def test_a_round_name_says_its_suite_and_its_repository(suite, version):
    name = round_in_suite(suite, version)
    assert suite_of(name) == suite and version_of(name) == version
    assert round_from_name(f"/mirror/{repository_name(name)}.tar.gz") == name
    assert normal_round(name) == name and normal_round(name.upper()) == name


@given(st.lists(st.tuples(suites, versions), min_size=2, max_size=8))
def test_a_suite_s_rounds_stay_together_in_version_order(pairs):
    ordered = sorted_rounds({round_in_suite(*pair) for pair in pairs})
    suites_in_order = [suite_of(name) for name in ordered]
    assert suites_in_order == sorted(suites_in_order, key=["training", "hpc"].index)
    for suite in ("training", "hpc"):
        keys = [round_order(name) for name in ordered if suite_of(name) == suite]
        assert keys == sorted(keys)


def test_typed_round_names():
    assert [normal_round(text) for text in ("4.1", "v4.1", "hpc-v3.0", "hpc:3.0", "HPC 3.0", "hpc_v2.0")] == [
        "v4.1", "v4.1", "hpc-v3.0", "hpc-v3.0", "hpc-v3.0", "hpc-v2.0"]
    assert round_label("hpc-v3.0") == "HPC v3.0" and round_label("v4.1") == "v4.1"
    assert repository_name("hpc-v0.7") == "hpc_results_v0.7" and repository_name("v0.7") == "training_results_v0.7"
    with pytest.raises(ValueError, match="hpc-vX.Y"):
        normal_round("hpc")


def test_each_hpc_round_is_judged_by_its_own_rules():
    assert rules_for_round("hpc-v2.0").ruleset == "hpc-2.0.0" and rules_for_round("hpc-v2.0").checked
    assert rules_for_round("v2.0").ruleset == "2.0.0"
    assert rules_for_round("hpc-v0.7").coverage == "predates"
    assert rules_for_round("hpc-v4.0").coverage == "newer"
    assert benchmark_rules("openfold", rules_for_round("hpc-v3.0")).accepted
    assert not benchmark_rules("openfold", rules_for_round("hpc-v2.0")).accepted  # openfold arrived in v3.0


# --- layout ------------------------------------------------------------------------------------------------------


def test_the_scaling_mode_is_read_from_the_path_once():
    weak = classify("NVIDIA/results/eos_n256_ngc23.09_pytorch/weak/deepcam/result_001.txt")
    assert (weak.kind, weak.system, weak.benchmark, weak.scaling_mode) == (RESULT_LOG, "eos_n256_ngc23.09_pytorch", "deepcam", "weak")
    strong = classify("HPE+LBNL/results/perlmutter_128x4/strong/oc20/scaling.json")
    assert (strong.kind, strong.benchmark, strong.scaling_mode) == (SCALING_JSON, "oc20", "strong")
    v07 = classify("RIKEN/results/fugaku_512xA64FX_tensorflow_closed/cosmoflow/result_4.txt")
    assert (v07.kind, v07.benchmark, v07.scaling_mode) == (RESULT_LOG, "cosmoflow", "strong")
    pruned = classify("Fujitsu+RIKEN/results/fugaku/weak/cosmoflow/pruned_results/result_3.txt")
    assert pruned.kind == IGNORED and "pruned" in (pruned.reason or "")
    prefixed = classify("NVIDIA/results/eos/weak/deepcam/copy_result_3.txt")  # the official glob is result_*.txt
    assert prefixed.kind == IGNORED and "result_*.txt" in (prefixed.reason or "")
    # Training's paths are as they were
    assert classify("NVIDIA/results/dgxh100/bert/result_0.txt").scaling_mode == "strong"


# --- the weak score ----------------------------------------------------------------------------------------------

WEAK_RULES = rules_for_round("hpc-v3.0")
DEEPCAM = benchmark_rules("deepcam", WEAK_RULES)  # at least 5 models


def instance(start: float, stop: float, nodes=4, per_node=4, valid=True) -> tuple[LogFacts, RunVerdict]:
    facts = LogFacts(log_format="mllog", run_start_ms=start, run_stop_ms=stop, logged_nodes=nodes, logged_accelerators_per_node=per_node)
    return facts, RunVerdict(valid, (stop - start) / 60000, None if valid else "failed a check")


starts = st.floats(0, 1e7, allow_nan=False)
lengths = st.floats(1.0, 1e7, allow_nan=False)


@given(st.lists(st.tuples(starts, lengths, st.booleans()), min_size=1, max_size=40))
def test_the_weak_score_counts_compliant_instances_over_their_whole_window(spec):
    runs = [instance(start, start + length, valid=valid) for start, length, valid in spec]
    score = score_weak(runs, DEEPCAM, WEAK_RULES)
    valid = [(start, start + length) for start, length, ok in spec if ok]
    assert score.n_runs == len(spec) and score.n_valid == len(valid)
    if len(valid) < 5:
        assert score.status == ScoreStatus.NOT_SCORED and score.number_of_models is None
        return
    assert score.number_of_models == len(valid) and score.instance_scale == 16
    window = (max(stop for _, stop in valid) - min(start for start, _ in valid)) / 60 / 1000
    assert score.time_to_train_all_min == window
    assert score.time_to_train_all_min >= max(stop - start for start, stop in valid) / 60000 * (1 - 1e-12)
    assert score.models_per_minute == pytest.approx(len(valid) / window)


def test_instances_that_state_different_scales_get_no_weak_score():
    runs = [instance(0, 60000) for _ in range(5)] + [instance(0, 60000, nodes=8)]
    score = score_weak(runs, DEEPCAM, WEAK_RULES)
    assert score.status == ScoreStatus.NOT_SCORED and "different instance scales (16, 32)" in (score.status_reason or "")


def test_a_cpu_only_instance_counts_its_nodes():
    runs = [instance(0, 60000, nodes=128, per_node=0) for _ in range(5)]
    assert score_weak(runs, DEEPCAM, WEAK_RULES).instance_scale == 128  # max(accelerators_per_node, 1) x nodes


# --- bad HPC input loses nothing else ----------------------------------------------------------------------------

EOS = "NVIDIA/results/eos_n256_ngc23.09_pytorch"
PERLMUTTER = "HPE+LBNL/results/perlmutter_128x4"


@pytest.fixture(scope="module")
def hpc_slice(tmp_path_factory) -> Path:
    """hpc_results_v3.0/ holding NVIDIA eos_n256's strong and weak DeepCAM and HPE+LBNL's strong OC20 (with its
    scaling.json), cut from the shipped archive."""
    root = tmp_path_factory.mktemp("hpc") / "hpc_results_v3.0"
    wanted = (f"{EOS}/strong/deepcam/", f"{EOS}/weak/deepcam/", f"{PERLMUTTER}/strong/oc20/", "NVIDIA/systems/eos_n256_ngc23.09_pytorch.json",
              "HPE+LBNL/systems/perlmutter_128x4.json")
    with tarfile.open(archive("hpc-v3.0"), mode="r|gz") as stream:
        for member in stream:
            relative = member.name.split("/", 1)[-1]
            if member.isfile() and relative.startswith(wanted):
                target = root / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(stream.extractfile(member).read())  # type: ignore[union-attr]
    return root


def _read(folder: Path):
    source = resolve_source(str(folder))
    assert source.round == "hpc-v3.0"
    with open_source(source) as stream:
        data = score_stream(stream, source.round, workers=1)
        provenance = stream.provenance
    return validate_round.fn(ScoredRound(source, provenance, data, dt.datetime(2026, 1, 1)))


def _copy(folder: Path, tmp_path: Path) -> Path:
    import shutil

    target = tmp_path / "hpc_results_v3.0"
    shutil.copytree(folder, target)
    return target


def test_the_slice_scores_as_published(hpc_slice):
    frames = _read(hpc_slice)
    scores = {(r["system"], r["benchmark"], r["scaling_mode"]): r for r in frames.scores.iter_rows(named=True)}
    weak = scores[("eos_n256_ngc23.09_pytorch", "deepcam", "weak")]
    assert (weak["number_of_models"], weak["instance_scale"]) == (128, 2048)
    assert scores[("eos_n256_ngc23.09_pytorch", "deepcam", "strong")]["time_to_train_min"] == pytest.approx(0.8301944444444445, abs=1e-12)
    assert scores[("perlmutter_128x4", "oc20", "strong")]["time_to_train_min"] == 21.04266690051021
    assert frames.rejections.height == 0


def test_a_broken_weak_instance_loses_itself_only(hpc_slice, tmp_path):
    folder = _copy(hpc_slice, tmp_path)
    broken = folder / EOS / "weak/deepcam/result_7.txt"
    text = broken.read_text()
    broken.write_text(text[: text.index('"key": "run_stop"')].rsplit("\n", 1)[0] + "\n")  # cut before its run_stop
    frames = _read(folder)
    weak = frames.scores.filter(pl.col("scaling_mode") == "weak").row(0, named=True)
    assert (weak["number_of_models"], weak["n_runs"], weak["status"]) == (127, 128, "scored")
    assert "1 of 128 instance(s) not counted" in weak["status_reason"]
    reasons = frames.rejections.filter(pl.col("path").str.ends_with("weak/deepcam/result_7.txt"))["reason"].to_list()
    assert len(reasons) == 1 and reasons[0].startswith("run not counted")
    # the strong results of the same system and the other submitter's are untouched
    strong = frames.scores.filter(pl.col("scaling_mode") == "strong")
    assert strong.height == 2 and strong["status"].to_list() == ["scored", "scored"]


def test_a_broken_systems_json_or_scaling_json_loses_nothing_else(hpc_slice, tmp_path):
    folder = _copy(hpc_slice, tmp_path)
    (folder / "NVIDIA/systems/eos_n256_ngc23.09_pytorch.json").write_text("{ not json")
    (folder / PERLMUTTER / "strong/oc20/scaling.json").write_text(json.dumps({"scaling_factor": "many"}))
    frames = _read(folder)
    assert frames.runs.height == 5 + 128 + 5
    eos = frames.scores.filter(pl.col("system") == "eos_n256_ngc23.09_pytorch")
    assert eos.height == 2 and (eos["status"] == "scored").all()  # scored, said to lack its systems JSON
    assert eos["status_reason"].str.contains("no systems JSON").all()
    oc20 = frames.scores.filter(pl.col("benchmark") == "oc20").row(0, named=True)
    assert oc20["status"] == "not_scored" and "scaling.json unusable" in oc20["status_reason"]
    assert set(frames.rejections["stage"]) >= {"parse"}


# --- one warehouse for both suites -------------------------------------------------------------------------------


def test_training_and_hpc_rounds_of_one_name_share_a_warehouse(tmp_path):
    """Training v0.7 and HPC v0.7 both load, and loading either again leaves the other as it was."""
    warehouse = tmp_path / "w.duckdb"
    ingest_source(str(archive("v0.7")), warehouse)
    ingest_source(str(archive("hpc-v0.7")), warehouse)

    def counts():
        (rounds,) = read_queries(warehouse, "round_overview")
        return {r["round"]: (r["n_systems"], r["n_runs"], r["n_scores"]) for r in rounds.iter_rows(named=True)}

    both = counts()
    assert set(both) == {"v0.7", "hpc-v0.7"} and both["hpc-v0.7"] == (15, 135, 15)
    ingest_source(str(archive("hpc-v0.7")), warehouse)
    ingest_source(str(archive("v0.7")), warehouse)
    assert counts() == both


# --- the analysis, the planner and the pages ---------------------------------------------------------------------


def test_cpu_only_systems_scale_by_processors(shipped_warehouse):
    (efficiency,) = read_queries(shipped_warehouse, "all_efficiency")
    fugaku = efficiency.filter(pl.col("round") == "hpc-v0.7", pl.col("accelerator_group") == "A64FX-CPU").sort("accelerators")
    assert fugaku["accelerators"].to_list() == [512, 8192] and set(fugaku["scale_unit"]) == {"processors"}
    assert fugaku["efficiency"][1] == pytest.approx(249.34626041666667 * 512 / (101.4900625 * 8192), rel=1e-12)
    # Training keeps its accelerators, and its CPU-only rows stay out of the analysis
    assert set(efficiency.filter(~pl.col("round").str.starts_with("hpc-"))["scale_unit"]) == {"accelerators"}


def test_weak_scaling_reads_the_machine_s_share_where_the_logs_name_the_machine(shipped_warehouse):
    (weak,) = read_queries(shipped_warehouse, "round_weak_scaling", round="hpc-v2.0")
    rows = {(r["system"], r["benchmark"]): r for r in weak.iter_rows(named=True)}
    oc20 = rows[("dgxa100_n512_pytorch", "oc20")]  # 60 models and 4 pruned on 4,096 GPUs; the logs say 4,096
    assert (oc20["instance_scale"], oc20["number_of_models"], oc20["n_pruned"], oc20["effective_instance_scale"]) == (4096, 60, 4, 64.0)
    fugaku = rows[("fugaku_82944xA64FX_tensorflow_closed", "cosmoflow")]
    assert (fugaku["effective_instance_scale"], fugaku["scale_unit"]) == (128.0, "processors")
    assert fugaku["unit_hours_per_model"] == pytest.approx(128 * (637 + 11) * 495.66063333333335 / 60 / 637)
    assert fugaku["straggler_efficiency"] < 1
    assert fugaku["weak_saves_pct"] == pytest.approx(100 * (1 - fugaku["unit_hours_per_model"] / fugaku["strong_best_unit_hours"]))
    assert fugaku["weak_saves_pct"] < 0 and "10 % more per model" in fugaku["sentence"]  # Fugaku's weak run costs more
    open_run = rows[("fugaku_82944xA64FX_tensorflow_open", "cosmoflow")]  # open division: its model may differ
    assert open_run["sharing_efficiency"] is None and open_run["weak_saves_pct"] is None and "open division" in open_run["sentence"]
    assert weak.filter(pl.col("is_cheapest_per_model")).height == weak.select("benchmark", "accelerator_group").unique().height


def test_sharing_is_measured_against_the_same_software_only(shipped_warehouse):
    """HPE+LBNL's v3.0 weak CosmoFlow logs are 2021 runs on MXNet NGC 21.09; its v3.0 strong run at 512 is PyTorch
    NGC 23.09: their ratio would be a software gap, not the cost of sharing the machine."""
    (weak,) = read_queries(shipped_warehouse, "round_weak_scaling", round="hpc-v3.0")
    hpe = weak.filter(pl.col("system") == "perlmutter_10x128x4_ngc21.09_mxnet").row(0, named=True)
    assert hpe["effective_instance_scale"] == 512 and hpe["sharing_efficiency"] is None
    assert "used other software than this result's MXNet NVIDIA Release 21.09" in hpe["sentence"]


def test_the_front_page_counts_a_carried_over_weak_result_once(shipped_warehouse):
    (best,) = read_queries(shipped_warehouse, "best_weak_scaling")
    fugaku = best.filter(pl.col("accelerator_group") == "A64FX-CPU")
    assert fugaku["round"].to_list() == ["hpc-v2.0"]  # v3.0's are the same logs again
    a100 = best.filter((pl.col("benchmark_canonical") == "cosmoflow") & (pl.col("accelerator_group") == "A100-SXM")).row(0, named=True)
    assert (a100["system"], a100["effective_instance_scale"]) == ("dgxa100_n512_pytorch", 32.0) and a100["weak_saves_pct"] > 0


def test_plan_answers_for_hpc_workloads(shipped_warehouse, capsys):
    from mlperf_scaling.cli import main

    assert main(["plan", "deepcam", "--warehouse", str(shipped_warehouse)]) == 0
    out = capsys.readouterr().out
    assert "DeepCAM, climate segmentation, on A100-SXM, MLPerf HPC v3.0 strong scaling" in out
    assert "128 A100-SXM: measured 13.0 min" in out
    assert main(["plan", "openfold", "--accelerator", "H100-SXM", "--warehouse", str(shipped_warehouse)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2,080 H100-SXM: measured 7.51 min" in out
    assert "Weak scaling (many models at once, MLPerf HPC): HPC v3.0 openfold, NVIDIA/eos_n256_ngc23.09_pytorch: 16 models of 128 H100-SXM" in out
    assert main(["plan", "cosmoflow", "--accelerator", "A64FX-CPU", "--round", "hpc-v0.7", "--warehouse", str(shipped_warehouse)]) == 0
    assert "A64FX-CPU is a CPU, not an accelerator: N counts its processors" in " ".join(capsys.readouterr().out.split())


def test_an_hpc_round_loaded_again_changes_nothing_and_a_changed_weak_score_is_said(hpc_slice, tmp_path):
    """Reloading an HPC round is not refused as a shrink (weak scores count as scored), and the load's diff keeps strong
    and weak apart: the same files say nothing changed; one broken instance says the weak score changed."""
    warehouse = tmp_path / "w.duckdb"
    ingest_source(str(hpc_slice), warehouse)
    ingest_source(str(hpc_slice), warehouse)
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        assert connection.execute("select count(*) from score_changes").fetchone() == (0,)
    folder = _copy(hpc_slice, tmp_path)
    broken = folder / EOS / "weak/deepcam/result_7.txt"
    text = broken.read_text()
    broken.write_text(text[: text.index('"key": "run_stop"')].rsplit("\n", 1)[0] + "\n")
    ingest_source(str(folder), warehouse)
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        rows = connection.execute("select system, benchmark, scaling_mode, change, why from score_changes").fetchall()
    assert len(rows) == 1
    system, benchmark, mode, change, why = rows[0]
    assert (system, benchmark, mode, change) == ("eos_n256_ngc23.09_pytorch", "deepcam", "weak", "changed")
    assert "1 logs rewritten (result_7.txt)" in why
