"""The Prefect flows and the CLI, run on the local ephemeral API with an isolated database."""

from __future__ import annotations

import importlib
import re
import tarfile
from pathlib import Path

import pytest
import yaml
from conftest import PROJECT

from mlperf_scaling.warehouse.connection import connect


@pytest.fixture
def mirror(real_slice, tmp_path) -> Path:
    folder = tmp_path / "mirror"
    folder.mkdir()
    with tarfile.open(folder / "training_results_v4.1.tar.gz", "w:gz") as out:
        out.add(real_slice, arcname="training_results_v4.1")
    (folder / "MISSING.txt").write_text("v4.1\tNVIDIA/results/b200_preview_nemo/llama2_70b_lora/result_10.txt\n")
    return folder


def test_pipeline_uses_the_mirror_and_survives_a_failing_round(prefect_isolated, mirror, warehouse_path, tmp_path):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, FlowRunFilterParentFlowRunId

    from mlperf_scaling.flows.outcome import result_of
    from mlperf_scaling.flows.pipeline import mlperf_pipeline

    # v9.9 is in no mirror; its "public" repository is a folder that does not exist
    state = mlperf_pipeline(["v4.1", "v9.9"], str(warehouse_path), str(mirror), f"file://{tmp_path}/nowhere/", str(tmp_path / "reports"),
                           return_state=True)
    # the UI shows the truth: the parent Failed after v4.1 went through, naming v9.9; v9.9's own run Failed with its reason
    assert state.is_failed() and state.message.startswith("mlperf-pipeline: 1 of 2 rounds failed (v9.9: ")
    with get_client(sync_client=True) as client:
        parent = client.read_flow_run(state.state_details.flow_run_id)
        children = client.read_flow_runs(flow_run_filter=FlowRunFilter(parent_flow_run_id=FlowRunFilterParentFlowRunId(any_=[parent.id])))
        # a round is published by one task of the pipeline, in the background while the next round is read
        tasks = client.read_task_runs(flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[parent.id])))
    by_name = {run.name: run.state for run in [*children, *tasks]}
    # the top-level run is named for what it was asked and when, not with Prefect's two random words
    assert re.fullmatch(r"run-v4-1-v9-9-\d{8}T\d{4}Z", parent.name), parent.name
    assert by_name["ingest-v9-9"].is_failed() and "git ls-remote failed" in by_name["ingest-v9-9"].message
    assert by_name["ingest-v4-1"].is_completed() and by_name["publish-v4-1"].is_completed()
    summaries = result_of(state)
    by_round = {s.round: s for s in summaries}
    assert by_round["v4.1"].status == "succeeded" and by_round["v4.1"].n_scores == 1
    assert by_round["v9.9"].status == "failed" and "git ls-remote failed" in by_round["v9.9"].message
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select status, n_missing from scores").fetchall() == [("scored_incomplete", 1)]
        statuses = connection.execute("select round, status from ingestions order by round").fetchall()
    assert statuses == [("v4.1", "succeeded"), ("v9.9", "failed")]
    # the explorer, beside the reports; no artifact links it from disk (a browser opens no file:// link from the UI)
    assert (tmp_path / "reports" / "explore.html").is_file() and (tmp_path / "reports" / "v4.1" / "explore.html").is_file()
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        links = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=["explorer"])))
    uri = (tmp_path / "reports" / "explore.html").resolve().as_uri()
    assert not any(uri in str(link.data) for link in links)


def test_pipeline_says_when_a_round_loads_but_cannot_be_published(prefect_isolated, mirror, warehouse_path, tmp_path):
    from mlperf_scaling.flows.outcome import result_of
    from mlperf_scaling.flows.pipeline import mlperf_pipeline

    reports = tmp_path / "reports"
    reports.write_text("a file where the report folder should be")
    state = mlperf_pipeline(["v4.1"], str(warehouse_path), str(mirror), reports=str(reports), return_state=True)
    # published in the background: its failure still reaches the round's summary and the pipeline's state
    assert state.is_failed() and "v4.1: loaded, but analysis failed" in state.message
    (summary,) = result_of(state)
    assert summary.status == "succeeded" and summary.analysis_failed and summary.report is None


def test_cli_ingest_prints_counts(prefect_isolated, real_slice, warehouse_path, capsys):
    from mlperf_scaling.cli import main

    assert main(["ingest", str(real_slice), "--warehouse", str(warehouse_path)]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.startswith("v4.1"))
    assert line.split()[:8] == ["v4.1", "succeeded", "1", "10", "10", "1", "1", "0"]
    with connect(warehouse_path, read_only=True) as connection:
        (seconds,) = connection.execute("select seconds from ingestions").fetchone()
    assert 0 < seconds < 30  # the time spent reading and scoring, recorded


