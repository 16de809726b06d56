"""Shared test fixtures: the real rounds in ../shared/mlperf, an isolated Prefect, a temporary warehouse."""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import pickle
import shutil
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

# Every temporary file of the run, ours, pytest's, multiprocessing's and the child processes' (TMPDIR is inherited),
# under one folder removed when the run ends: no test leaves a file behind.
TEST_TMP = tempfile.mkdtemp(prefix="mlperf-tests-")
os.environ["TMPDIR"] = tempfile.tempdir = TEST_TMP
# The folder shared by every process of the run: the controller's own (its workers inherit the variable).
RUN_SHARED = Path(os.environ.setdefault("MLPERF_TEST_RUN_SHARED", TEST_TMP))
atexit.register(shutil.rmtree, TEST_TMP, ignore_errors=True)  # registered first, so it runs after Prefect's own clean-up
# Before anything imports Prefect: never touch the user's ~/.prefect, never send telemetry.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="prefect-")
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
# every `serve` a test starts serves the reports on a free port of its own: tests in parallel never meet on one
os.environ["MLPERF_REPORTS_ADDRESS"] = "127.0.0.1:0"
# No test uses a block: registering Prefect's block types in each new test database costs 2 CPU-s of the API's start.
os.environ["PREFECT_API_BLOCKS_REGISTER_ON_START"] = "false"
# nor the user's cache folder (the explorer's Vega bundle): one for the run, shared by its workers
os.environ["XDG_CACHE_HOME"] = str(RUN_SHARED / "cache")

PROJECT = Path(__file__).resolve().parents[1]

# Property-based tests: 50 examples per property by default, 1,000 with HYPOTHESIS_PROFILE=thorough; no example
# database, and Hypothesis's other files (its cache of the constants in the code under test) in this run's folder, not
# in a .hypothesis folder left in the working directory.
from hypothesis import settings as _hypothesis_settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(Path(TEST_TMP) / "hypothesis")

_hypothesis_settings.register_profile("default", max_examples=50, database=None)
_hypothesis_settings.register_profile("thorough", max_examples=1000, database=None)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


SHARED_MLPERF = Path(os.environ.get("MLPERF_SHARED", PROJECT.parent / "shared" / "mlperf")).resolve()
ROUNDS = ("v0.5", "v0.6", "v0.7", "v1.0", "v2.1", "v3.1", "v4.0", "v4.1", "v5.1")
OFFICIAL_ROUNDS = ("v0.7", "v1.0", "v2.1", "v3.1", "v4.0", "v4.1", "v5.1")
HPC_ROUNDS = ("hpc-v0.7", "hpc-v2.0", "hpc-v3.0")
# v0.7 predates the HPC rulesets: no official summarizer output. Another round (e.g. hpc-v1.0, with its archive and
# official_hpc_{strong,weak}_v1.0.csv under MLPERF_SHARED) is checked by naming it: MLPERF_HPC_OFFICIAL_ROUNDS="hpc-v1.0"
HPC_OFFICIAL_ROUNDS = tuple(os.environ.get("MLPERF_HPC_OFFICIAL_ROUNDS", "hpc-v2.0 hpc-v3.0").split())


def archive(round_name: str) -> Path:
    """The shipped archive of a round; a test that needs it fails loudly when it is absent."""
    from mlperf_scaling.rounds import repository_name

    path = SHARED_MLPERF / f"{repository_name(round_name)}.tar.gz"
    if not path.is_file():
        pytest.fail(f"test data absent: {path} (set MLPERF_SHARED to the folder holding the rounds)")
    return path


def score_stream(stream, round_name: str, notes=None, workers: int | None = None):
    """Read a round from an opened source and score it, in this process, as the ingest flow's steps do."""
    from mlperf_scaling.tasks.parse.read import read_round_files
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.round_scores import score_round
    from mlperf_scaling.tasks.score.rules import rules_for_round

    judge = judge_for(rules_for_round(round_name))
    return score_round(read_round_files(stream, round_name, notes, workers=workers, judge=judge))


