"""Faults of the machine, as a class: wherever a command must write (the warehouse's folder, the reports, Prefect's
home) and the machine does not let it, the command stops before any work in one line naming the path and what to do,
exit 2, with nothing made and nothing lost. Each injector makes one such fault from what a user really meets; every
command that writes there meets every injector."""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

import pytest

from mlperf_scaling.cli import main


def a_file_where_the_folder_is(tmp_path: Path) -> Path:
    target = tmp_path / "taken"
    target.write_text("a file, not a folder\n")
    return target


def a_file_above_the_folder(tmp_path: Path) -> Path:
    above = tmp_path / "above"
    above.write_text("a file, not a folder\n")
    return above / "below"


def a_filesystem_nobody_writes(tmp_path: Path) -> Path:
    return Path("/proc/mlperf-scaling-test/folder")  # even root cannot make a folder there


INJECTORS = [a_file_where_the_folder_is, a_file_above_the_folder, a_filesystem_nobody_writes]
# (where, how the command names it, the commands that write there, how each is given the path)
PLACES = [
    ("warehouse", "--warehouse's folder", ["run", "ingest", "analyze", "trends", "watch"], lambda folder: ["--warehouse", str(folder / "w.duckdb")]),
    ("reports", "--reports", ["run", "analyze", "trends", "watch", "explore"], lambda folder: ["--reports", str(folder)]),
]
ARGUMENTS = {"run": ["--mirror", "{mirror}"], "ingest": ["{mirror}/training_results_v5.1"], "analyze": ["--round", "v4.1"],
             "trends": [], "watch": [], "explore": []}


