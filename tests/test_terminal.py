"""Tables that fit the terminal: `plan`, `paper-table`, `query` and the run summary rendered at 80, 100 and 120
columns keep every number of the rows under them whole (or name the column they left out), never cut to "…"."""

from __future__ import annotations

import re

import polars as pl
import pytest
from rich.console import Console

from mlperf_scaling import cli, terminal
from mlperf_scaling.terminal import Column, fit, format_value

WIDTHS = [80, 100, 120]


def _shown(value: str, out: str) -> bool:
    """`value` appears whole: not as part of a longer number, and not cut."""
    return re.search(rf"(?<![\d.,]){re.escape(value)}(?![\d.,]*\d)", out) is not None


def _render(renderables, width: int) -> str:
    console = Console(width=width, color_system=None, highlight=False)
    with console.capture() as captured:
        for renderable in renderables:
            console.print(renderable)
    return captured.get()


@pytest.fixture
def at_width(monkeypatch, capsys):
    """Runs the command line as in a terminal `width` columns wide, and returns what it printed."""

    def run(argv: list[str], width: int) -> str:
        monkeypatch.setattr(terminal, "command_console", lambda: Console(width=width, color_system=None, highlight=False))
        assert cli.main(argv) == 0
        out = capsys.readouterr().out
        assert all(len(line) <= width for line in out.splitlines()), f"a line wider than {width} columns"
        return out

    return run


def _left_out(out: str) -> str:
    found = re.search(r"Left out to fit \d+ columns: ([^(]*)\(", out.replace("\n", " "))
    return found[1] if found else ""


@pytest.mark.parametrize(
    ("value", "text"),
    [(1024, "1,024"), (13888.0, "13,888"), (768.0, "768"), (406.694, "406.694"), (0.84345678, "0.8435"), (1234567.891, "1,234,568"),
     (0.000123, "0.000123"), (None, ""), (True, "true"), (float("nan"), "nan"), (-2.5, "-2.5")],
)
def test_values_print_as_a_person_reads_them(value, text):
    assert format_value(value) == text


def test_a_table_too_wide_leaves_out_the_least_needed_columns_and_says_so():
    columns = [Column("N"), Column("time (min)"), Column("runs min-max", drop=2), Column("throughput part", drop=1),
               Column("system", text=True)]
    rows = [[1024, 3.07, "2.90-3.52", 0.77, "NVIDIA/eos_n128_ngc24.09_nemo"], [4, 58.42, "57.40-65.10", None, "Dell/XE9640x4H100-SXM-80GB"]]
    wide = _render(fit(columns, rows, 120), 120)
    assert "Left out" not in wide and all(_shown(v, wide) for v in ("1,024", "3.07", "2.90-3.52", "0.77", "58.42"))
    narrow = _render(fit(columns, rows, 44), 44)
    assert "Left out to fit 44 columns: throughput part, runs min-max" in " ".join(narrow.split())
    assert all(_shown(v, narrow) for v in ("1,024", "3.07", "4", "58.42")) and "…" not in narrow
    stacked = _render(fit(columns, rows, 24), 24)  # even N, time and system cannot sit side by side
    assert "one block per row" in " ".join(stacked.split()) and all(_shown(v, stacked) for v in ("1,024", "3.07", "2.90-3.52", "0.77"))


def test_a_column_with_nothing_in_it_goes_first_and_silently():
    columns = [Column("N"), Column("energy (kWh)", drop=5), Column("time (min)")]
    out = _render(fit(columns, [[8, None, 27.5], [16, None, 14.1]], 30), 30)
    assert "energy" not in out and "Left out" not in out and _shown("27.5", out)