def ingest_source(spec: str, warehouse, notes_dir: str | None = None) -> dict:
    """Read, score, validate and load one source through the steps' plain functions (`.fn`, no Prefect)."""
    from mlperf_scaling.tasks.load.steps import load_round, validate_round
    from mlperf_scaling.tasks.parse.steps import read_round
    from mlperf_scaling.tasks.score.compliance import judge_for
    from mlperf_scaling.tasks.score.rules import rules_for_round
    from mlperf_scaling.tasks.score.steps import score
    from mlperf_scaling.tasks.source.resolve import resolve_source

    round_name = resolve_source(spec).round
    scored = score.fn(read_round.fn(spec, round_name, notes_dir, judge_for(rules_for_round(round_name))))
    return load_round.fn(scored, validate_round.fn(scored), str(warehouse))


@contextlib.contextmanager
def made_once(path: Path):
    """Yields whether `path` must still be made, holding a lock on it: across the run's worker processes, the first
    to need a shared file makes it while the others wait, then they all read it."""
    with open(f"{path}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield not path.exists()


@functools.cache
def read_shipped_round(round_name: str):
    """Parse and score a shipped round once per test run, whichever worker process asks first: kept as a pickle
    (under 2 MB) in the run's shared folder, where reading the eight rounds in every worker cost 30 CPU-s."""
    kept = RUN_SHARED / f"{round_name}.scored.pickle"
    with made_once(kept) as missing:
        if missing:
            from mlperf_scaling.tasks.source.mirror_notes import load_copy_notes
            from mlperf_scaling.tasks.source.resolve import open_source, resolve_source

            source = resolve_source(str(archive(round_name)))
            notes = load_copy_notes(SHARED_MLPERF, round_name)
            with open_source(source) as stream:
                data = score_stream(stream, round_name, notes)
            provenance = stream.provenance
            if provenance.commit is None:  # as the read step does: the manifest names the archive's commit
                provenance.commit = notes.source_commit
            part = kept.with_suffix(".part")
            part.write_bytes(pickle.dumps((data, provenance), protocol=pickle.HIGHEST_PROTOCOL))
            part.replace(kept)
    return pickle.loads(kept.read_bytes())


@pytest.fixture(scope="session", autouse=True)
def _outside_the_project():
    """Tests run in the temporary folder: a default relative path (reports/, data/) never lands in the project."""
    previous = os.getcwd()
    os.chdir(TEST_TMP)
    yield
    os.chdir(previous)


_API: dict[str, object] = {}


def pytest_configure(config):
    """One throwaway Prefect API for the whole run, started at once: it migrates its new database (15 s) while the
    first tests run, and every worker process (inheriting PREFECT_API_URL) shares it instead of migrating its own."""
    if hasattr(config, "workerinput") or "PREFECT_API_URL" in os.environ:
        return  # a worker: the API is its controller's
    from mlperf_scaling.runtime.local_api import TemporaryApi

    api = TemporaryApi()  # its database under this run's PREFECT_HOME; stopped at exit
    os.environ["PREFECT_API_URL"] = api.url
    _API["api"] = api


@pytest.fixture(scope="session")
def prefect_isolated(tmp_path_factory):
    """The run's throwaway Prefect API (database, result storage), once it answers, for flow tests."""
    from urllib.request import urlopen

    os.environ["PREFECT_RESULTS_LOCAL_STORAGE_PATH"] = str(Path(os.environ["PREFECT_HOME"]) / "results")
    deadline = time.monotonic() + 180
    while True:
        try:
            with urlopen(f"{os.environ['PREFECT_API_URL']}/health", timeout=2):
                break
        except OSError:
            if time.monotonic() > deadline:
                pytest.fail("the tests' Prefect API did not answer within 180 s")
            time.sleep(0.2)
    from mlperf_scaling.runtime.local_api import without_heartbeats

    with without_heartbeats():
        yield


@pytest.fixture(scope="session")
def v41_warehouse(prefect_isolated, tmp_path_factory) -> Path:
    """A warehouse holding the shipped v4.1, loaded and analysed as `run` leaves it; tests only read it."""
    import datetime as dt

    from mlperf_scaling.tasks.load.steps import load_round, validate_round
    from mlperf_scaling.tasks.metrics.steps import compute_round_analysis, write_round_analysis
    from mlperf_scaling.tasks.planning.steps import plan_round
    from mlperf_scaling.tasks.score.steps import ScoredRound
    from mlperf_scaling.tasks.source.resolve import Source

    # made once for the whole run and shared by its worker processes (15 s each otherwise): every test only reads it
    warehouse = RUN_SHARED / "v41.duckdb"
    with made_once(warehouse) as missing:
        if missing:
            part = RUN_SHARED / "v41.part.duckdb"
            data, provenance = read_shipped_round("v4.1")
            result = ScoredRound(Source("training_results_v4.1.tar.gz", "archive", "v4.1", "/dev/null"), provenance, data, dt.datetime(2026, 1, 1))
            load_round.fn(result, validate_round.fn(result), str(part))
            write_round_analysis.fn(str(part), plan_round.fn(compute_round_analysis.fn(str(part), "v4.1")))
            part.replace(warehouse)
    return warehouse


@pytest.fixture(scope="session")
def shipped_warehouse(prefect_isolated) -> Path:
    """A warehouse holding every shipped round, loaded and analysed, with the tables across rounds, as `run` leaves it:
    what the manual's figures are checked against. Made once for the run and shared by its workers; tests only read it."""
    import datetime as dt

    from mlperf_scaling.tasks.load.steps import load_round, validate_round
    from mlperf_scaling.tasks.metrics.steps import compute_round_analysis, compute_trends, write_round_analysis, write_trends
    from mlperf_scaling.tasks.planning.steps import plan_models, plan_round
    from mlperf_scaling.tasks.score.steps import ScoredRound
    from mlperf_scaling.tasks.source.resolve import Source

    warehouse = RUN_SHARED / "shipped.duckdb"
    with made_once(warehouse) as missing:
        if missing:
            part = RUN_SHARED / "shipped.part.duckdb"
            from mlperf_scaling.rounds import repository_name

            for round_name in (*ROUNDS, *HPC_ROUNDS):
                data, provenance = read_shipped_round(round_name)
                source = Source(f"{repository_name(round_name)}.tar.gz", "archive", round_name, "/dev/null")
                result = ScoredRound(source, provenance, data, dt.datetime(2026, 1, 1))
                load_round.fn(result, validate_round.fn(result), str(part))
                write_round_analysis.fn(str(part), plan_round.fn(compute_round_analysis.fn(str(part), round_name)))
            write_trends.fn(str(part), plan_models.fn(compute_trends.fn(str(part))))
            part.replace(warehouse)
    return warehouse


@pytest.fixture
def warehouse_path(tmp_path) -> Path:
    return tmp_path / "mlperf_scaling.warehouse.duckdb"


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


FIXTURE_ROUNDS = Path(__file__).parent / "fixtures" / "rounds"


def fixture_round(round_name: str, into: Path) -> Path:
    """A copy of a committed slice of a real round (tests/fixtures/rounds/), so unit tests need no mirror."""
    folder = into / f"training_results_{round_name}"
    shutil.copytree(FIXTURE_ROUNDS / folder.name, folder)
    return folder


@pytest.fixture(scope="session")
def real_slice(tmp_path_factory) -> Path:
    """training_results_v4.1/ holding NVIDIA b200_preview_nemo llama2_70b_lora (committed, cut from the shipped
    archive), with benchmark code beside it."""
    folder = fixture_round("v4.1", tmp_path_factory.mktemp("slice"))
    # benchmark code beside the data, which a sparse clone must never fetch
    (folder / "NVIDIA" / "benchmarks" / "llama2").mkdir(parents=True)
    (folder / "NVIDIA" / "benchmarks" / "llama2" / "train.py").write_text("print('code')\n")
    return folder


@functools.cache
def _rule_file(path: str, loader: type) -> object:
    import yaml

    with open(path) as stream:
        return yaml.load(stream, Loader=loader)  # noqa: S506 - the official checker's own call, its own loader


class _RulesParsedOnce:
    """The `yaml` the official checker sees: each rule file parsed once per process, by the loader it names, and a copy
    of it handed out at every call as a new parse would (the checker parsed three rule files per log, a third of its
    time). Its verdicts are unchanged: the same rule text, the same loader, the same checker code."""

    from yaml import BaseLoader

    @staticmethod
    def load(stream, Loader):  # noqa: N803 - yaml.load's own parameter name
        import copy

        return copy.deepcopy(_rule_file(os.path.abspath(stream.name), Loader))


def official_verdict(path: Path, ruleset: str) -> bool | None:
    """mlperf_logging.compliance_checker's verdict on one log, run as the result summarizer runs it; None where
    it raises (the summarizer then stops too)."""
    import logging

    from mlperf_logging.compliance_checker import mlp_compliance

    mlp_compliance.yaml = _RulesParsedOnce  # type: ignore[assignment]
    mlp_compliance.enqueued_configs.clear()
    checker = mlp_compliance.make_checker(usage="training", ruleset=ruleset, quiet=True, werror=False)
    logging.disable(logging.CRITICAL)
    try:
        return mlp_compliance.main(str(path), f"training_{ruleset}/common.yaml", checker)[0]
    except Exception:  # noqa: BLE001 - the official tool stopping is its verdict here
        return None
    finally:
        logging.disable(logging.NOTSET)


def closed_port() -> int:
    """A local TCP port nothing listens on: connecting to it is refused at once."""
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def descendants_of_dead(mark: str) -> list[str]:
    """multiprocessing helpers (fork server, resource tracker, workers) of the process started with `mark` in its
    environment (inherited by all of them, whoever their parent is now), still alive. Only that process's: tests
    running beside this one have their own."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            marked = f"MLPERF_TEST_MARK={mark}".encode() in (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if marked and ("multiprocessing.forkserver" in command or "multiprocessing.resource_tracker" in command):
            found.append(f"{entry.name}: {command[:80]}")
    return found


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """An installed Chromium: Playwright's own browser download is not reachable from these machines, so the browser
    tests drive Debian's `chromium` (which .ci/run installs) or the one MLPERF_BROWSER names. Without one they are
    skipped with the reason, before any page is built, except where MLPERF_REQUIRE_BROWSER=1 (.ci/run): they fail."""
    found = os.environ.get("MLPERF_BROWSER") or next(filter(None, map(shutil.which, BROWSERS)), None)
    if not found or not Path(found).is_file():
        absent = pytest.fail if os.environ.get("MLPERF_REQUIRE_BROWSER") == "1" else pytest.skip
        absent("no Chromium for the browser tests: install one (`apt-get install chromium`) or set MLPERF_BROWSER to its path")
    return found


@pytest.fixture
def browser(chromium_path):
    """Headless Chromium through Playwright, for tests that look at the pages as a reader does. One per test, never
    kept for the session: while Playwright's sync API is open, its event loop runs in this thread, and every later
    Prefect call here would find a running loop and hand back coroutines."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # the flags STACK_NOTES.md found to work here; no background traffic of the browser's own
        flags = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
        launched = playwright.chromium.launch(executable_path=chromium_path, args=flags)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def v41_reports(v41_warehouse, tmp_path_factory) -> Path:
    """The v4.1 page, its plots, the explorer and the front page, published from the v4.1 warehouse as `run` does."""
    from mlperf_scaling.flows.publish import publish_round
    from mlperf_scaling.tasks.publish.steps import publish_site_index, write_explorer_pages

    reports = RUN_SHARED / "v41-reports"  # made once for the run, as the warehouse is; tests only read it
    with made_once(reports) as missing:
        if missing:
            part = RUN_SHARED / "v41-reports.part"
            publish_round("v4.1", str(v41_warehouse), str(part))
            write_explorer_pages(str(v41_warehouse), str(part))
            publish_site_index.fn(str(v41_warehouse), str(part))
            part.replace(reports)
    return reports
