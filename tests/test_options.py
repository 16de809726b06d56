"""Every option of every command, given any value: it is taken (and then holds what its type promises) or refused in
one line on stderr with exit 2, never argparse's usage block; the usage only for --help and a missing command."""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import re
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlperf_scaling import arguments, cli
from mlperf_scaling.rounds import ROUND_PATTERN
from mlperf_scaling.settings import Settings


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = cli._parser(Settings())
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(subparsers.choices)


def _options() -> list[tuple[str, argparse.Action]]:
    """(command, option) for every option that takes a value, of every command."""
    return [(name, action) for name, command in _commands().items() for action in command._actions
            if action.option_strings and action.nargs != 0 and not isinstance(action, argparse._HelpAction)]


# the positional words a command needs, so that only the option is on trial
_POSITIONALS = {"ingest": ["training_results_v4.1.tar.gz"], "query": ["select 1"], "export": ["out"]}

# what a value a type takes must hold
_HOLDS = {
    arguments.count: lambda v: isinstance(v, int) and v >= 1,
    arguments.row_limit: lambda v: isinstance(v, int) and v >= 0,
    arguments.positive_number: lambda v: math.isfinite(v) and v > 0,
    arguments.price: lambda v: math.isfinite(v) and v >= 0,
    arguments.fraction: lambda v: 0 < v < 1,
    arguments.deadline: lambda v: math.isfinite(v) and v > 0,
    arguments.round_name: lambda v: re.match(ROUND_PATTERN, v) is not None,
    arguments.plan_round: lambda v: v in arguments.PLAN_ROUNDS or re.match(ROUND_PATTERN, v) is not None,
    arguments.one_round: lambda v: len(v) == 1 and re.match(ROUND_PATTERN, v[0]) is not None,
}

# values people get wrong, and any text at all
VALUES = st.one_of(
    st.sampled_from(["", " ", "abc", "nan", "inf", "-inf", "-1", "0", "0.0", "1e9", "2.5", "-5m", "10s", "1,000", "0x10", "v4.1", "4.1",
                     "v", "best", "csv", "1 2", "--", "-", "\x00", "é"]),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.integers(min_value=-10**12, max_value=10**12).map(str),
    st.text(max_size=12),
)


def _run(argv: list[str]) -> tuple[int, str, argparse.Namespace | None]:
    """The command line up to the point where work would start: exit status, stderr, and the options it took."""
    taken: list[argparse.Namespace] = []

    def record(args, settings, unchanged=None):
        taken.append(args)
        return 0

    err = io.StringIO()
    with mock.patch.object(cli, "_before_any_work", return_value=None), mock.patch.object(cli, "_run", side_effect=record), \
            mock.patch.object(cli, "_command", side_effect=record), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue(), taken[0] if taken else None


OPTIONS = _options()


def test_every_command_has_its_options_on_trial():
    names = {(command, action.option_strings[0]) for command, action in OPTIONS}
    assert {("plan", "--accelerators"), ("plan", "--deadline"), ("plan", "--price-per-accelerator-hour"), ("plan", "--model-params"),
            ("plan", "--round"), ("plan", "--rounds"), ("run", "--rounds"), ("run", "--round"), ("analyze", "--threshold"),
            ("query", "--limit"), ("export", "--format"), ("serve", "--cron")} <= names
    assert len(OPTIONS) >= 40


@pytest.mark.parametrize(("command", "action"), OPTIONS, ids=[f"{c} {a.option_strings[0]}" for c, a in OPTIONS])
@settings(max_examples=40, deadline=None)
@given(value=VALUES)
def test_an_options_value_is_taken_or_refused_in_one_line(command, action, value):
    option = action.option_strings[0]
    extra = ["--round", "v4.1"] if command == "analyze" and option not in ("--round", "--rounds") else []
    code, err, taken = _run([command, *_POSITIONALS.get(command, []), *extra, option, value])
    if code == 0:
        assert taken is not None and err == ""
        got = getattr(taken, action.dest)
        if action.choices is not None:
            assert got in action.choices
        if action.type in _HOLDS:
            held = got if action.nargs != "+" else got[0]
            assert _HOLDS[action.type](held), (option, value, got)
    else:
        assert code == 2, (option, value, code, err)
        assert err.count("\n") == 1 and err.startswith("mlperf-scaling: "), err
        assert "usage:" not in err