@pytest.mark.parametrize("width", WIDTHS)
def test_plan_keeps_every_number(v41_warehouse, at_width, width):
    from mlperf_scaling.tasks.planning.calibration import load_calibration
    from mlperf_scaling.tasks.planning.plan import make_plan, select
    from mlperf_scaling.warehouse.read import read_queries

    out = at_width(["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--round", "v4.1", "--warehouse", str(v41_warehouse)], width)
    efficiency, backtest = read_queries(v41_warehouse, "all_efficiency", "all_backtest")
    # the intervals as `plan` states them: at the level the round's other groups set
    plan = make_plan(select(efficiency, "llama2_70b_lora", "H100-SXM", "v4.1"), calibration=load_calibration().with_backtest(backtest))
    rows = plan.selection.rows
    assert rows.height == 20 and "…" not in out
    left_out = _left_out(out)
    expected = {
        "N": [f"{n:,}" for n in rows["accelerators"]], "time (min)": [f"{t:,.2f}" for t in rows["time_to_train_min"]],
        "efficiency": [f"{e:.2f}" for e in rows["efficiency"]],
        "runs min-max": [f"{lo:,.2f}-{hi:,.2f}" for lo, hi in zip(rows["time_to_train_min_low"], rows["time_to_train_min_high"], strict=True)],
        "throughput part": [f"{p:.2f}" for p in rows["throughput_part"]], "convergence part": [f"{p:.2f}" for p in rows["convergence_part"]],
        "global batch": [f"{b:,.0f}" for b in rows["global_batch_size"]], "acc.-hours": [f"{h:,.1f}" for h in rows["accelerator_hours"]],
    }
    for column, values in expected.items():
        if column in left_out:
            continue
        missing = [v for v in values if not _shown(v, out)]
        assert not missing, f"{column} at {width} columns: {missing} not shown"
    assert {"N", "time (min)", "efficiency"}.isdisjoint(left_out.split(", "))
    for step in plan.steps:
        assert _shown(f"{step.accelerators:,}", out) and _shown(f"{step.time_min:,.2f}", out)
        if step.time_min_low is not None:  # a predicted count: its interval whole
            assert _shown(f"[{step.time_min_low:,.2f},", out) and _shown(f"{step.time_min_high:,.2f}]", out)
    assert "1,024" in out  # the largest count, which rich cut to "1,…" at 100 columns
    assert "128 H100-SXM: measured 3.07 min" in " ".join(out.split())
    if width == 80:
        assert left_out.strip().rstrip(",")  # 80 columns cannot hold all ten: the note names what went


@pytest.mark.parametrize("width", WIDTHS)
def test_paper_table_keeps_every_number(v41_warehouse, at_width, width):
    from mlperf_scaling.tasks.metrics.paper_table import PAPER_TABLE_I

    out = at_width(["paper-table", "--warehouse", str(v41_warehouse)], width)
    assert "…" not in out
    for paper in PAPER_TABLE_I:
        line = next(line for line in out.splitlines() if line.startswith(paper.label))
        assert _shown(f"{paper.systems:,}", line) and _shown(f"{paper.reference_accelerators:,}", line)
        assert _shown(f"{paper.reference_time_min:.2f}", line)
    assert _shown("366.185", out) and _shown("61.870", out)  # this warehouse's reference times


@pytest.mark.parametrize("width", WIDTHS)
def test_the_readmes_query_keeps_every_value(v41_warehouse, at_width, width):
    from mlperf_scaling.warehouse.export import run_queries

    sql = "select * from latest_recommendations where benchmark_canonical = 'bert'"
    out = at_width(["query", sql, "--warehouse", str(v41_warehouse)], width)
    (rows,) = run_queries(v41_warehouse, sql)
    assert rows.height == 7 and rows.width == 46 and "…" not in out
    assert "46 columns do not fit" in " ".join(out.split())  # side by side they cannot: one block per row
    flat = "".join(out.split())
    for name, dtype in rows.schema.items():
        for value in rows[name]:
            if value is None:
                continue
            text = format_value(value)
            assert _shown(text, out) if dtype.is_numeric() else "".join(text.split()) in flat, f"{name}: {text!r} missing"


def test_query_prints_a_narrow_result_as_a_table_and_runs_every_statement(v41_warehouse, at_width):
    from mlperf_scaling.warehouse.export import run_queries

    sql = "select 1 as a; select accelerators, count(*) as systems from systems group by 1 order by 1"
    out = at_width(["query", sql, "--warehouse", str(v41_warehouse)], 80)
    assert out.startswith("Statement 1 of 2\n") and "Statement 2 of 2" in out
    _, counts = run_queries(v41_warehouse, sql)
    lines = out.splitlines()
    header = lines.index("Statement 2 of 2") + 1
    assert lines[header].split() == ["accelerators", "systems"]
    assert [line.split() for line in lines[header + 1:header + 1 + counts.height]] == [
        [f"{n:,}", f"{k:,}"] for n, k in counts.iter_rows()]
    assert counts.height > 10 and lines[header + 1 + counts.height] == f"{counts.height} rows"


def test_query_in_csv_takes_one_statement(v41_warehouse, capsys):
    assert cli.main(["query", "select 1; select 2", "--format", "csv", "--warehouse", str(v41_warehouse)]) == 2
    err = capsys.readouterr().err
    assert err == ("mlperf-scaling: --format csv writes one result and the SQL holds 2 statements: give one "
                   "(every statement runs with --format table or records)\n")


