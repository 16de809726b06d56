"""MLPerf HPC scores against the official summarizer's output (mlperf-logging 4.1.68, `result_summarizer <package> hpc
<ruleset>`) for the shipped HPC rounds with rules: strong minutes and the weak (models, instance scale, time to train
all) tuple, cell by cell, at 1e-9; and v0.7, which no summarizer scores, by the rule its results were published under."""

from __future__ import annotations

import csv
import math

import pytest
from conftest import HPC_OFFICIAL_ROUNDS, SHARED_MLPERF, read_shipped_round

from mlperf_scaling.rounds import version_of

EXACT = 1e-9
WEAK_PARTS = ("number_of_models", "instance_scale", "time_to_train_all")


def official_cells(round_name: str, mode: str) -> dict[tuple[str, str], dict[str, float]]:
    """(system JSON stem, benchmark) -> the official numbers of one mode. The JSON stem in details_url is the key: the
    `system` column repeats (four NVIDIA rows are all "eos") and `submitter` is the JSON's, not the folder's."""
    path = SHARED_MLPERF / "official" / f"official_hpc_{mode}_{version_of(round_name)}.csv"
    if not path.is_file():
        pytest.fail(f"official HPC scores absent: {path}")
    cells: dict[tuple[str, str], dict[str, float]] = {}
    with path.open(newline="") as handle:
        for row in csv.DictReader(handle):
            stem = row["details_url"].rsplit("/", 1)[-1].removesuffix(".json")
            for column, value in row.items():
                if not value:
                    continue
                if mode == "strong" and column in ("cosmoflow", "deepcam", "oc20", "openfold"):
                    cells[(stem, column)] = {"time_to_train_min": float(value)}
                elif mode == "weak" and ":" in column:
                    benchmark, part = column.split(":")
                    cells.setdefault((stem, benchmark), {})[part] = float(value)
    return cells


def our_cells(round_name: str, mode: str) -> dict[tuple[str, str], dict]:
    data, _ = read_shipped_round(round_name)
    rows = data.scores.filter((data.scores["scaling_mode"] == mode) & (data.scores["status"] != "not_scored"))
    return {(row["system"], row["benchmark"]): row for row in rows.iter_rows(named=True)}


@pytest.mark.parametrize("round_name", HPC_OFFICIAL_ROUNDS)
def test_every_official_strong_score_is_reproduced(round_name):
    official, ours = official_cells(round_name, "strong"), our_cells(round_name, "strong")
    differences = [f"{key}: official {cell['time_to_train_min']!r}, ours {ours[key]['time_to_train_min'] if key in ours else None!r}"
                   for key, cell in sorted(official.items())
                   if key not in ours or not math.isclose(ours[key]["time_to_train_min"], cell["time_to_train_min"], rel_tol=0, abs_tol=EXACT)]
    differences += [f"{key}: scored here ({ours[key]['time_to_train_min']}), absent from the official output" for key in sorted(set(ours) - set(official))]
    assert not differences, "\n".join(differences)
    assert len(official) == {"hpc-v2.0": 13, "hpc-v3.0": 14}.get(round_name, len(official))


@pytest.mark.parametrize("round_name", HPC_OFFICIAL_ROUNDS)
def test_every_official_weak_score_is_reproduced(round_name):
    official, ours = official_cells(round_name, "weak"), our_cells(round_name, "weak")
    differences = []
    for key, cell in sorted(official.items()):
        mine = ours.get(key)
        if mine is None:
            differences.append(f"{key}: official {cell}, no score here")
            continue
        got = {"number_of_models": mine["number_of_models"], "instance_scale": mine["instance_scale"], "time_to_train_all": mine["time_to_train_all_min"]}
        for part in WEAK_PARTS:
            if got[part] is None or abs(got[part] - cell[part]) > EXACT:
                differences.append(f"{key} {part}: official {cell[part]!r}, ours {got[part]!r}")
        assert mine["models_per_minute"] == pytest.approx(cell["number_of_models"] / cell["time_to_train_all"], rel=1e-12)
    differences += [f"{key}: scored here, absent from the official output" for key in sorted(set(ours) - set(official))]
    assert not differences, "\n".join(differences)
    assert len(official) == {"hpc-v2.0": 9, "hpc-v3.0": 8}.get(round_name, len(official))


