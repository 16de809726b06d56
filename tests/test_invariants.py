"""Invariants under hostile input, searched by hypothesis rather than listed: any number of any file replaced by
NaN, an infinity, an overflow, a negative, a huge integer, text or null; lines cut, doubled or dropped; archives cut,
emptied, repacked with `./`, under another round's folder, with members doubled or missing.

- reading and scoring never fail a round for one file, and no number that is not finite reaches any table;
- every rejection names a path and gives a reason; the good rows around a bad file all load;
- a loaded round changes only when its new version is accepted, and then whole; a refusal is an expected failure
  (one line for the user), never an exception of another kind;
- nothing is written outside the warehouse's folder.

The default run tries 50 examples per property (`HYPOTHESIS_PROFILE=thorough`: 1,000).
"""

from __future__ import annotations

import datetime as dt
import io
import math
import os
import re
import shutil
import tarfile
import tempfile
from pathlib import Path

import duckdb
import polars as pl
from conftest import FIXTURE_ROUNDS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlperf_scaling.contracts.enums import IngestionStatus
from mlperf_scaling.failures import ExpectedFailure
from mlperf_scaling.tasks.load.steps import ingestion_row, load_round, validate_round
from mlperf_scaling.tasks.parse.read import read_round_files
from mlperf_scaling.tasks.score.compliance import judge_for
from mlperf_scaling.tasks.score.round_scores import score_round
from mlperf_scaling.tasks.score.rules import rules_for_round
from mlperf_scaling.tasks.score.steps import ScoredRound
from mlperf_scaling.tasks.source.members import MemberStream, Provenance
from mlperf_scaling.tasks.source.resolve import open_source, resolve_source
from mlperf_scaling.warehouse.load import ANALYSIS_TABLES, ROUND_TABLES

ROUND = "v5.1"
ROOT = FIXTURE_ROUNDS / f"training_results_{ROUND}"  # ASUSTeK ESC_A8A_MI325X llama2_70b_lora: 10 real logs
FILES = {path.relative_to(ROOT).as_posix(): path.read_bytes() for path in sorted(ROOT.rglob("*")) if path.is_file()}
LOGS = sorted(name for name in FILES if name.endswith(".txt"))
NUMBER = re.compile(rb"(?<![\w.])-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?(?![\w.])")
BAD_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"1e400", b"-1e400", b"-1", b"0", b"1e308", b"-1e308", str(2**80).encode(),
               str(2**64).encode(), b'"12"', b'"x"', b"null", b"true", b"[]", b"{}"]
JUDGE = judge_for(rules_for_round(ROUND))


def score_files(files: dict[str, bytes]):
    """Read and score a round held in memory, in this process, as the ingest steps do."""
    members = ((path, (lambda data=data: data), len(data)) for path, data in files.items())
    return score_round(read_round_files(MemberStream(iter(members), Provenance()), ROUND, workers=1, judge=JUDGE))


@st.composite
def mutated_files(draw) -> tuple[dict[str, bytes], str]:
    """The fixture round with one file changed: a number replaced, a line cut, doubled or dropped. (files, path)."""
    path = draw(st.sampled_from(sorted(FILES)))
    data = FILES[path]
    how = draw(st.sampled_from(["number", "number", "number", "cut line", "double line", "drop line"]))
    if how == "number":
        spots = list(NUMBER.finditer(data))
        if spots:
            spot = draw(st.sampled_from(spots))
            data = data[: spot.start()] + draw(st.sampled_from(BAD_NUMBERS)) + data[spot.end():]
    else:
        lines = data.split(b"\n")
        index = draw(st.integers(0, max(len(lines) - 1, 0)))
        if how == "cut line":
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
        elif how == "double line":
            lines.insert(index, lines[index])
        else:
            del lines[index]
        data = b"\n".join(lines)
    return {**FILES, path: data}, path


def non_finite_cells(frame: pl.DataFrame) -> int:
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return sum(int((~frame[name].is_finite()).fill_null(False).sum()) for name in floats)


PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@PROPERTY
@given(mutated_files())
def test_one_bad_value_fails_only_its_file_and_never_reaches_a_table(case):
    files, path = case
    data = score_files(files)  # never raises: a bad file is a rejection, not a failed round
    for table in ("systems", "runs", "scores", "energy"):
        assert non_finite_cells(getattr(data, table)) == 0, (table, path)
    rejections = data.rejections
    assert rejections["path"].str.len_chars().min() or rejections.height == 0
    assert rejections["reason"].drop_nulls().str.len_chars().min() or rejections.height == 0
    assert rejections["reason"].null_count() == 0 and rejections["path"].null_count() == 0
    runs = data.runs.filter(pl.col("path").str.ends_with(".txt"))
    others = runs.filter(pl.col("path") != path)
    assert others.height == len(LOGS) - (path in LOGS)  # every other log is a run
    if path != "ASUSTeK/systems/ESC_A8A_MI325X.json":
        assert data.systems.height == 1 and data.systems["accelerators"][0] == 8
    # a log that is not its own run any more says why it does not count
    mutated = runs.filter(pl.col("path") == path)
    if mutated.height and not mutated["is_valid"][0]:
        assert mutated["invalid_reason"][0]
    # every other run still counts, as it does unmutated (the fixture's ten runs are all valid)
    assert others["is_valid"].all()
    assert data.scores.height == 1
    frames = validate_round.fn(ScoredRound(resolve_source(str(ROOT)), Provenance(), data, dt.datetime.now(dt.UTC).replace(tzinfo=None)))
    assert sum(frame.height for name, frame in frames.tables().items() if name != "rejections") > 0


# ------------------------------------------------------------------------------------------------------------------
# Archives replacing a loaded round


