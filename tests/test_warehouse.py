"""Loading into DuckDB: idempotent, one transaction per round, contracts enforced, values bound."""

from __future__ import annotations

import datetime as dt

import duckdb
import polars as pl
import pytest
from conftest import read_shipped_round

from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.contracts.validate import split_valid_rows
from mlperf_scaling.tasks.load.steps import load_round, validate_round
from mlperf_scaling.tasks.score.steps import ScoredRound
from mlperf_scaling.tasks.source.resolve import Source
from mlperf_scaling.warehouse.connection import connect, open_writer
from mlperf_scaling.warehouse.load import ROUND_TABLES


def _result(round_name: str) -> ScoredRound:
    data, provenance = read_shipped_round(round_name)
    source = Source(f"training_results_{round_name}.tar.gz", "archive", round_name, "/dev/null")
    return ScoredRound(source, provenance, data, dt.datetime(2026, 1, 1))


def _load(round_name: str, warehouse) -> dict:
    result = _result(round_name)
    return load_round.fn(result, validate_round.fn(result), str(warehouse))


def _checksums(path) -> dict[str, tuple]:
    with connect(path, read_only=True) as connection:
        return {
            table: connection.execute(
                f"select count(*), sum(hash(r)) from (select * from {table}) as r"
            ).fetchone()
            for table in ROUND_TABLES
        }


def test_loading_a_round_twice_gives_identical_tables(warehouse_path):
    first = _load("v4.1", warehouse_path)
    before = _checksums(warehouse_path)
    second = _load("v4.1", warehouse_path)
    assert _checksums(warehouse_path) == before
    assert first.n_scores == second.n_scores == 154
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select count(*) from ingestions where round = 'v4.1'").fetchone()[0] == 2
        assert connection.execute("select count(*) from scores where round = ?", ["v4.1"]).fetchone()[0] == 154


def test_reloading_one_round_leaves_the_others_untouched(warehouse_path):
    _load("v4.1", warehouse_path)
    _load("v0.6", warehouse_path)
    with connect(warehouse_path, read_only=True) as connection:
        v06 = connection.execute("select count(*), sum(hash(r)) from (select * from runs where round = 'v0.6') as r").fetchone()
    _load("v4.1", warehouse_path)
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select count(*), sum(hash(r)) from (select * from runs where round = 'v0.6') as r").fetchone() == v06
        summary = connection.execute("select round, n_systems, n_runs, n_scores from round_summary").fetchall()
    assert summary == [("v0.6", 32, 430, 63), ("v4.1", 86, 1309, 154)]


def test_scores_table_has_the_documented_columns(warehouse_path):
    _load("v4.1", warehouse_path)
    with connect(warehouse_path, read_only=True) as connection:
        row = connection.execute(
            "select round, submitter, system, benchmark, division, accelerator_model_name, accelerators, number_of_nodes,"
            " time_to_train_min, time_to_train_unscaled_min, scaling_factor, n_runs, n_valid, n_required, status"
            " from scores where system = ? and benchmark = ?",
            ["cloud-tpu-trillium-2048-maxtext", "gpt3"],
        ).fetchone()
    assert row[:4] == ("v4.1", "Google", "cloud-tpu-trillium-2048-maxtext", "gpt3")
    assert row[4] == "closed" and row[6] == 2048
    assert round(row[8], 3) == 27.330 and row[11:] == (3, 3, 3, "scored")


def test_a_failed_load_rolls_back_and_keeps_the_previous_version(warehouse_path):
    _load("v4.1", warehouse_path)
    before = _checksums(warehouse_path)
    result = _result("v4.1")
    frames = validate_round.fn(result)
    frames.runs = frames.runs.with_columns(pl.lit("v9.9").alias("round"))  # rows of the wrong round
    with pytest.raises(ValueError, match="another round"):
        load_round.fn(result, frames, str(warehouse_path))
    assert _checksums(warehouse_path) == before


def test_contract_failures_reject_rows_and_keep_the_good_ones():
    data, _ = read_shipped_round("v4.1")
    broken = data.scores.with_columns(
        pl.when(pl.col("system") == "b200_preview_nemo").then(-8).otherwise(pl.col("accelerators")).alias("accelerators")
    )
    good, rejected = split_valid_rows(broken, ScoresSchema, "scores", ["submitter", "system", "benchmark"])
    n_b200 = data.scores.filter(pl.col("system") == "b200_preview_nemo").height
    assert good.height == data.scores.height - n_b200
    assert rejected.height == n_b200
    assert rejected["reason"].str.contains("accelerators failed greater_than_or_equal_to").all()