def test_named_hpc_scores():
    """A few published numbers by name, so a wrong join above cannot pass unseen."""
    v30, _ = read_shipped_round("hpc-v3.0")
    v20, _ = read_shipped_round("hpc-v2.0")
    strong = {(r["system"], r["benchmark"]): r for r in v30.scores.filter(v30.scores["scaling_mode"] == "strong").iter_rows(named=True)}
    assert strong[("eos_n64_ngc23.09_pytorch", "cosmoflow")]["time_to_train_min"] == 2.098441666666667
    # HPE+LBNL's scaling.json (1.0063775510204083) is applied, as the published score has it
    oc20 = strong[("perlmutter_128x4", "oc20")]
    assert oc20["scaling_factor"] == 1.0063775510204083 and oc20["time_to_train_min"] == 21.04266690051021
    weak = {(r["system"], r["benchmark"]): r for r in v20.scores.filter(v20.scores["scaling_mode"] == "weak").iter_rows(named=True)}
    fugaku = weak[("fugaku_82944xA64FX_tensorflow_closed", "cosmoflow")]
    assert (fugaku["number_of_models"], fugaku["instance_scale"], fugaku["time_to_train_all_min"]) == (637, 128, 495.66063333333335)
    assert fugaku["accelerators"] == 0 and fugaku["suite"] == "hpc"


def test_strong_and_weak_of_one_system_and_benchmark_are_two_rows():
    """v3.0 eos_n256 has strong/deepcam (5 logs) and weak/deepcam (128 logs): the mode keeps them apart."""
    data, _ = read_shipped_round("hpc-v3.0")
    both = data.scores.filter((data.scores["system"] == "eos_n256_ngc23.09_pytorch") & (data.scores["benchmark"] == "deepcam"))
    assert sorted(zip(both["scaling_mode"], both["n_runs"], strict=True)) == [("strong", 5), ("weak", 128)]


def test_pruned_instances_are_reported_not_read():
    data, _ = read_shipped_round("hpc-v2.0")
    pruned = data.rejections.filter(data.rejections["path"].str.contains("/pruned_results/"))
    assert pruned.height == 17
    assert pruned["reason"].str.contains("pruned").all()
    assert not data.runs["path"].str.contains("/pruned_results/").any()


def test_v07_is_scored_by_the_rule_of_its_time():
    """No summarizer or ruleset scores HPC v0.7: the Training olympic rule of 2020, a run counting when its run_stop
    reports success or, without a status (Fujitsu's ABCI 2048), when the log reaches the quality target."""
    data, _ = read_shipped_round("hpc-v0.7")
    assert data.rules.coverage == "predates" and "quality target" in (data.rules.note or "")
    scores = {(r["system"], r["benchmark"]): r for r in data.scores.iter_rows(named=True)}
    assert len(scores) == 15 and all(r["status"] == "scored" for r in scores.values())
    assert scores[("abci_2048xV100_tensorflow_open", "cosmoflow")]["time_to_train_min"] == pytest.approx(13.211758333333336, abs=EXACT)
    daint = scores[("daint_gpu_n256_tf2.2.0", "cosmoflow")]  # one log ends without run_stop: dropped as the slowest
    assert (daint["n_valid"], daint["n_runs"]) == (9, 10) and daint["time_to_train_min"] == pytest.approx(327.00719791666666, abs=EXACT)
    assert scores[("fugaku_16384xA64FX_tensorflow_open", "cosmoflow")]["time_to_train_min"] == pytest.approx(30.073370833333335, abs=EXACT)