def test_cli_refuses_an_unknown_source(prefect_isolated, warehouse_path, capsys):
    from mlperf_scaling.cli import main

    assert main(["ingest", "/no/such/training_results_v4.1", "--warehouse", str(warehouse_path)]) == 2
    assert "source not found" in capsys.readouterr().err


def test_every_deployment_entrypoint_imports():
    config = yaml.safe_load((PROJECT / "prefect.yaml").read_text())
    assert config["deployments"]
    for deployment in config["deployments"]:
        path, name = deployment["entrypoint"].split(":")
        assert "/" not in path and not path.endswith(".py"), "a module path: importable by a worker from any folder"
        module = importlib.import_module(path)
        flow = getattr(module, name)
        assert hasattr(flow, "deploy"), f"{deployment['entrypoint']} is not a Prefect flow"
        assert set(deployment.get("parameters", {})) <= set(flow.parameters.properties)


def test_served_deployments_name_their_flows_by_module_too():
    from mlperf_scaling.flows.deployments import build_deployments
    from mlperf_scaling.settings import Settings

    # by file path the flow's module would be `pipeline`, which a Dask worker handed the flow cannot import
    assert [d.entrypoint for d in build_deployments(Settings())] == ["mlperf_scaling.flows.pipeline.mlperf_pipeline",
                                                                       "mlperf_scaling.flows.watch.watch_releases"]


def test_a_run_whose_rounds_failed_ends_failed_with_an_exception_prefect_can_raise():
    from prefect.states import get_state_exception

    from mlperf_scaling.flows.outcome import RoundsFailed, result_of, rounds_state
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

    outcomes = [RoundOutcome("v4.1", "failed", "a.tar.gz", "no such archive"), RoundOutcome("v5.1", "succeeded", "b.tar.gz")]
    state = rounds_state(outcomes, "mlperf-pipeline")
    assert state.is_failed() and state.message == "mlperf-pipeline: 1 of 2 rounds failed (v4.1: no such archive)"
    # what Prefect's engine raises at the end of a deployment's failed run: the reason, not "list cannot be resolved"
    raised = get_state_exception(state)
    assert isinstance(raised, RoundsFailed) and str(raised) == state.message
    assert result_of(state) == outcomes


def test_a_run_that_found_nothing_new_ends_completed_saying_what_it_checked():
    from mlperf_scaling.flows.outcome import result_of, rounds_state
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

    outcomes = [RoundOutcome("v4.1", "unchanged", "a.tar.gz"), RoundOutcome("v5.1", "unchanged", "b.tar.gz")]
    state = rounds_state(outcomes, "mlperf-pipeline")
    assert state.is_completed() and result_of(state) == outcomes
    assert state.message == "mlperf-pipeline: nothing new: 2 rounds checked (v4.1, v5.1), each already loaded at the same version"
    outcomes[1] = RoundOutcome("v5.1", "succeeded", "b.tar.gz")
    assert rounds_state(outcomes, "run").message == "run: 1 of 2 rounds loaded and published (v5.1); 1 unchanged"


def test_a_failed_state_says_the_whole_reason():
    from mlperf_scaling.flows.outcome import rounds_state
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

    # as cut at 200 characters once, it read "... (`mlperf-scaling run )"
    reason = "the rules installed changed since this round was loaded: " + "x" * 150 + " (`mlperf-scaling run --force`)"
    state = rounds_state([RoundOutcome("v4.1", "failed", "a.tar.gz", reason)], "mlperf-pipeline")
    assert state.message.endswith("(v4.1: " + reason + ")")


def _archive(folder: Path, round_name: str, data: Path) -> None:
    with tarfile.open(folder / f"training_results_{round_name}.tar.gz", "w:gz") as out:
        out.add(data, arcname=f"training_results_{round_name}")


def test_every_round_of_a_mirror_is_found_in_round_order(tmp_path, real_slice):
    from mlperf_scaling.tasks.source.steps import list_rounds

    names = ["v0.5", "v0.6", "v0.7", "v1.0", "v1.1", "v2.0", "v2.1", "v3.0", "v3.1", "v4.0", "v4.1", "v5.0", "v5.1"]
    for name in reversed(names):
        _archive(tmp_path, name, real_slice)
    (tmp_path / "training_results_v9.9.tar.gz.partial").write_bytes(b"")  # not a round source
    (tmp_path / "notes").mkdir()
    assert list_rounds.fn(str(tmp_path), "https://unused.invalid/", []) == names


