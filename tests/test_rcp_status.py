"""RCP status and factor per score, as the official summarizer computes them: held to the official checker's own
verdicts on every closed score of the shipped rounds (tests/fixtures/official_rcp_status.tsv, made by
tools/official_rcp_status.py from the archives), and that file held to the checker again on v4.1."""

from __future__ import annotations

import csv
import functools
import importlib.util
import math
import sys
from pathlib import Path

import polars as pl
import pytest
from conftest import SHARED_MLPERF, read_shipped_round

ORACLE = Path(__file__).parent / "fixtures" / "official_rcp_status.tsv"
CHECKED_ROUNDS = ("v1.0", "v2.1", "v3.1", "v4.0", "v4.1", "v5.1")


@functools.cache
def _oracle() -> dict[tuple[str, str, str, str], tuple[str, float | None]]:
    with ORACLE.open() as handle:
        return {(r["round"], r["submitter"], r["system"], r["benchmark"]): (r["rcp_status"], float(r["rcp_factor"]) if r["rcp_factor"] else None)
                for r in csv.DictReader(handle, delimiter="\t")}


@pytest.mark.parametrize("round_name", CHECKED_ROUNDS)
def test_every_closed_score_has_the_official_rcp_status_and_factor(round_name):
    data, _ = read_shipped_round(round_name)
    oracle = {key[1:]: value for key, value in _oracle().items() if key[0] == round_name}
    closed = data.scores.filter(pl.col("division") == "closed")
    compared = 0
    for row in closed.iter_rows(named=True):
        key = (row["submitter"], row["system"], row["benchmark"])
        if key not in oracle:  # a folder the summarizer never reaches (no result logs): no status either side
            assert row["rcp_status"] is None, key
            continue
        status, factor = oracle[key]
        assert (row["rcp_status"] or "") == status, (key, row["rcp_status"], status)
        if factor is not None and math.isnan(factor):  # the checker's mean of no runs: no number here
            assert row["rcp_factor"] is None, key
        elif factor is not None and status:
            assert row["rcp_factor"] == pytest.approx(factor, rel=1e-12), key
        compared += 1
    assert compared >= 0.9 * closed.height and compared > 40
    # open-division scores get no status, as the summarizer gives them none
    assert data.scores.filter(pl.col("division") == "open")["rcp_status"].is_null().all()


def test_the_known_cases_of_v41():
    data, _ = read_shipped_round("v4.1")
    scores = {(r["submitter"], r["system"], r["benchmark"]): r for r in data.scores.iter_rows(named=True)}
    # a batch of 128 below every pruned ssd RCP, converging too fast for the smallest: Missing, and still scored as published
    missing = scores[("Dell", "R760x2H100NVL-PCIe-94GB", "ssd")]
    assert missing["rcp_status"] == "Missing" and missing["time_to_train_min"] is not None
    # where the checker normalises, its factor is the one published in scaling.json
    asus = scores[("ASUSTeK", "ESC_N8_E11", "dlrm_dcnv2")]
    assert asus["rcp_status"] == "Pass" and asus["rcp_factor"] == pytest.approx(asus["scaling_factor"], rel=1e-15) == 1.0152777777777777
    passed = [r for r in scores.values() if r["rcp_status"] == "Pass"]
    assert len(passed) == 152 and all(r["rcp_factor"] >= 1 for r in passed)


def test_the_oracle_is_the_official_checkers_output_on_v41():
    spec = importlib.util.spec_from_file_location("official_rcp_status", Path(__file__).parents[1] / "tools" / "official_rcp_status.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    sys.modules["official_rcp_status"] = tool
    spec.loader.exec_module(tool)
    fresh = tool.round_statuses(SHARED_MLPERF, "v4.1", "4.1.0")
    stored = {key: value for key, value in _oracle().items() if key[0] == "v4.1"}
    assert len(fresh) == len(stored) > 100
    for round_name, submitter, system, benchmark, status, factor in fresh:
        stored_status, stored_factor = stored[(round_name, submitter, system, benchmark)]
        assert status == stored_status
        assert (factor == "" and stored_factor is None) or math.isclose(factor, stored_factor, rel_tol=1e-15) or (
            math.isnan(factor) and math.isnan(stored_factor))


def test_the_checkers_mean_of_no_runs_warns_nobody():
    """Two converged runs of a benchmark the checker drops one from each end of: numpy's "Mean of empty slice" inside
    the checker reached the main job's log, a warning nobody can act on; the verdict stays the checker's."""
    import warnings

    from mlperf_scaling.tasks.score.rcp_status import RcpReading, rcp_status

    readings = [RcpReading(True, 1.0, 2048, "bert"), RcpReading(True, 1.1, 2048, "bert")]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        status, factor = rcp_status(readings, "1.0.0", "closed")
    assert [str(w.message) for w in caught] == []
    assert status in ("Pass", "Fail", "Missing", "Interp. Fail") and (factor is None or math.isnan(factor) or factor > 0)
