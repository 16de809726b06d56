"""MLPerf Training v6.1 on its first day: its two new benchmarks, qwen35_397b_grpo (GRPO: batches of prompts x 16
generations, 3 runs) and dlrmv4 (10 runs), scored and analysed with no code change, on fixtures reshaped from real v5.1
logs by tools/make_v61_fixtures.py (tests/fixtures/rounds/training_results_v6.1/README.md says what is real)."""

from __future__ import annotations

import functools
import json
import statistics
import tarfile
from pathlib import Path

import polars as pl
import pytest
from conftest import FIXTURE_ROUNDS, fixture_round, official_verdict, score_stream

V61 = FIXTURE_ROUNDS / "training_results_v6.1"


def _logs() -> list[Path]:
    return sorted(V61.glob("*/results/*/*/result_*.txt"))


def _lifecycle(path: Path) -> tuple[float, float, int]:
    """run_start, run_stop and the samples_count of the last evaluation, read from the file as the rules define them."""
    events = {}
    for line in path.read_text().splitlines():
        record = json.loads(line.split(":::MLLOG ", 1)[1])
        events.setdefault(record["key"], record)
        if record["key"] == "eval_accuracy":
            events["last_eval"] = record
    return events["run_start"]["time_ms"], events["run_stop"]["time_ms"], events["last_eval"]["metadata"]["samples_count"]


@functools.cache
def _scored():
    import tempfile

    from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

    folder = fixture_round("v6.1", Path(tempfile.mkdtemp(prefix="v61-")))
    with open_source(resolve_source(str(folder))) as stream:
        return score_stream(stream, "v6.1")


def test_the_fixtures_pass_the_official_6_1_0_compliance_checker():
    logs = _logs()
    assert len(logs) == 2 * 3 + 2 * 10
    assert [path.name for path in logs if official_verdict(path, "6.1.0") is not True] == []


def test_a_v61_round_is_scored_as_the_summarizer_scores_it():
    data = _scored()
    scores = data.scores.sort("benchmark", "accelerators")
    assert data.rules.ruleset == "6.1.0" and data.rejections.height == 0
    assert scores.select("benchmark", "accelerators", "status", "n_runs", "n_required").rows() == [
        ("dlrmv4", 8, "scored", 10, 10), ("dlrmv4", 16, "scored", 10, 10),
        ("qwen35_397b_grpo", 512, "scored", 3, 3), ("qwen35_397b_grpo", 2560, "scored", 3, 3)]
    for row in scores.iter_rows(named=True):
        folder = V61 / row["submitter"] / "results" / row["system"] / row["benchmark"]
        minutes = sorted((stop - start) / 60000 for start, stop, _ in map(_lifecycle, folder.glob("result_*.txt")))
        # olympic: the best and the worst dropped (a GRPO score is its median run), times scaling.json's factor
        scaling = folder / "scaling.json"
        factor = json.loads(scaling.read_text())["scaling_factor"] if scaling.exists() else 1.0
        assert row["time_to_train_min"] == pytest.approx(statistics.fmean(minutes[1:-1]) * factor, abs=1e-9)
        assert row["scaling_factor"] == factor
    # convergence in samples_count: GRPO's in sequences (its global batch is prompts x 16), dlrmv4's in samples
    qwen = scores.filter(pl.col("benchmark") == "qwen35_397b_grpo").row(0, named=True)
    assert (qwen["global_batch_size"], qwen["samples_to_converge"], qwen["epochs_to_converge"]) == (512, 5120, None)


def test_the_rcp_factors_are_the_official_checkers():
    import logging

    from mlperf_logging.rcp_checker import rcp_checker

    logging.disable(logging.CRITICAL)
    try:
        for scaling in V61.glob("*/results/*/*/scaling.json"):
            passed, _, factor = rcp_checker.check_directory(str(scaling.parent), "training", "6.1.0", False, False, rcp_pass="pruned_rcps")
            assert passed and json.loads(scaling.read_text())["scaling_factor"] == pytest.approx(float(factor), rel=1e-15)
    finally:
        logging.disable(logging.NOTSET)


def test_a_v61_round_is_analysed_with_no_code_change():
    from mlperf_scaling.tasks.metrics.context import result_context
    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
    from mlperf_scaling.tasks.planning.predict import backtest_table
    from mlperf_scaling.tasks.planning.recommend import recommendation_table

    data = _scored()
    efficiency, excluded = efficiency_table(data.scores)
    assert excluded.height == 0
    from mlperf_scaling.reference.lookup import benchmark_name

    workloads = {b: benchmark_name(b, "v6.1").workload for b in efficiency["benchmark"].unique()}
    assert workloads == {"qwen35_397b_grpo": "LLM reinforcement learning (Qwen3.5 397B, GRPO)", "dlrmv4": "recommendation (DLRM v4)"}
    # each benchmark on one accelerator group at two counts: an efficiency against the smaller
    qwen = efficiency.filter(pl.col("benchmark") == "qwen35_397b_grpo").sort("accelerators")
    assert qwen["accelerators"].to_list() == [512, 2560] and qwen["efficiency"][0] == 1.0
    expected = (qwen["time_to_train_min"][0] * 512) / (qwen["time_to_train_min"][1] * 2560)
    assert qwen["efficiency"][1] == pytest.approx(expected, rel=1e-12)
    recommendations = recommendation_table(efficiency, backtest_table(efficiency))
    assert set(recommendations["benchmark"]) == {"qwen35_397b_grpo", "dlrmv4"} and (recommendations["basis"] == "measured").all()
    context = result_context(data.scores, data.systems, data.energy, efficiency)
    assert context.height == 4 and set(context["accelerator_group"]) == {"GB200", "B200-SXM"}
    # the 6.1 logs say their configuration: nothing assumed
    assert set(context.filter(pl.col("benchmark") == "qwen35_397b_grpo")["tensor_parallelism"]) == {4}
    # trained samples in GRPO's sequences; no model FLOPs per sample, so no MFU
    qwen_context = context.filter(pl.col("benchmark") == "qwen35_397b_grpo").sort("accelerators")
    assert qwen_context["samples_trained"].to_list() == [5120, 7168] and qwen_context["mfu"].is_null().all()


def test_the_main_job_runs_a_v61_round_end_to_end(prefect_isolated, tmp_path, capsys):
    from mlperf_scaling.cli import main

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    folder = fixture_round("v6.1", tmp_path / "cut")
    with tarfile.open(mirror / "training_results_v6.1.tar.gz", "w:gz") as archive:
        archive.add(folder, arcname="training_results_v6.1")
    assert main(["run", "--mirror", str(mirror), "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")]) == 0
    out = capsys.readouterr().out
    assert "v6.1" in out and "newer than the rules" not in out
    page = (tmp_path / "reports" / "v6.1" / "index.html").read_text()
    assert "<h2>Qwen3.5 397B GRPO <small>LLM reinforcement learning" in page and "<h2>DLRM v4 <small>recommendation" in page