def test_run_with_no_rounds_loads_every_round_and_says_when_the_rules_are_older(prefect_isolated, tmp_path, capsys):
    from conftest import fixture_round

    from mlperf_scaling.cli import main
    from mlperf_scaling.tasks.score.rules import rules_identity

    mirror = tmp_path / "mirror"
    mirror.mkdir()
    v51 = fixture_round("v5.1", tmp_path / "cut")
    _archive(mirror, "v5.1", v51)
    _archive(mirror, "v6.2", v51)  # a round newer than the rules installed: same logs, no rules for 6.2.0 yet
    warehouse = tmp_path / "w.duckdb"
    assert main(["run", "--mirror", str(mirror), "--warehouse", str(warehouse), "--reports", str(tmp_path / "reports")]) == 0
    out = capsys.readouterr().out
    assert "ruleset 6.2.0 is newer than the rules installed (mlperf-logging 4.1.68 ends at 6.1.0)" in out
    # the page to open first is named, on the last line, where the eye lands
    assert out.splitlines()[-1] == f"open first: {tmp_path / 'reports' / 'index.html'} (the answer per workload, and a link to every report)"
    # a buyer with a model of their own learns the planner exists from the page they open first
    assert "mlperf-scaling plan --model-params" in (tmp_path / "reports" / "index.html").read_text()
    with connect(warehouse, read_only=True) as connection:
        rows = connection.execute(
            "select round, status, status_reason, n_required from scores order by round"
        ).fetchall()
        rules = connection.execute("select round, ruleset, rules_coverage, rules_package from ingestions order by round").fetchall()
    assert [(r[0], r[1]) for r in rows] == [("v5.1", "scored"), ("v6.2", "scored_unchecked")]
    assert "compliance_checker/training_6.2.0 brings the rules" in rows[1][2] and rows[1][3] == 10
    identity = rules_identity()
    assert identity.startswith("mlperf-logging 4.1.68, reference tables ")
    assert rules == [("v5.1", "5.1.0", "checked", identity), ("v6.2", "6.2.0", "newer", identity)]
    page = (tmp_path / "reports" / "v6.2" / "index.html").read_text()
    assert "ruleset 6.2.0 is newer than the rules installed" in page
    # every link of every page the run wrote resolves: the files, and the section a link's anchor names
    from mlperf_scaling.tasks.publish.report import missing_links

    pages = sorted((tmp_path / "reports").rglob("*.html"))
    assert len(pages) >= 8 and {p.parent.name for p in pages} >= {"reports", "v5.1", "v6.2", "trends", "why"}
    assert {str(p.relative_to(tmp_path)): missing_links(p) for p in pages if missing_links(p)} == {}


@pytest.mark.parametrize(
    ("argv", "environment", "message"),
    [
        (["run", "--rounds", "4.x"], {}, "mlperf-scaling: rounds: not a round name (expected vX.Y, X.Y or hpc-vX.Y, e.g. v4.1 or hpc-v3.0): '4.x' (MLPERF_ROUNDS or --rounds)"),
        (["run", "--mirror", "{tmp}/no-mirror"], {}, "mlperf-scaling: mirror: no such folder: '{tmp}/no-mirror' (MLPERF_MIRROR or --mirror)"),
        (["analyze", "--round", "nine"], {}, "mlperf-scaling: --round: not a round name (expected vX.Y, X.Y or hpc-vX.Y, e.g. v4.1 or hpc-v3.0): 'nine'"),
        (["analyze", "--round", "4.1"], {}, "mlperf-scaling: no warehouse at {tmp}/w.duckdb: run `mlperf-scaling run` (or `ingest`) first"),
        (["analyze", "--round", "v4.1"], {}, "mlperf-scaling: no warehouse at {tmp}/w.duckdb: run `mlperf-scaling run` (or `ingest`) first"),
        (["trends"], {}, "mlperf-scaling: no warehouse at {tmp}/w.duckdb: run `mlperf-scaling run` (or `ingest`) first"),
        (["plan", "bert"], {}, "mlperf-scaling: no warehouse at {tmp}/w.duckdb: run `mlperf-scaling run` (or `ingest`) first"),
        (["trends"], {"MLPERF_NETWORK_RETRIES": "x"},
         "mlperf-scaling: network_retries: Input should be a valid integer, unable to parse string as an integer (MLPERF_NETWORK_RETRIES)"),
    ],
)
def test_user_mistakes_are_one_line_exit_2_and_leave_nothing(argv, environment, message, tmp_path, monkeypatch, capsys):
    from mlperf_scaling.cli import main

    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    argv = [part.replace("{tmp}", str(tmp_path)) for part in argv]
    assert main([*argv, "--warehouse", str(tmp_path / "w.duckdb")]) == 2
    err = capsys.readouterr().err
    assert err == message.replace("{tmp}", str(tmp_path)) + "\n"
    assert list(tmp_path.iterdir()) == []  # no warehouse, no lock file


def test_version(capsys):
    from mlperf_scaling.cli import main

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("mlperf-scaling 0.")
