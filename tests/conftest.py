"""Shared test fixtures: the real rounds in ../shared/mlperf, an isolated Prefect, a temporary warehouse."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(PROJECT))

SHARED_MLPERF = Path(os.environ.get("MLPERF_SHARED", PROJECT.parent / "shared" / "mlperf")).resolve()
ROUNDS = ("v0.5", "v0.6", "v0.7", "v1.0", "v3.1", "v4.0", "v4.1")
OFFICIAL_ROUNDS = ("v0.7", "v1.0", "v3.1", "v4.0", "v4.1")


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
    home = tmp_path_factory.mktemp("prefect-home")
    os.environ["PREFECT_HOME"] = str(home)
    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(home / "results")
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        yield


@pytest.fixture
def warehouse_path(tmp_path) -> Path:
    return tmp_path / "warehouse.duckdb"
