"""watch-releases against a simulated remote: local bare git repositories built from the shipped archives."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cut_slice

from mlperf_scaling.rounds import next_round_names
from mlperf_scaling.tasks.load.versions import CHANGED, NEW, RESCORE, UNCHANGED, compare_with_warehouse
from mlperf_scaling.tasks.publish.artifacts import watch_markdown
from mlperf_scaling.tasks.score.rules import rules_identity
from mlperf_scaling.tasks.source.releases import normalise_remote_base
from mlperf_scaling.warehouse.connection import connect


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def publish(work: Path, remote: Path) -> str:
    """Commit a working folder and push it to a bare repository of the same name under `remote`."""
    bare = remote / work.name
    if not (work / ".git").exists():
        git("init", "-q", "-b", "main", cwd=work)
        git("init", "-q", "--bare", "-b", "main", str(bare), cwd=remote)
        git("remote", "add", "origin", str(bare), cwd=work)
    git("add", "-A", cwd=work)
    git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", "results", cwd=work)
    git("push", "-q", "origin", "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


@pytest.fixture
def remote(tmp_path) -> tuple[Path, Path]:
    """A remote with v4.0 (Google TPU v5p gpt3) and v4.1 (NVIDIA B200 llama2 LoRA), cut from the archives."""
    work, remote = tmp_path / "work", tmp_path / "remote"
    work.mkdir()
    remote.mkdir()
    publish(cut_slice("v4.0", "Google", "cloud-tpu-v5p-1024-maxtext", "gpt3", work), remote)
    publish(cut_slice("v4.1", "NVIDIA", "b200_preview_nemo", "llama2_70b_lora", work), remote)
    return work, remote


def ingested_rounds(warehouse: Path) -> list[str]:
    with connect(warehouse, read_only=True) as connection:
        return [r[0] for r in connection.execute("select round from ingestions where status = 'succeeded' order by finished_at").fetchall()]


def test_watch_ingests_new_rounds_then_only_what_changes(prefect_isolated, remote, warehouse_path, tmp_path):
    from mlperf_scaling.flows.outcome import result_of
    from mlperf_scaling.flows.watch import watch_releases

    work, remote_folder = remote
    reports = str(tmp_path / "reports")
    first = watch_releases(str(warehouse_path), str(remote_folder), reports)  # a plain folder works as the base
    assert first.started == ["v4.0", "v4.1"]
    assert all(s.status == "succeeded" for s in first.outcomes)
    assert ingested_rounds(warehouse_path) == ["v4.0", "v4.1"]

    again = watch_releases(str(warehouse_path), f"file://{remote_folder}", reports)
    assert again.started == [] and set(again.found.values()) == {UNCHANGED}
    assert ingested_rounds(warehouse_path) == ["v4.0", "v4.1"]

    # a new round appears after the newest known: exactly that round is ingested
    new_round = work / "training_results_v5.0"
    shutil.copytree(work / "training_results_v4.1", new_round, ignore=shutil.ignore_patterns(".git"))
    publish(new_round, remote_folder)
    third = watch_releases(str(warehouse_path), str(remote_folder), reports)
    assert third.started == ["v5.0"]
    assert ingested_rounds(warehouse_path) == ["v4.0", "v4.1", "v5.0"]

    # a new commit on a known round: that round only is ingested again
    gpt3 = work / "training_results_v4.0" / "Google" / "results" / "cloud-tpu-v5p-1024-maxtext" / "gpt3"
    shutil.copyfile(gpt3 / "result_0.txt", gpt3 / "result_3.txt")
    publish(work / "training_results_v4.0", remote_folder)
    fourth = watch_releases(str(warehouse_path), str(remote_folder), reports)
    assert fourth.started == ["v4.0"] and fourth.found["v4.0"] == "changed"
    assert ingested_rounds(warehouse_path) == ["v4.0", "v4.1", "v5.0", "v4.0"]
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select n_runs from scores where round = 'v4.0'").fetchall() == [(4,)]
    assert (Path(reports) / "v5.0" / "index.html").is_file()

    # a commit that loses the round's only score is refused: the loaded version stays, and watch says why
    for name in ("result_0.txt", "result_1.txt", "result_3.txt"):
        (gpt3 / name).unlink()
    publish(work / "training_results_v4.0", remote_folder)
    fifth = watch_releases(str(warehouse_path), str(remote_folder), reports, return_state=True)
    assert fifth.is_failed()
    (summary,) = result_of(fifth).outcomes
    assert summary.status == "failed" and summary.message == (
        "the new version of v4.0 has 1 systems, 1 runs and 0 scored rows where the warehouse holds 1 systems, 4 runs and 1 scored "
        "rows: refused, the loaded version stays (--allow-shrink loads it anyway)")
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select n_runs from scores where round = 'v4.0'").fetchall() == [(4,)]


def test_next_round_names_and_bases():
    assert next_round_names("v4.1") == ["v4.2", "v5.0"]
    assert normalise_remote_base("https://github.com/mlcommons") == "https://github.com/mlcommons/"
    assert normalise_remote_base("/srv/git").startswith("file:///srv/git")


def test_compare_with_warehouse():
    installed = rules_identity()
    loaded = {
        "v4.0": {"source_commit": "old", "rules_package": installed},
        "v4.1": {"source_commit": "abc", "rules_package": installed},
        "v5.1": {"source_commit": "ghi", "rules_package": "mlperf-logging 4.1.68"},  # judged before the changes since publication were recorded
    }
    changes = compare_with_warehouse({"v4.0": "new", "v4.1": "abc", "v5.0": "def", "v5.1": "ghi"}, loaded)
    assert [(c.round, c.action) for c in changes] == [("v4.0", CHANGED), ("v4.1", UNCHANGED), ("v5.0", NEW), ("v5.1", RESCORE)]


def test_the_watch_artifact_says_when_a_round_is_newer_than_the_rules():
    text = watch_markdown("file:///r/", compare_with_warehouse({"v4.1": "abc", "v6.2": "def"}, {}), ["v4.1", "v6.2"])
    assert "| v6.2 | `def` | - | new | 6.2.0 newer |" in text
    assert "- **v6.2**: ruleset 6.2.0 is newer than the rules installed (mlperf-logging 4.1.68 ends at 6.1.0)" in text


def test_the_watch_artifact_lists_the_rounds_that_failed():
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

    summaries = [RoundOutcome("v4.1", "succeeded", "a"),
                 RoundOutcome("v6.0", "failed", "b", "RemoteUnreachable: git clone failed: cannot reach the remote"),
                 RoundOutcome("v6.1", "succeeded", "c", "loaded, but analysis failed: ValueError: x", analysis_failed=True)]
    text = watch_markdown("file:///r/", compare_with_warehouse({"v4.1": "abc"}, {}), ["v4.1", "v6.0", "v6.1"], summaries)
    assert "**2 of 3 rounds failed:**" in text
    assert "- **v6.0**: RemoteUnreachable: git clone failed: cannot reach the remote" in text
    assert "- **v6.1**: loaded, but analysis failed: ValueError: x" in text and "**v4.1**:" not in text


def test_deployments_for_serve_are_the_ones_prefect_yaml_declares():
    from mlperf_scaling.flows.deployments import build_deployments, declared_deployments, watch_cron
    from mlperf_scaling.settings import Settings

    pipeline, watch = build_deployments(Settings())
    assert (pipeline.name, watch.name) == ("pipeline-serve", "watch-releases-serve")  # apart from prefect deploy's names
    assert watch_cron() == "0 6 * * *"  # daily, 06:00 UTC, written once: in prefect.yaml
    assert watch.schedules[0].schedule.cron == watch_cron()
    assert pipeline.description == declared_deployments()["pipeline"]["description"]
    assert pipeline.parameters["rounds"] is None  # every round the source holds


def test_a_changed_version_of_a_round_records_which_scores_moved_and_why(real_slice, tmp_path):
    import shutil

    from conftest import ingest_source

    from mlperf_scaling.warehouse.connection import connect

    warehouse = tmp_path / "w.duckdb"
    first = tmp_path / "first" / "training_results_v4.1"
    shutil.copytree(real_slice, first)
    ingest_source(str(first), warehouse)
    with connect(warehouse, read_only=True) as connection:
        assert connection.execute("select count(*) from score_changes").fetchone() == (0,)  # a first load changes nothing
        (before,) = connection.execute("select time_to_train_min from scores").fetchone()

    # the new version: one log rewritten (a line added), and a scaling factor published for the score
    second = tmp_path / "second" / "training_results_v4.1"
    shutil.copytree(real_slice, second)
    folder = second / "NVIDIA" / "results" / "b200_preview_nemo" / "llama2_70b_lora"
    with (folder / "result_0.txt").open("a") as log:
        log.write("a line the parser ignores\n")
    (folder / "scaling.json").write_text('{"scaling_factor": 1.1}')
    ingest_source(str(second), warehouse)
    with connect(warehouse, read_only=True) as connection:
        rows = connection.execute("select submitter, system, benchmark, change, old_time_to_train_min, new_time_to_train_min, "
                                  "old_scaling_factor, new_scaling_factor, why from score_changes").fetchall()
    assert len(rows) == 1
    submitter, system, benchmark, change, old, new, old_factor, new_factor, why = rows[0]
    assert (submitter, system, benchmark, change) == ("NVIDIA", "b200_preview_nemo", "llama2_70b_lora", "changed")
    published = 1.0188034188034187  # the slice's own scaling.json
    assert old == before and new == pytest.approx(before / published * 1.1, rel=1e-12) and (old_factor, new_factor) == (published, 1.1)
    assert why == f"1 logs rewritten (result_0.txt); scaling.json: {published} -> 1.1"

    # loading that version again changes nothing, and the earlier rows stay
    ingest_source(str(second), warehouse)
    with connect(warehouse, read_only=True) as connection:
        assert connection.execute("select count(*) from score_changes").fetchone() == (1,)
