"""Faults of the machine, as a class: wherever a command must write (the warehouse's folder, the reports, Prefect's
home) and the machine does not let it, the command stops before any work in one line naming the path and what to do,
exit 2, with nothing made and nothing lost. Each injector makes one such fault from what a user really meets; every
command that writes there meets every injector."""

from __future__ import annotations

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
                                             '<a href="https://mlcommons.org">MLCommons</a><a href="#answer">answer</a>')
    (tmp_path / "index.html").write_text('<a href="v4.1/index.html">v4.1</a><a href="trends/index.html">trends</a>')
    assert missing_links(round_folder / "index.html") == ["plots/bert_scaling.svg"]  # the figure a worker wrote elsewhere
    assert check_reports.fn(str(tmp_path), ["v4.1"]) == {"v4.1": ["v4.1/index.html: plots/bert_scaling.svg"],
                                                         "": ["index.html: trends/index.html"]}