@pytest.mark.parametrize(("argv", "said"), [
    (["plan", "resnet", "--accelerators", "1e9"], "mlperf-scaling: --accelerators: not a whole number: '1e9' (e.g. 256)"),
    (["plan", "resnet", "--deadline", "-5m"], "mlperf-scaling: --deadline: expected one value (a value that starts with '-' is written "
                                              "--deadline=VALUE)"),
    (["plan", "resnet", "--deadline=-5m"], "mlperf-scaling: --deadline: a deadline must be longer than zero: '-5m'"),
    (["plan", "resnet", "--price-per-accelerator-hour", "abc"], "mlperf-scaling: --price-per-accelerator-hour: not a number: 'abc' (e.g. 2.5, 70e9)"),
    (["plan", "--model-params", "abc"], "mlperf-scaling: --model-params: not a number: 'abc' (e.g. 2.5, 70e9)"),
    (["plan", "bert", "--round", "v3.1", "--rounds", "v4.1"], "mlperf-scaling: --rounds: not with --round: give one or the other"),
    (["plan", "bert", "--bogus", "3"], "mlperf-scaling: --bogus 3: not an option of plan (`mlperf-scaling plan --help` lists them)"),
    (["plann"], "mlperf-scaling: no command 'plann' (one of ingest, run, analyze, trends, watch, serve, reports, plan, query, export, "
                "explore, paper-table); did you mean plan?"),
    (["plan", "bert", "--acelerator", "H100-SXM"], "mlperf-scaling: --acelerator H100-SXM: not an option of plan (`mlperf-scaling plan --help` "
                                                  "lists them); did you mean --accelerator?"),
    (["plan", "bert", "--deadline", "5", "minutes"], "mlperf-scaling: minutes: not an option of plan (`mlperf-scaling plan --help` lists them); "
                                                     "a value with a space is quoted: --deadline '5 minutes'"),
    (["plan", "--model-params", "70e9", "--tokens", "2e12", "--accelerator", "H100-SXM", "--deadline", "5", "minutes"],
     "mlperf-scaling: minutes: not an option; a value with a space is quoted: --deadline '5 minutes'"),
    (["reports", "--reports-address", "8765"], "mlperf-scaling: reports_address: '8765' is not HOST:PORT (e.g. 127.0.0.1:8765) "
                                               "(MLPERF_REPORTS_ADDRESS or --reports-address)"),
    (["plan", "bert", "--accelerators", "-8"], "mlperf-scaling: --accelerators: cannot be negative: '-8' (e.g. 256)"),
    (["ingest"], "mlperf-scaling: ingest needs SOURCE"),
    (["serve", "--cron", "bad"], "mlperf-scaling: --cron: not a cron schedule: 'bad' (five fields, e.g. '0 6 * * *': daily at 06:00)"),
    (["export", "out", "--format", "xls"], "mlperf-scaling: --format: 'xls' is not one of parquet, csv"),
])
def test_the_mistakes_of_the_issue_are_one_line(argv, said):
    code, err, _ = _run(argv)
    assert (code, err) == (2, said + "\n")


def test_rounds_take_several_and_round_one():
    assert _run(["plan", "bert", "--rounds", "v3.1", "4.1"])[2].round_names == ["v3.1", "v4.1"]
    assert _run(["plan", "bert", "--round", "4.1"])[2].round_name == "v4.1"
    assert _run(["run", "--round", "4.1"])[2].rounds == ["v4.1"]
    assert _run(["run", "--rounds", "v4.1", "v5.1"])[2].rounds == ["v4.1", "v5.1"]
    assert _run(["analyze", "--rounds", "v4.1", "v5.1"])[2].round_names == ["v4.1", "v5.1"]
    code, err, _ = _run(["plan", "bert", "--round", "v3.1", "v4.1"])
    assert code == 2 and err == "mlperf-scaling: v4.1: not an option of plan (`mlperf-scaling plan --help` lists them)\n"


def test_the_usage_is_for_help_and_a_missing_command_only():
    code, err, _ = _run([])
    assert code == 2 and err.startswith("usage: mlperf-scaling") and err.endswith("mlperf-scaling: name a command (`mlperf-scaling --help` lists them)\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["plan", "--help"]) == 0
    assert out.getvalue().startswith("usage: mlperf-scaling plan")


def test_a_decimal_comma_is_refused_not_read_as_thousands():
    code, err, _ = _run(["plan", "resnet", "--accelerators", "200", "--price-per-accelerator-hour", "2,50"])
    assert (code, err) == (2, "mlperf-scaling: --price-per-accelerator-hour: not a number: '2,50' (a comma separates thousands only; "
                              "decimals take a point, e.g. 2.5)\n")
    assert _run(["plan", "resnet", "--accelerators", "1,5"])[0] == 2


@given(st.integers(1, 10**12), st.sampled_from(["", ".5", ".25e3"]))
def test_thousands_separated_by_commas_are_read_as_written(whole, tail):
    assert arguments.count(f"{whole:,}") == whole
    assert arguments.price(f"{whole:,}{tail}") == pytest.approx(float(f"{whole}{tail}"))


def test_a_mirror_with_no_rounds_is_refused_in_one_line_before_any_work(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("not a round\n")
    code = cli.main(["run", "--mirror", str(tmp_path), "--offline", "--warehouse", str(tmp_path / "w.duckdb")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and f"--mirror {tmp_path} holds no training_results_vX.Y.tar.gz" in err
    assert not (tmp_path / "w.duckdb").exists()