def test_strings_from_the_data_are_bound_never_formatted(warehouse_path):
    data, provenance = read_shipped_round("v4.1")
    hostile = "x'); drop table scores; --"
    data_copy = type(data)(**{**data.__dict__, "scores": data.scores.with_columns(pl.lit(hostile).alias("system"))[:1]})
    source = Source("hostile", "directory", "v4.1", "/dev/null")
    result = ScoredRound(source, provenance, data_copy, dt.datetime(2026, 1, 1))
    load_round.fn(result, validate_round.fn(result), str(warehouse_path))
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select system from scores").fetchall() == [(hostile,)]


def test_readers_can_open_read_only_beside_the_writer_lock(warehouse_path):
    _load("v4.1", warehouse_path)
    with open_writer(warehouse_path):
        pass  # the lock is re-entrant across runs, released on exit
    reader = duckdb.connect(str(warehouse_path), read_only=True)
    assert reader.execute("select count(*) from systems").fetchone()[0] == 86
    reader.close()


def test_a_second_writer_waits_and_says_so(warehouse_path):
    import subprocess
    import sys
    import time

    from conftest import PROJECT

    holder = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys, time\n"
            "from mlperf_scaling.warehouse.connection import writer_lock\n"
            "with writer_lock(sys.argv[2]):\n    print('held', flush=True); time.sleep(3)"
        ), str(PROJECT), str(warehouse_path)],
        stdout=subprocess.PIPE, text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    said = []
    started = time.monotonic()
    with open_writer(warehouse_path, say=said.append):
        waited = time.monotonic() - started
    holder.wait(timeout=30)
    assert waited > 1.0
    assert len(said) == 1 and "being written by another run" in said[0] and "waiting" in said[0]


def test_readers_open_read_only_while_a_load_runs(warehouse_path):
    _load("v4.1", warehouse_path)
    with open_writer(warehouse_path) as writer:
        writer.execute("delete from scores where round = 'v4.1'")
        # another connection, read-only, during the write: it opens and sees the previous version
        reader = duckdb.connect(str(warehouse_path), read_only=True)
        assert reader.execute("select count(*) from scores").fetchall() == [(154,)]
        reader.close()
    reader = duckdb.connect(str(warehouse_path), read_only=True)
    assert reader.execute("select count(*) from scores").fetchall() == [(0,)]  # the write is in after the swap
    reader.close()


def test_a_failed_write_leaves_the_warehouse_as_it_was(warehouse_path):
    _load("v4.1", warehouse_path)
    before = _checksums(warehouse_path)
    with pytest.raises(RuntimeError, match="boom"):
        with open_writer(warehouse_path) as writer:
            writer.execute("delete from scores")
            raise RuntimeError("boom")
    assert _checksums(warehouse_path) == before
    assert not warehouse_path.with_name(warehouse_path.name + ".draft").exists()


def test_a_warehouse_of_other_table_definitions_is_rebuilt_and_says_so(warehouse_path):
    from mlperf_scaling.tasks.load.versions import loaded_versions

    _load("v4.1", warehouse_path)
    assert set(loaded_versions(str(warehouse_path))) == {"v4.1"}
    with duckdb.connect(str(warehouse_path)) as connection:  # as a warehouse written before this version
        connection.execute("alter table runs drop column failed_rule")
        connection.execute("drop table warehouse_info")
    assert loaded_versions(str(warehouse_path)) == {}  # every round counts as new: the next run reads them again
    said = []
    with open_writer(warehouse_path, say=said.append) as connection:
        assert connection.execute("select count(*) from runs").fetchall() == [(0,)]
        assert "failed_rule" in {row[0] for row in connection.execute("describe runs").fetchall()}
    assert said and "rebuilt from scratch" in said[0]
    _load("v4.1", warehouse_path)
    assert set(loaded_versions(str(warehouse_path))) == {"v4.1"}


def test_a_warehouse_this_process_wrote_is_known_current_without_opening_it(warehouse_path, monkeypatch):
    from mlperf_scaling.warehouse import connection

    with open_writer(warehouse_path) as writer:
        writer.execute("insert into warehouse_info select * from warehouse_info where false")
    opened = []
    monkeypatch.setattr(connection, "stored_schema_version", opened.append)
    assert connection.is_current(warehouse_path) and opened == []
    monkeypatch.undo()
    with duckdb.connect(str(warehouse_path)) as other:  # changed since, by another program: asked again
        other.execute("drop table warehouse_info")
    assert not connection.is_current(warehouse_path)


