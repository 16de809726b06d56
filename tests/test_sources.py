"""Sources: directory, .tar.gz stream, local git repository and git URL, built from real shipped files."""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

import pytest
from conftest import score_stream

from mlperf_scaling.tasks.source.members import SourceError
from mlperf_scaling.tasks.source.resolve import ARCHIVE, DIRECTORY, GIT_REPO, GIT_URL, open_source, resolve_source


def _score(stream, round_name="v4.1") -> dict:
    data = score_stream(stream, round_name)
    rows = data.scores.to_dicts()
    assert len(rows) == 1, rows
    return rows[0]


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _commit_all(folder: Path) -> str:
    _git("init", "-q", "-b", "main", cwd=folder)
    _git("add", "-A", cwd=folder)
    _git("-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "-qm", "data", cwd=folder)
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, check=True).stdout.strip()


def test_directory_source(real_slice):
    source = resolve_source(str(real_slice))
    assert (source.kind, source.round) == (DIRECTORY, "v4.1")
    with open_source(source) as stream:
        row = _score(stream)
    assert round(row["time_to_train_min"], 3) == 12.958 and row["accelerators"] == 8


def test_archive_source_is_streamed_and_hashed(real_slice, tmp_path):
    path = tmp_path / "training_results_v4.1.tar.gz"
    with tarfile.open(path, "w:gz") as out:
        out.add(real_slice, arcname="training_results_v4.1")
    source = resolve_source(str(path))
    assert source.kind == ARCHIVE
    with open_source(source) as stream:
        row = _score(stream)
    import hashlib

    assert stream.provenance.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert round(row["time_to_train_min"], 3) == 12.958


def test_local_git_repository_records_its_commit(real_slice, tmp_path):
    repo = tmp_path / "training_results_v4.1"
    subprocess.run(["cp", "-r", str(real_slice), str(repo)], check=True)
    commit = _commit_all(repo)
    source = resolve_source(str(repo))
    assert source.kind == GIT_REPO
    with open_source(source) as stream:
        _score(stream)
    assert stream.provenance.commit == commit


def test_git_url_is_cloned_sparse_without_benchmark_code(real_slice, tmp_path):
    repo = tmp_path / "remote" / "training_results_v4.1"
    repo.parent.mkdir()
    subprocess.run(["cp", "-r", str(real_slice), str(repo)], check=True)
    commit = _commit_all(repo)
    source = resolve_source(f"file://{repo}")
    assert source.kind == GIT_URL and source.round == "v4.1"
    with open_source(source) as stream:
        paths = []
        members = stream.members

        def recording():
            for path, load, size in members:
                paths.append(path)
                yield path, load, size

        stream.members = recording()
        row = _score(stream)
    assert stream.provenance.commit == commit
    assert round(row["time_to_train_min"], 3) == 12.958
    assert not [p for p in paths if "/benchmarks/" in p]


def test_round_must_be_known():
    with pytest.raises(SourceError, match="cannot tell the round"):
        resolve_source("/")


def test_option_injection_in_a_git_url_is_refused():
    with pytest.raises(SourceError, match="starts with '-'"):
        resolve_source("--upload-pack=touch /tmp/pwned")


def test_archive_members_escaping_the_root_are_refused(tmp_path):
    path = tmp_path / "training_results_v4.1.tar.gz"
    with tarfile.open(path, "w:gz") as out:
        for name in ("../evil.txt", "training_results_v4.1/NVIDIA/results/s/bert/result_0.txt"):
            info = tarfile.TarInfo(name)
            info.size = 3
            out.addfile(info, io.BytesIO(b"abc"))
        link = tarfile.TarInfo("training_results_v4.1/NVIDIA/results/s/bert/result_1.txt")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        out.addfile(link)
    with open_source(resolve_source(str(path))) as stream:
        data = score_stream(stream, "v4.1")
    reasons = dict(zip(data.rejections["path"], data.rejections["reason"]))
    assert "'..' path: refused" in reasons["../evil.txt"]
    assert "link inside the archive" in reasons["NVIDIA/results/s/bert/result_1.txt"]
    assert data.runs.height == 1 and data.runs["invalid_reason"][0] == "no MLPerf log lines in the file"