def test_query_records_stack_every_row(v41_warehouse, at_width):
    out = at_width(["query", "select system, accelerators from systems order by accelerators desc limit 2", "--format", "records",
                    "--warehouse", str(v41_warehouse)], 80)
    assert out.startswith("[1]\n") and "[2]" in out and re.search(r"accelerators\s+\d", out)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_run_summary_keeps_every_count(at_width, width, monkeypatch):
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

    summary = RoundOutcome("v4.1", "succeeded", "../shared/mlperf/training_results_v4.1.tar.gz", n_systems=160, n_runs=1_663,
                           n_valid_runs=1_615, n_scores=162, n_scored=158, n_rejections=12, seconds=3.4)
    console = Console(width=width, color_system=None, highlight=False)
    monkeypatch.setattr(terminal, "command_console", lambda: console)
    with console.capture() as captured:
        assert cli._print_summaries([summary]) == 0
    out = captured.get()
    assert all(_shown(v, out) for v in ("160", "1,663", "1,615", "162", "158", "12", "3.4")) and "…" not in out


def test_plan_writes_csv_and_json(v41_warehouse, capsys):
    import json

    argv = ["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--round", "v4.1", "--accelerators", "256",
            "--warehouse", str(v41_warehouse)]
    assert cli.main([*argv, "--format", "csv"]) == 0
    rows = pl.read_csv(capsys.readouterr().out.encode())
    kinds = rows["kind"].value_counts().sort("kind")
    assert dict(kinds.iter_rows()) == {"at_accelerators": 1, "best": 10, "measured": 20, "other_model": 1, "recommended": 1}
    models = rows.filter(pl.col("kind").is_in(["at_accelerators", "other_model"]))["model"].to_list()
    assert sorted(models) == ["amdahl", "two-part"]
    best = rows.filter(pl.col("kind") == "best")
    assert best.filter(pl.col("basis") == "measured").height == 8 and best.filter(pl.col("basis") == "predicted")["time_min_low"].is_not_null().all()
    assert rows.filter(pl.col("kind") == "recommended")["accelerators"].to_list() == [128]
    assert rows.filter(pl.col("kind") == "measured")["accelerators"].max() == 1024
    assert cli.main([*argv, "--format", "json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["round"], document["accelerator_group"], len(document["measured"])) == ("v4.1", "H100-SXM", 20)
    assert document["recommendation"]["accelerators"] == 128 and document["at_accelerators"]["accelerators"] == 256
    assert document["other_model"]["accelerators"] == 256 and document["other_model"]["model"] != document["at_accelerators"]["model"]
    assert document["recommendation"]["sentence"].startswith("128 H100-SXM: measured 3.07 min")
    assert "time_min_low" not in document["measured"][0]  # a part keeps only the fields it has


@pytest.mark.parametrize("width", [40, 60, 80])
def test_system_names_break_after_a_separator_never_inside_a_token(width):
    from conftest import read_shipped_round

    from mlperf_scaling.wrapping import SEPARATORS

    data, _ = read_shipped_round("v4.1")
    names = sorted(set(data.scores["system"].to_list()), key=len, reverse=True)[:12]  # the longest of the round
    columns = [Column("submitter", text=True), Column("system", text=True), Column("accelerators")]
    rows = [["NVIDIA", name, 8] for name in names]
    out = _render(fit(columns, rows, width), width)
    lines = out.splitlines()
    for name in names:
        for token in filter(None, re.split(rf"[{re.escape(SEPARATORS)}\s]", name)):
            if len(token) <= width // 2:  # a token wider than its column must fold; none here is
                assert any(re.search(rf"(?<![A-Za-z0-9]){re.escape(token)}(?![A-Za-z0-9])", line) for line in lines), (name, token)
    # and every character is there, in order: the column alone, 20 columns wide
    alone = _render(fit([Column("system", text=True)], [[name] for name in names], 20), 20)
    flat = "".join("".join(line.split()) for line in alone.splitlines())
    assert all("".join(name.split()) in flat for name in names)


def test_piped_output_carries_no_trailing_blanks(v41_warehouse, capsys):
    # the real console of the command line, writing to a pipe (capsys is no terminal)
    for argv in (["query", "select * from latest_recommendations where benchmark_canonical = 'bert'"],
                 ["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--round", "v4.1"]):
        assert cli.main([*argv, "--warehouse", str(v41_warehouse)]) == 0
        out = capsys.readouterr().out
        assert out.count("\n") > 20 and [line for line in out.splitlines() if line != line.rstrip()] == [], argv[0]


def test_describe_says_what_each_column_means(v41_warehouse):
    from mlperf_scaling.warehouse.export import run_queries

    (described,) = run_queries(v41_warehouse, "describe scores")
    comments = dict(zip(described["column_name"], described["comment"], strict=True))
    # the contracts' descriptions, kept by DuckDB as column comments and shown only by duckdb_columns() before
    assert comments["round"] == "MLPerf round, e.g. v4.1 (Training) or hpc-v3.0 (HPC)" and "config file" in comments["precision_source"]
    (plain,) = run_queries(v41_warehouse, "select 1 as column_name")
    assert plain.columns == ["column_name"]
