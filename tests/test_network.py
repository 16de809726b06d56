"""Network errors are errors: a remote that cannot be reached is told apart from an absent repository, fails at the
first probe, and --offline never touches the network."""

from __future__ import annotations

import time

import pytest
from conftest import closed_port

from mlperf_scaling.tasks.source.git import RemoteUnreachable, RepositoryAbsent, classify_git_failure, remote_head
from mlperf_scaling.tasks.source.releases import discover_rounds


@pytest.mark.parametrize(
    ("stderr", "kind"),
    [
        ("fatal: unable to access 'https://github.com/x/': Could not resolve host: github.com", RemoteUnreachable),
        ("fatal: unable to access 'http://127.0.0.1:1/x/': Failed to connect to 127.0.0.1 port 1 after 0 ms: Couldn't connect to server",
         RemoteUnreachable),
        ("remote: Repository not found.\nfatal: repository 'https://github.com/mlcommons/training_results_v9.9/' not found", RepositoryAbsent),
        ("fatal: '/tmp/nowhere/x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n\n"
         "Please make sure you have the correct access rights\nand the repository exists.", RepositoryAbsent),
    ],
)
def test_what_git_said_is_classified(stderr, kind):
    error = classify_git_failure("ls-remote", stderr)
    assert type(error) is kind
    if kind is RemoteUnreachable:
        assert "cannot reach the remote" in str(error) and "--mirror" in str(error)


def test_an_absent_repository_and_an_unreachable_remote_differ(tmp_path):
    with pytest.raises(RepositoryAbsent):
        remote_head(f"file://{tmp_path}/training_results_v4.1", 10)
    assert discover_rounds(f"file://{tmp_path}/", ["v4.1", "v5.1"], 10) == {}  # a folder without rounds: nothing published
    started = time.monotonic()
    with pytest.raises(RemoteUnreachable, match="cannot reach the remote"):
        discover_rounds(f"http://127.0.0.1:{closed_port()}/", ["v4.1", "v5.1", "v6.0"], 10)  # raised at the first probe
    assert time.monotonic() - started < 5


def test_the_pipeline_probes_an_unreachable_remote_once(prefect_isolated, warehouse_path, tmp_path, monkeypatch):
    import mlperf_scaling.tasks.source.git as git
    from mlperf_scaling.flows.outcome import result_of
    from mlperf_scaling.flows.pipeline import mlperf_pipeline

    calls = []
    real_run_git = git._run_git

    def counted(args, cwd, timeout_s):
        calls.append(args[0])
        return real_run_git(args, cwd, timeout_s)

    monkeypatch.setattr(git, "_run_git", counted)
    monkeypatch.setenv("MLPERF_NETWORK_RETRIES", "2")
    monkeypatch.setenv("MLPERF_RETRY_DELAY_S", "0")
    state = mlperf_pipeline(["v4.1", "v5.1", "v6.0"], str(warehouse_path), None, f"http://127.0.0.1:{closed_port()}/", str(tmp_path),
                            return_state=True)
    assert state.is_failed() and "3 of 3 rounds failed" in state.message
    assert calls == ["ls-remote"]  # one probe, no retries, no probe per round
    by_round = {s.round: s.message for s in result_of(state)}
    assert "cannot reach the remote" in by_round["v4.1"] and by_round["v6.0"].startswith("not tried, the remote cannot be reached")


def test_offline_refuses_the_network(prefect_isolated, warehouse_path, real_slice, monkeypatch):
    from mlperf_scaling.flows.ingest import ingest_sources
    from mlperf_scaling.flows.outcome import result_of

    monkeypatch.setenv("MLPERF_OFFLINE", "1")
    state = ingest_sources(["https://github.com/mlcommons/training_results_v4.1", str(real_slice)], str(warehouse_path),
                           return_state=True)
    assert [s.status for s in result_of(state)] == ["failed", "succeeded"]  # the URL refused, the local copy loaded
    assert state.is_failed() and "--offline (MLPERF_OFFLINE) forbids the network" in state.message