@pytest.mark.parametrize("inject", INJECTORS, ids=lambda f: f.__name__)
@pytest.mark.parametrize(("place", "named", "commands", "given"), PLACES, ids=[p[0] for p in PLACES])
def test_a_place_the_machine_will_not_let_a_command_write_is_one_line_before_any_work(inject, place, named, commands, given,
                                                                                     tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    mirror = tmp_path / "mirror"
    (mirror / "training_results_v5.1").mkdir(parents=True)
    folder = inject(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    for command in commands:
        argv = [command, *(a.replace("{mirror}", str(mirror)) for a in ARGUMENTS[command]), *given(folder)]
        started = time.monotonic()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"mlperf-scaling: {named} {folder}"), err
        assert time.monotonic() - started < 10
        assert sorted(p.name for p in tmp_path.iterdir()) == before, "something was made"


def test_a_round_report_made_read_only_is_one_line_before_any_work(tmp_path, monkeypatch, capsys):
    from mlperf_scaling.runtime import paths

    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports" / "v4.1" / "plots").mkdir(parents=True)
    (tmp_path / "reports" / "v4.1" / "index.html").write_text("<title>v4.1</title>")
    locked = tmp_path / "reports" / "v4.1"
    real = os.access
    # as `chmod -R a-w reports/v4.1` leaves it for a user (root passes every permission check, so it is told here)
    monkeypatch.setattr(paths.os, "access", lambda path, mode: not Path(path).resolve().is_relative_to(locked) and real(path, mode))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    (tmp_path / "mirror" / "training_results_v5.1").mkdir(parents=True)
    for argv in (["analyze", "--round", "v4.1"], ["run", "--mirror", str(tmp_path / "mirror")], ["trends"], ["explore"]):
        assert main([*argv, "--warehouse", str(tmp_path / "w.duckdb"), "--reports", "reports"]) == 2, argv
        assert capsys.readouterr().err == ("mlperf-scaling: --reports reports: reports/v4.1 is not writable by this user: make it "
                                           "writable (chmod -R u+w reports), or point --reports at another folder\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mirror", "reports"]
    # what the command never rewrites is not asked: a read-only .git of the reports, a CNAME
    from mlperf_scaling.runtime.paths import tree_problem

    (tmp_path / "reports" / ".git" / "objects").mkdir(parents=True)
    (tmp_path / "reports" / "CNAME").write_text("reports.example.org")
    monkeypatch.setattr(paths.os, "access", lambda path, mode: Path(path).name not in (".git", "objects", "CNAME") and real(path, mode))
    assert tree_problem(tmp_path / "reports", "--reports") is None


def test_an_analysis_refused_midway_is_one_line_without_a_traceback(prefect_isolated, v41_warehouse, tmp_path, monkeypatch, capsys):
    import shutil

    from mlperf_scaling.tasks.publish import steps

    warehouse = tmp_path / "w.duckdb"
    shutil.copyfile(v41_warehouse, warehouse)
    monkeypatch.setattr(steps, "write_index", refuse(errno.EACCES, lambda folder, page: Path(folder) / "index.html"))
    assert main(["analyze", "--round", "v4.1", "--warehouse", str(warehouse), "--reports", str(tmp_path / "reports")]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.rstrip("\n").splitlines()[-1].startswith(f"mlperf-scaling: the reports {tmp_path / 'reports'}: permission denied")


def test_prefects_home_that_cannot_be_written_is_one_line_before_any_work(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)  # a temporary API would keep its database there
    monkeypatch.setenv("PREFECT_HOME", str(a_file_where_the_folder_is(tmp_path)))
    assert main(["trends", "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    assert err == f"mlperf-scaling: Prefect's home (PREFECT_HOME) {tmp_path / 'taken'} is a file, where a folder must be: give a folder, or move the file away\n"
    assert os.listdir(tmp_path) == ["taken"]


def test_a_page_that_links_a_file_that_is_not_there_is_found(tmp_path):
    from mlperf_scaling.tasks.publish.report import missing_links
    from mlperf_scaling.tasks.publish.steps import check_reports

    round_folder = tmp_path / "v4.1"
    (round_folder / "plots").mkdir(parents=True)
    (round_folder / "plots" / "bert_time.svg").write_text("<svg/>")
    (round_folder / "index.html").write_text('<a href="../index.html">all</a><img src="plots/bert_time.svg"><img src="plots/bert_scaling.svg">'
                                             '<a href="https://mlcommons.org">MLCommons</a><a href="#answer">answer</a><section id="answer"></section>')
    (tmp_path / "index.html").write_text('<a href="v4.1/index.html">v4.1</a><a href="trends/index.html">trends</a>')
    assert missing_links(round_folder / "index.html") == ["plots/bert_scaling.svg"]  # the figure a worker wrote elsewhere
    # an anchor is a link too: to a section the page, or another, does not have; a view's state is the explorer's
    (round_folder / "anchors.html").write_text('<section id="answer"></section><a href="#answer">here</a><a href="#gone">gone</a>'
                                               '<a href="index.html#bert">section</a><a href="explore.html#workload=bert">view</a>'
                                               '<a href="../v4.1/anchors.html#answer">there</a>')
    (round_folder / "explore.html").write_text("<div></div>")
    assert missing_links(round_folder / "anchors.html") == ["#gone", "index.html#bert"]
    assert check_reports.fn(str(tmp_path), ["v4.1"]) == {"v4.1": ["v4.1/index.html: plots/bert_scaling.svg"],
                                                         "": ["index.html: trends/index.html"]}


# Faults that arrive midway, after the checks before any work: each injector makes the machine refuse at one boundary
# (the warehouse's swap, a report page's write) with the error the system gives there, and the command must end in
# one line naming the place and what to do, exit 1, no traceback, the warehouse as it was and no copy left behind.
MIDWAY = [
    (errno.ENOSPC, "no space left on the device", "free space there"),
    (errno.EROFS, "the file system is read-only", "make it writable"),
    (errno.EPERM, "the operation is not permitted", "chattr -i"),
    (errno.EIO, "an input/output error", "check the disk"),
]


def refuse(code: int, path_of):
    def refused(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(path_of(*args)))

    return refused


def warehouse_state(path: Path) -> tuple:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as connection:
        return tuple(connection.execute(f"select count(*), coalesce(sum(hash(r)), 0) from {table} as r").fetchall()[0]
                     for table in ("systems", "runs", "scores", "rejections"))


@pytest.mark.parametrize(("code", "fault", "todo"), MIDWAY, ids=[errno.errorcode[m[0]] for m in MIDWAY])
def test_the_warehouse_refused_midway_is_one_line_and_loses_nothing(code, fault, todo, prefect_isolated, tmp_path, monkeypatch, capsys):
    from conftest import fixture_round

    from mlperf_scaling.warehouse import connection

    source = str(fixture_round("v5.1", tmp_path))
    warehouse = tmp_path / "w.duckdb"
    assert main(["ingest", source, "--warehouse", str(warehouse)]) == 0
    before, files = warehouse_state(warehouse), sorted(os.listdir(tmp_path))
    capsys.readouterr()
    monkeypatch.setattr(connection.os, "replace", refuse(code, lambda draft, target: draft))  # the swap of the written copy
    assert main(["ingest", source, "--warehouse", str(warehouse)]) == 1
    err = capsys.readouterr().err
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith(f"mlperf-scaling: stopped at v5.1: the warehouse {warehouse}: {fault}") and todo in last, last
    assert "--warehouse" in last and "Traceback" not in err
    monkeypatch.undo()
    assert warehouse_state(warehouse) == before and sorted(os.listdir(tmp_path)) == files  # nothing lost, no copy left


def _refuse_the_warehouse(monkeypatch, code):
    from mlperf_scaling.warehouse import connection

    monkeypatch.setattr(connection.os, "replace", refuse(code, lambda draft, target: draft))


def _refuse_the_reports(monkeypatch, code):
    from mlperf_scaling.tasks.publish import steps

    monkeypatch.setattr(steps, "write_index", refuse(code, lambda folder, page: Path(folder) / "index.html"))


# (the boundary, how the first round's failure begins, what becomes of the second round)
RUN_BOUNDARIES = [
    (_refuse_the_warehouse, "stopped at v4.1: the warehouse", "v5.1: not started: the warehouse"),  # found before v5.1 starts
    (_refuse_the_reports, "stopped at v4.1: loaded, but analysis failed: the reports", "v5.1: loaded, but analysis failed: the reports"),
]


@pytest.mark.parametrize(("inject", "said", "second"), RUN_BOUNDARIES, ids=["warehouse", "reports"])
@pytest.mark.parametrize(("code", "fault", "todo"), MIDWAY[:2], ids=[errno.errorcode[m[0]] for m in MIDWAY[:2]])
def test_the_main_job_refused_midway_ends_in_one_line(inject, said, second, code, fault, todo, prefect_isolated, tmp_path, monkeypatch,
                                                      capsys):
    from conftest import fixture_round

    mirror = tmp_path / "mirror"
    for round_name in ("v4.1", "v5.1"):
        fixture_round(round_name, mirror)
    inject(monkeypatch, code)
    assert main(["run", "--mirror", str(mirror), "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")]) == 1
    out, err = capsys.readouterr()
    last = err.rstrip("\n").splitlines()[-1]
    assert last.startswith(f"mlperf-scaling: {said}") and fault in last and todo in last, last
    assert "Traceback" not in err
    assert second in out
    assert not list(tmp_path.glob("*.draft"))


def _polars_writes_the_front_page_to_a_full_disk(monkeypatch):
    """The front page's CSV written by polars itself onto a device that is always full: polars' own error, an OSError
    with no errno ("No space left on device (os error 28)")."""
    from mlperf_scaling.tasks.publish import steps

    real = steps.write_tables

    def full(folder, tables):
        if "best_recommendations" in tables:
            tables["best_recommendations"].write_csv("/dev/full")
        return real(folder, tables)

    monkeypatch.setattr(steps, "write_tables", full)


def test_the_front_pages_csv_refused_by_polars_ends_in_one_line(prefect_isolated, tmp_path, monkeypatch, capsys):
    from conftest import fixture_round

    mirror = tmp_path / "mirror"
    fixture_round("v5.1", mirror)
    _polars_writes_the_front_page_to_a_full_disk(monkeypatch)
    warehouse = tmp_path / "w.duckdb"
    assert main(["run", "--mirror", str(mirror), "--warehouse", str(warehouse), "--reports", str(tmp_path / "reports")]) == 1
    out, err = capsys.readouterr()
    last = err.rstrip("\n").splitlines()[-1]
    assert "no space left on the device" in last and "--reports" in last and last.startswith("mlperf-scaling: "), last
    assert "Traceback" not in err and "Traceback" not in out
    assert warehouse_state(warehouse)[2][0] > 0  # the round is kept


@pytest.mark.parametrize("library", ["polars", "duckdb"])
def test_a_full_disk_said_by_a_library_without_an_errno_is_the_machines(library, tmp_path):
    import duckdb
    import polars as pl

    from mlperf_scaling.failures import machine_fault

    try:
        if library == "polars":
            pl.DataFrame({"n": range(100_000)}).write_csv("/dev/full")
        else:
            duckdb.connect().execute("copy (select range from range(100000)) to '/dev/full' (format csv)")
    except Exception as exc:  # noqa: BLE001 - whatever the library raises is what is read
        said = str(machine_fault(exc, "the reports", tmp_path, "--reports"))
    else:
        pytest.fail(f"{library} wrote to /dev/full")
    assert said.startswith(f"the reports {tmp_path}: no space left on the device") and said.endswith("point --reports at another disk")


def test_a_fault_worded_by_duckdb_is_read_as_the_machines():
    import duckdb

    from mlperf_scaling.failures import machine_fault

    # DuckDB's own words when the disk filled up under a load (a real run on a 2 MB file system)
    full = duckdb.FatalException('FATAL Error: Failed to create checkpoint because of error: Could not write file '
                                 '"/data/w.duckdb.draft": No space left on device')
    said = str(machine_fault(full, "the warehouse", "/data/w.duckdb", "--warehouse"))
    assert said == ("the warehouse /data/w.duckdb: no space left on the device (/data/w.duckdb.draft): free space there, or point "
                    "--warehouse at another disk")
    assert machine_fault(duckdb.CatalogException("Table with name runs does not exist"), "the warehouse", "/w", "--warehouse") is None
    assert machine_fault(ValueError("bad number"), "the reports", "/r", "--reports") is None


def test_a_served_api_that_does_not_answer_is_one_line_before_any_work(tmp_path, monkeypatch, capsys):
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{port}/api")
    started = time.monotonic()
    assert main(["trends", "--warehouse", str(tmp_path / "w.duckdb"), "--reports", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mlperf-scaling: Prefect's API at http://127.0.0.1:{port}/api (PREFECT_API_URL) does not answer")
    assert "unset PREFECT_API_URL" in err and time.monotonic() - started < 10 and os.listdir(tmp_path) == []


def test_prefects_home_without_room_is_named_when_its_api_fails(tmp_path, monkeypatch):
    import shutil

    from mlperf_scaling.runtime import local_api

    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.setattr(local_api.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9 - 2 * 10**6, 2 * 10**6))
    from prefect.settings import PREFECT_HOME, temporary_settings

    with temporary_settings({PREFECT_HOME: str(tmp_path)}):
        said = local_api.home_problem()
    assert said == (f"Prefect's home (PREFECT_HOME) {tmp_path} has 2.0 MB free, too little for its database: free space there, or set "
                    "PREFECT_HOME to a folder on another disk")


@pytest.mark.parametrize("command", [["analyze", "--round", "v5.1"], ["plan", "bert"], ["query", "select 1"], ["ingest", "{slice}"]])
def test_a_warehouse_cut_short_is_one_line_before_any_work(command, prefect_isolated, tmp_path, capsys):
    from conftest import fixture_round

    source = str(fixture_round("v5.1", tmp_path))
    warehouse = tmp_path / "w.duckdb"
    assert main(["ingest", source, "--warehouse", str(warehouse)]) == 0
    data = warehouse.read_bytes()
    warehouse.write_bytes(data[: len(data) // 2])  # a crash, or a copy that did not finish
    capsys.readouterr()
    before = sorted(os.listdir(tmp_path))
    assert main([part.replace("{slice}", source) for part in command] + ["--warehouse", str(warehouse)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"mlperf-scaling: --warehouse {warehouse} is damaged (IO Error: "), err
    assert "restore it from a copy, or move it away" in err and sorted(os.listdir(tmp_path)) == before