def test_query_and_export_read_only_for_any_tool(real_slice, tmp_path, capsys):
    from conftest import ingest_source

    from mlperf_scaling.cli import main

    warehouse = tmp_path / "w.duckdb"
    ingest_source(str(real_slice), warehouse)
    with connect(warehouse, read_only=True) as connection:
        # DuckDB 1.0's storage format: the 1.x command-line tool and libraries open it
        tags = dict(connection.execute("select database_name, tags from duckdb_databases()").fetchall())
    assert tags["w"]["storage_version"] == "v1.0.0+"

    assert main(["query", "select round, n_runs, n_valid_runs from round_summary", "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["round", "n_runs", "n_valid_runs"] and out[1].split() == ["v4.1", "10", "10"] and out[-1] == "1 row"
    assert main(["query", "select system, accelerators from systems", "--format", "csv", "--warehouse", str(warehouse)]) == 0
    assert capsys.readouterr().out == "system,accelerators\nb200_preview_nemo,8\n"
    before = warehouse.read_bytes()
    assert main(["query", "delete from runs", "--warehouse", str(warehouse)]) == 2
    assert "the statement is a DELETE: `query` only reads" in capsys.readouterr().err and warehouse.read_bytes() == before
    # nor does it write a file: COPY ... TO and EXPORT are refused before anything runs, the first statement included
    target = tmp_path / "copied.csv"
    for sql in (f"select 1; copy runs to '{target}'", f"export database '{tmp_path / 'exported'}'", f"attach '{tmp_path / 'new.duckdb'}'"):
        assert main(["query", sql, "--warehouse", str(warehouse)]) == 2
        err = capsys.readouterr().err
        assert "only reads" in err and "nothing was run" in err and err.count("\n") == 1
    assert not target.exists() and not (tmp_path / "exported").exists() and not (tmp_path / "new.duckdb").exists()
    assert main(["query", "select * from no_such_table", "--warehouse", str(warehouse)]) == 2
    assert capsys.readouterr().err.startswith("mlperf-scaling: Catalog Error: Table with name no_such_table does not exist!")

    folder = tmp_path / "export"
    assert main(["export", str(folder), "--warehouse", str(warehouse)]) == 0
    assert {"runs.parquet", "scores.parquet", "rejections.parquet", "recommendations.parquet", "schema.sql", "load.sql"} <= {
        p.name for p in folder.iterdir()}
    assert pl.read_parquet(folder / "runs.parquet").height == 10
    fresh = duckdb.connect()
    fresh.execute(f"import database '{folder}'")
    assert fresh.execute("select count(*) from runs").fetchone() == (10,)
    assert main(["export", str(folder), "--warehouse", str(warehouse)]) == 2  # never mixed into an earlier export
    assert "is not an empty folder" in capsys.readouterr().err


def test_an_unchanged_run_is_answered_without_starting_anything(real_slice, tmp_path):
    import tarfile

    from conftest import ingest_source

    from mlperf_scaling.fast_path import unchanged_run

    mirror, reports, warehouse = tmp_path / "mirror", tmp_path / "reports", tmp_path / "w.duckdb"
    mirror.mkdir()
    archive = mirror / "training_results_v4.1.tar.gz"
    with tarfile.open(archive, "w:gz") as out:
        out.add(real_slice, arcname="training_results_v4.1")
    assert unchanged_run(None, mirror, "https://example.org/", warehouse, reports) is None  # nothing loaded yet
    ingest_source(str(archive), warehouse)
    assert unchanged_run(None, mirror, "https://example.org/", warehouse, reports) is None  # no reports yet
    for page in ("index.html", "trends/index.html", "why/index.html", "v4.1/index.html", "explore.html"):
        (reports / page).parent.mkdir(parents=True, exist_ok=True)
        (reports / page).write_text("<html></html>")
    # the pages across rounds not known to be made from the rounds loaded now (a run failed making them, or a round
    # was loaded by `ingest` alone): the full run, which makes them again
    assert unchanged_run(None, mirror, "https://example.org/", warehouse, reports) is None
    from mlperf_scaling.tasks.publish.stamp import stamp_pages

    stamp_pages(reports, str(warehouse))
    (summary,) = unchanged_run(None, mirror, "https://example.org/", warehouse, reports)
    assert (summary.round, summary.status, summary.n_runs) == ("v4.1", "unchanged", 10)
    # its seconds are this run's (checking the version), not those of the load that read and scored it
    import duckdb

    with duckdb.connect(str(warehouse), read_only=True) as connection:
        (loading,) = connection.execute("select seconds from ingestions").fetchone()
    assert 0 <= summary.seconds < 2 and summary.seconds != loading
    assert unchanged_run(["v4.1", "v5.1"], mirror, "https://example.org/", warehouse, reports) is None  # v5.1 not in the mirror
    with archive.open("ab") as handle:  # another version of the round: the full run
        handle.write(b"\0" * 512)
    assert unchanged_run(None, mirror, "https://example.org/", warehouse, reports) is None
    archive.write_bytes(archive.read_bytes()[:-512])
    assert unchanged_run(None, mirror, "https://example.org/", warehouse, reports) is not None
