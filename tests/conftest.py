"""Shared test fixtures: the real rounds in ../shared/mlperf, an isolated Prefect, a temporary warehouse."""

from __future__ import annotations

import functools
import os
import sys
import tempfile
from pathlib import Path

# Before anything imports Prefect: never touch the user's ~/.prefect, never send telemetry.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="mlperf-tests-prefect-")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"

import tarfile

import pytest

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

SHARED_MLPERF = Path(os.environ.get("MLPERF_SHARED", PROJECT.parent / "shared" / "mlperf")).resolve()
ROUNDS = ("v0.5", "v0.6", "v0.7", "v1.0", "v3.1", "v4.0", "v4.1", "v5.1")
OFFICIAL_ROUNDS = ("v0.7", "v1.0", "v3.1", "v4.0", "v4.1", "v5.1")


def archive(round_name: str) -> Path:
    """The shipped archive of a round; a test that needs it fails loudly when it is absent."""
    path = SHARED_MLPERF / f"training_results_{round_name}.tar.gz"
    if not path.is_file():
        pytest.fail(f"test data absent: {path} (set MLPERF_SHARED to the folder holding the rounds)")
    return path


@functools.cache
def read_shipped_round(round_name: str):
    """Parse and score a shipped round once per test session."""
    from tasks.copy_notes import load_copy_notes
    from tasks.read_round import read_round
    from tasks.sources import open_source, resolve_source

    source = resolve_source(str(archive(round_name)))
    with open_source(source) as stream:
        data = read_round(stream, round_name, load_copy_notes(SHARED_MLPERF, round_name))
    return data, stream.provenance


@pytest.fixture(scope="session")
def prefect_isolated(tmp_path_factory):
    """A throwaway Prefect database and result storage for flow tests."""
    home = Path(os.environ["PREFECT_HOME"])
    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(home / "results")
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def warehouse_path(tmp_path) -> Path:
    return tmp_path / "warehouse.duckdb"


def cut_slice(round_name: str, submitter: str, system: str, benchmark: str, root: Path) -> Path:
    """root/training_results_<round>/ holding one system's JSON and one benchmark folder, cut from the shipped archive."""
    prefix = f"training_results_{round_name}/{submitter}/"
    wanted = (f"systems/{system}.json", f"results/{system}/{benchmark}/")
    with tarfile.open(archive(round_name), mode="r|gz") as stream:
        for member in stream:
            name = member.name
            if member.isfile() and name.startswith(prefix) and name[len(prefix):].startswith(wanted):
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(stream.extractfile(member).read())
    return root / f"training_results_{round_name}"


@pytest.fixture(scope="session")
def real_slice(tmp_path_factory) -> Path:
    """training_results_v4.1/ holding NVIDIA b200_preview_nemo llama2_70b_lora, with benchmark code beside it."""
    folder = cut_slice("v4.1", "NVIDIA", "b200_preview_nemo", "llama2_70b_lora", tmp_path_factory.mktemp("slice"))
    # benchmark code beside the data, which a sparse clone must never fetch
    (folder / "NVIDIA" / "benchmarks" / "llama2").mkdir(parents=True)
    (folder / "NVIDIA" / "benchmarks" / "llama2" / "train.py").write_text("print('code')\n")
    return folder