def tar_gz(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@st.composite
def hostile_archives(draw) -> tuple[bytes, str]:
    """(archive bytes, what was done) built from the fixture round."""
    files = dict(FILES)
    how = draw(st.sampled_from(["intact", "number", "truncated", "empty", "dot prefix", "other round", "duplicate members",
                                "members dropped", "garbage"]))
    prefix = f"training_results_{ROUND}/"
    if how == "number":
        files, _ = draw(mutated_files())
    members = [(prefix + path, data) for path, data in files.items()]
    if how == "empty":
        members = []
    elif how == "dot prefix":
        members = [("./" + name, data) for name, data in members]
    elif how == "other round":
        members = [(name.replace(prefix, "training_results_v4.0/"), data) for name, data in members]
    elif how == "duplicate members":
        members = members + draw(st.lists(st.sampled_from(members), min_size=1, max_size=4))
    elif how == "members dropped":
        keep = draw(st.lists(st.booleans(), min_size=len(members), max_size=len(members)))
        members = [member for member, kept in zip(members, keep, strict=True) if kept]
    blob = tar_gz(members)
    if how == "truncated":
        blob = blob[: draw(st.integers(0, len(blob) - 1))]
    elif how == "garbage":
        blob = draw(st.binary(min_size=0, max_size=2000))
    return blob, how


def loaded_warehouse(folder: Path) -> Path:
    """A warehouse holding the fixture round, made once per test process and copied for each example."""
    made = Path(tempfile.gettempdir()) / f"invariants-{os.getpid()}.duckdb"
    if not made.exists():
        data = score_files(FILES)
        scored = ScoredRound(resolve_source(str(ROOT)), Provenance(), data, dt.datetime.now(dt.UTC).replace(tzinfo=None))
        load_round.fn(scored, validate_round.fn(scored), str(made))
    target = folder / "w.duckdb"
    shutil.copyfile(made, target)
    return target


def round_state(warehouse: Path) -> dict[str, tuple]:
    """Each table's row count and checksum for the round, in one query (a query per table cost more than the load)."""
    tables = ROUND_TABLES + ANALYSIS_TABLES
    union = " union all ".join(
        f"select '{table}', count(*), coalesce(sum(hash(r)), 0) from (select * from {table} where round = $round) as r" for table in tables)
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        return {table: (count, checksum) for table, count, checksum in connection.execute(union, {"round": ROUND}).fetchall()}


def every_float_is_finite(warehouse: Path) -> bool:
    with duckdb.connect(str(warehouse), read_only=True) as connection:
        columns = connection.execute(
            "select table_name, column_name from duckdb_columns() where schema_name = 'main' and data_type in ('DOUBLE', 'FLOAT')"
        ).fetchall()
        by_table: dict[str, list[str]] = {}
        for table, column in columns:
            by_table.setdefault(table, []).append(column)
        counts = " union all ".join(
            f'select count(*) from "{table}" where ' + " or ".join(f'not isfinite("{column}")' for column in names)
            for table, names in by_table.items())
        return not counts or all(n == 0 for (n,) in connection.execute(counts).fetchall())


@PROPERTY
@given(hostile_archives())
def test_a_loaded_round_changes_only_when_its_new_version_is_accepted(case):
    blob, how = case
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        warehouse = loaded_warehouse(folder)
        before = round_state(warehouse)
        source = folder / f"training_results_{ROUND}.tar.gz"
        source.write_bytes(blob)
        accepted = False
        try:
            resolved = resolve_source(str(source))
            with open_source(resolved) as stream:
                data = score_round(read_round_files(stream, ROUND, workers=1, judge=JUDGE))
            scored = ScoredRound(resolved, stream.provenance, data, dt.datetime.now(dt.UTC).replace(tzinfo=None))
            load_round.fn(scored, validate_round.fn(scored), str(warehouse))
            accepted = True
        except ExpectedFailure as failure:  # the user reads one line: it must say something
            assert str(failure).strip(), how
        after = round_state(warehouse)
        if not accepted:
            assert after == before, how
        else:
            assert after["runs"][0] >= 1 and after["systems"][0] >= 1, how
            assert after["scores"][0] >= 1, how
        assert how not in ("empty", "other round", "garbage") or not accepted
        assert how != "intact" or (accepted and after["runs"] == before["runs"])
        assert every_float_is_finite(warehouse)
        # nothing beside the warehouse but its lock and the source
        assert {p.name for p in folder.iterdir()} <= {"w.duckdb", "w.duckdb.lock", source.name}, sorted(p.name for p in folder.iterdir())


def test_a_refused_version_is_recorded_as_failed_and_said_in_one_line():
    """What the flow records when a load is refused: a failed ingestion whose message names both versions' counts."""
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        warehouse = loaded_warehouse(folder)
        source = folder / f"training_results_{ROUND}.tar.gz"
        source.write_bytes(tar_gz([(f"training_results_{ROUND}/{path}", data) for path, data in FILES.items() if "result_" not in path]))
        resolved = resolve_source(str(source))
        with open_source(resolved) as stream:
            data = score_round(read_round_files(stream, ROUND, workers=1, judge=JUDGE))
        scored = ScoredRound(resolved, stream.provenance, data, dt.datetime.now(dt.UTC).replace(tzinfo=None))
        try:
            load_round.fn(scored, validate_round.fn(scored), str(warehouse))
        except ExpectedFailure as failure:
            message = str(failure)
        assert message == ("the new version of v5.1 has 1 systems, 0 runs and 0 scored rows where the warehouse holds 1 systems, "
                           "10 runs and 1 scored rows: refused, the loaded version stays (--allow-shrink loads it anyway)")
        assert "\n" not in message
        # with --allow-shrink the same version loads
        load_round.fn(scored, validate_round.fn(scored), str(warehouse), allow_shrink=True)
        assert round_state(warehouse)["runs"][0] == 0
        row = ingestion_row(resolved, stream.provenance, scored.started_at, IngestionStatus.FAILED, message=message)
        assert row["message"][0] == message and math.isfinite(row["seconds"][0])
