"""The Prefect flows and the CLI, run on the local ephemeral API with an isolated database."""

from __future__ import annotations

import importlib
import tarfile
from pathlib import Path

import pytest
import yaml

from conftest import PROJECT
from warehouse.connection import connect


@pytest.fixture
def mirror(real_slice, tmp_path) -> Path:
    folder = tmp_path / "mirror"
    folder.mkdir()
    with tarfile.open(folder / "training_results_v4.1.tar.gz", "w:gz") as out:
        out.add(real_slice, arcname="training_results_v4.1")
    (folder / "MISSING.txt").write_text("v4.1\tNVIDIA/results/b200_preview_nemo/llama2_70b_lora/result_10.txt\n")
    return folder


def test_pipeline_uses_the_mirror_and_survives_a_failing_round(prefect_isolated, mirror, warehouse_path, tmp_path):
    from flows.pipeline import mlperf_pipeline

    # v9.9 is in no mirror; its "public" repository is a folder that does not exist
    summaries = mlperf_pipeline(["v4.1", "v9.9"], str(warehouse_path), str(mirror), f"file://{tmp_path}/nowhere/")
    by_round = {s["round"]: s for s in summaries}
    assert by_round["v4.1"]["status"] == "succeeded" and by_round["v4.1"]["n_scores"] == 1
    assert by_round["v9.9"]["status"] == "failed" and "git ls-remote failed" in by_round["v9.9"]["message"]
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select status, n_missing from scores").fetchall() == [("scored_incomplete", 1)]
        statuses = connection.execute("select round, status from ingestions order by round").fetchall()
    assert statuses == [("v4.1", "succeeded"), ("v9.9", "failed")]


def test_cli_ingest_prints_counts(prefect_isolated, real_slice, warehouse_path, capsys):
    from mlperf_scaling.cli import main

    assert main(["ingest", str(real_slice), "--warehouse", str(warehouse_path)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("v4.1"))
    assert line.split()[:8] == ["v4.1", "succeeded", "1", "10", "10", "1", "1", "0"]


def test_cli_refuses_an_unknown_source(prefect_isolated, warehouse_path, capsys):
    from mlperf_scaling.cli import main

    assert main(["ingest", "/no/such/training_results_v4.1", "--warehouse", str(warehouse_path)]) == 2
    assert "source not found" in capsys.readouterr().err


def test_every_deployment_entrypoint_imports():
    config = yaml.safe_load((PROJECT / "prefect.yaml").read_text())
    assert config["deployments"]
    for deployment in config["deployments"]:
        path, name = deployment["entrypoint"].split(":")
        module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
        flow = getattr(module, name)
        assert hasattr(flow, "deploy"), f"{deployment['entrypoint']} is not a Prefect flow"
        assert set(deployment.get("parameters", {})) <= set(flow.parameters.properties)
