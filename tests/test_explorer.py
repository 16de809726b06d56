"""The explorer: its data and spec from the warehouse, and the page itself in headless Chromium, opened from disk with
the network refused."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from mlperf_scaling.tasks.publish.explorer import BUNDLE, DATA, PAGE, explorer_chart, explorer_data, fit_curves
from mlperf_scaling.warehouse.connection import connect

LLAMA_V41 = "select count(*) from scores where round = 'v4.1' and benchmark_canonical = 'llama2_70b_lora' and time_to_train_min is not null"


def _count(warehouse, sql: str) -> int:
    with connect(warehouse, read_only=True) as connection:
        return connection.execute(sql).fetchone()[0]


def test_the_band_is_the_measurement_where_measured_and_the_interval_between_and_beyond():
    points = pl.DataFrame({"round": "v4.1", "benchmark_canonical": "bert", "accelerator_group": "H100-SXM", "submitter": ["a", "b", "c", "d"],
                           "accelerators": [8, 16, 32, 64], "time_to_train_min": [100.0, 52.0, 28.0, 16.0]})
    band = fit_curves(points)
    assert band["accelerators"][0] == 8 and band["accelerators"][-1] == pytest.approx(256) and band.height == 12 + 3  # 16, 32 and 64 are not on the grid
    measured = band.filter(pl.col("accelerators").is_in([8.0, 16.0, 32.0, 64.0]))
    assert measured["time_min"].to_list() == [100.0, 52.0, 28.0, 16.0]  # through each measured best
    assert (measured["time_min_low"] == measured["time_min"]).all() and (measured["time_min_high"] == measured["time_min"]).all()
    predicted = band.filter(~pl.col("accelerators").is_in([8.0, 16.0, 32.0, 64.0]))
    assert (predicted["time_min_low"] < predicted["time_min"]).all() and (predicted["time_min"] < predicted["time_min_high"]).all()
    assert band["time_min"].is_sorted(descending=True)
    assert fit_curves(points.with_columns(pl.lit(8).alias("accelerators"))).height == 0  # a single distinct count has no curve


def test_the_data_leaves_absent_values_out_and_names_workloads():
    points = pl.DataFrame({"round": ["v4.1"], "benchmark_canonical": ["ssd_resnet34"], "accelerator_group": ["H100-SXM"], "submitter": ["S"],
                           "system": ["x</script>y"], "accelerators": [8], "time_to_train_min": [12.3456789], "energy_kwh": [None]},
                          schema_overrides={"energy_kwh": pl.Float64})
    data = explorer_data(points, fit_curves(points.clear()))
    (row,) = data["points"]
    assert "energy_kwh" not in row and row["time_to_train_min"] == 12.346 and data["workloads"] == {"ssd_resnet34": "SSD-ResNet34"}
    spec = explorer_chart(data, ["v4.1"], "ssd_resnet34").to_dict()
    names = {param["name"] for param in spec["params"]}
    assert {"pick_workload", "pick_group", "y_axis"} <= names and "pick_round" not in names  # one round: no round picker
    assert {"pick_round"} <= {param["name"] for param in explorer_chart(data, ["v4.0", "v4.1"], "ssd_resnet34").to_dict()["params"]}


def test_the_vega_bundle_is_made_once_per_version_then_copied_from_the_cache(tmp_path, monkeypatch):
    import vl_convert

    from mlperf_scaling.tasks.publish import explorer

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    explorer.bundle_script.cache_clear()
    made = explorer.write_bundle(tmp_path / "first").read_text(encoding="utf-8")
    cached = tmp_path / "cache" / "mlperf-scaling" / BUNDLE
    assert cached.read_text(encoding="utf-8") == made and "vegaEmbed" in made and len(made) > 500_000

    def refused(**_):
        raise AssertionError("bundled again although the cache holds this version")

    monkeypatch.setattr(vl_convert, "javascript_bundle", refused)
    explorer.bundle_script.cache_clear()
    assert explorer.write_bundle(tmp_path / "second").read_text(encoding="utf-8") == made  # a new report folder: a copy
    cached.write_text("// vega-embed bundle: vl-convert-python 0.0, Vega-Lite v1\nold", encoding="utf-8")
    explorer.bundle_script.cache_clear()
    with pytest.raises(AssertionError, match="bundled again"):  # another version in the cache: made anew
        explorer.write_bundle(tmp_path / "third")
    explorer.bundle_script.cache_clear()


def test_explore_rebuilds_from_the_warehouse_alone(v41_warehouse, tmp_path, capsys):
    from mlperf_scaling.cli import main

    reports = tmp_path / "reports"
    (reports / "v4.1").mkdir(parents=True)
    (reports / "v4.1" / "index.html").write_text("<html></html>")  # a round page is there: its explorer is written beside it
    assert main(["explore", "--warehouse", str(v41_warehouse), "--reports", str(reports)]) == 0
    assert "1 round pages" in capsys.readouterr().out
    data = json.loads((reports / DATA).read_text())
    assert len(data["points"]) == _count(v41_warehouse, "select count(*) from scores where time_to_train_min is not null") == 153
    assert {"v4.1"} == {p["round"] for p in data["points"]}
    # every fitted Amdahl group of the round has its curve
    assert {(f["benchmark_canonical"], f["accelerator_group"]) for f in data["fits"]} == {
        tuple(r) for r in pl.read_database("select distinct e.benchmark_canonical, f.accelerator_group from scaling_fits f join efficiency e "
                                           "using (round, benchmark, accelerator_group) where f.model = 'amdahl' and f.status = 'fitted'",
                                           connect(v41_warehouse, read_only=True)).iter_rows()}
    page = (reports / PAGE).read_text()
    assert "Over every round&#39;s backtest, each measured count left out and predicted from the others, the stated 90 % interval held" in page
    assert re.findall(r'(?:src|href)="([^"]+)"', page) == ["index.html", "explore.json", "vega-embed.js"]  # nothing from a network
    assert '<script src="../vega-embed.js">' in (reports / "v4.1" / PAGE).read_text()
    sizes = sum(p.stat().st_size for p in (reports / BUNDLE, reports / DATA, reports / PAGE, reports / "v4.1" / PAGE))
    assert sizes < 3_000_000
    assert main(["explore", "--warehouse", str(tmp_path / "none.duckdb"), "--reports", str(reports)]) == 2
    assert capsys.readouterr().err.startswith("mlperf-scaling: no warehouse at")


def _open(browser, path, fragment=""):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    asked: list[str] = []
    # the network off: anything but the files beside the page is refused (and recorded)
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else (asked.append(route.request.url), route.abort()))
    page.goto(path.resolve().as_uri() + fragment)
    page.wait_for_function("document.body.dataset.ready === 'yes'", timeout=30_000)
    return page, errors, asked


POINTS = "g.mark-symbol.role-mark path"


def test_the_explorer_shows_every_scored_row_and_names_the_system_on_hover(browser, v41_reports, v41_warehouse, tmp_path):
    page, errors, asked = _open(browser, v41_reports / PAGE)
    page.select_option("select[name=pick_workload]", "llama2_70b_lora")
    page.wait_for_timeout(300)
    assert page.locator(POINTS).count() == _count(v41_warehouse, LLAMA_V41) == 29
    point = page.locator(f'{POINTS}[aria-label^="NVIDIA / eos_n128_ngc24.09_nemo,"]')
    point.hover()
    tooltip = page.locator("#vg-tooltip-element")
    tooltip.wait_for(state="visible")
    text = tooltip.inner_text()
    assert "NVIDIA / eos_n128_ngc24.09_nemo" in text and "1,024" in text and "1.188 min" in text and "energy" not in text
    # a group: its points only, with its Amdahl curve and band
    page.select_option("select[name=pick_group]", "H100-SXM")
    page.wait_for_timeout(300)
    h100 = "select count(*) from efficiency where benchmark_canonical = 'llama2_70b_lora' and accelerator_group = 'H100-SXM'"
    assert page.locator(POINTS).count() == _count(v41_warehouse, h100) == 20
    assert page.evaluate("[...document.querySelectorAll('g.mark-line.role-mark path, g.mark-area.role-mark path')].filter(p => (p.getAttribute('d') || '').length > 20).length") >= 2
    # energy on the y axis: only the systems that measured it
    page.get_by_label("energy to train (kWh)").check()
    page.wait_for_timeout(300)
    measured = h100 + " and energy_kj is not null"
    assert page.locator(POINTS).count() == _count(v41_warehouse, measured) == 1
    assert page.screenshot(path=str(tmp_path / "explore.png"))  # rendered; the ones looked at are described in docs/reports.md
    assert errors == [] and asked == []
    page.close()


def test_a_link_opens_the_explorer_on_its_view(browser, v41_reports):
    # the round page links each workload's section to its view
    assert 'href="explore.html#workload=llama2_70b_lora"' in (v41_reports / "v4.1" / "index.html").read_text()
    page, errors, asked = _open(browser, v41_reports / "v4.1" / PAGE, "#workload=llama2_70b_lora&group=H100-SXM&axis=accelerator_hours")
    page.wait_for_function("document.querySelector('select[name=pick_group]').value === 'H100-SXM'")
    assert page.locator("select[name=pick_workload]").input_value() == "llama2_70b_lora"
    assert page.locator(POINTS).count() == 20 and page.get_by_role("radio", name="accelerator-hours").is_checked()
    assert "accelerator-hours against accelerators" in page.locator("#explorer").inner_text()
    assert errors == [] and asked == []
    page.close()


def test_the_round_explorer_opens_beside_its_report(browser, v41_reports, v41_warehouse):
    assert 'href="explore.html"' in (v41_reports / "v4.1" / "index.html").read_text()
    assert 'href="explore.html"' in (v41_reports / "index.html").read_text()
    page, errors, asked = _open(browser, v41_reports / "v4.1" / PAGE)
    assert page.locator("select[name=pick_round]").count() == 0
    page.select_option("select[name=pick_workload]", "llama2_70b_lora")
    page.wait_for_timeout(300)
    assert page.locator(POINTS).count() == 29 and page.locator("#empty").is_hidden()
    # the group picker offers the workload's groups only
    offered = page.evaluate("[...document.querySelector('select[name=pick_group]').options].filter(o => !o.hidden).map(o => o.value)")
    llama_groups = "select distinct accelerator_group from efficiency where benchmark_canonical = 'llama2_70b_lora'"
    with connect(v41_warehouse, read_only=True) as connection:
        assert set(offered) == {"all groups", *(g for (g,) in connection.execute(llama_groups).fetchall())}
    # an empty plane says why: no v4.1 BERT system measured its energy
    page.select_option("select[name=pick_workload]", "bert")
    page.get_by_label("energy to train (kWh)").check()
    page.locator("#empty").wait_for(state="visible")
    assert page.locator(POINTS).count() == 0 and "No energy was measured" in page.locator("#empty").inner_text()
    assert errors == [] and asked == []
    page.close()


def test_a_round_gets_its_explorer_page_once_its_report_exists_or_is_being_written(v41_warehouse, tmp_path):
    """The main job makes the explorer while its last rounds' reports are still being drawn (`publishing`); alone, the
    explorer makes a round's page only beside a report."""
    from mlperf_scaling.tasks.publish.steps import write_explorer_pages

    alone = write_explorer_pages(str(v41_warehouse), str(tmp_path / "alone"))
    assert [p.relative_to(tmp_path) for p in alone] == [Path("alone", PAGE)] and not (tmp_path / "alone" / "v4.1").exists()
    beside = write_explorer_pages(str(v41_warehouse), str(tmp_path / "beside"), publishing=["v4.1"])
    assert [p.relative_to(tmp_path) for p in beside] == [Path("beside", PAGE), Path("beside", "v4.1", PAGE)]
    (tmp_path / "after" / "v4.1").mkdir(parents=True)
    (tmp_path / "after" / "v4.1" / "index.html").write_text("<p>report</p>")
    assert len(write_explorer_pages(str(v41_warehouse), str(tmp_path / "after"))) == 2


@pytest.fixture(scope="module")
def two_rounds(v41_warehouse, tmp_path_factory) -> tuple[Path, Path]:
    """v4.1 as `run` leaves it, and the v6.1 fixture beside it (other workloads), with the explorer over both."""
    import shutil

    from conftest import fixture_round, ingest_source

    from mlperf_scaling.cli import main
    from mlperf_scaling.tasks.metrics.steps import compute_round_analysis, write_round_analysis
    from mlperf_scaling.tasks.planning.steps import plan_round

    folder = tmp_path_factory.mktemp("two-rounds")
    warehouse, reports = folder / "w.duckdb", folder / "reports"
    shutil.copy(v41_warehouse, warehouse)
    ingest_source(str(fixture_round("v6.1", folder / "cut")), warehouse)
    write_round_analysis.fn(str(warehouse), plan_round.fn(compute_round_analysis.fn(str(warehouse), "v6.1")))
    assert main(["explore", "--warehouse", str(warehouse), "--reports", str(reports)]) == 0
    return warehouse, reports


def test_the_round_picker_offers_the_workloads_rounds_and_the_address_follows_the_view(browser, two_rounds):
    _, reports = two_rounds
    page, errors, asked = _open(browser, reports / PAGE)
    offered = "[...document.querySelector('select[name=pick_round]').options].filter(o => !o.hidden).map(o => o.value)"
    page.select_option("select[name=pick_workload]", "qwen35_397b_grpo")
    page.wait_for_function("location.hash.includes('workload=qwen35_397b_grpo')")
    assert page.evaluate(offered) == ["all rounds", "v6.1"]  # v4.1 had no GRPO
    page.select_option("select[name=pick_workload]", "llama2_70b_lora")
    page.wait_for_function("location.hash.includes('workload=llama2_70b_lora')")
    assert page.evaluate(offered) == ["all rounds", "v4.1"]
    page.select_option("select[name=pick_round]", "v4.1")
    page.select_option("select[name=pick_group]", "H100-SXM")
    page.wait_for_function("location.hash.includes('group=H100-SXM')")
    link = page.evaluate("location.href")
    assert "round=v4.1" in link and "axis=time_to_train_min" in link
    # the address opens the same view
    again, more_errors, more_asked = _open(browser, reports / PAGE, "#" + link.split("#", 1)[1])
    again.wait_for_function("document.querySelector('select[name=pick_group]').value === 'H100-SXM'")
    assert again.locator(POINTS).count() == 20
    assert errors == more_errors == [] and asked == more_asked == []
    page.close()
    again.close()


def test_every_point_links_its_files_at_the_loaded_commit(v41_warehouse):
    import csv

    from conftest import SHARED_MLPERF

    from mlperf_scaling.warehouse.read import read_queries

    with (SHARED_MLPERF / "MANIFEST.tsv").open() as handle:
        commit = next(row["source_commit"] for row in csv.DictReader(handle, delimiter="\t") if row["round"] == "v4.1")
    (files,) = read_queries(v41_warehouse, "all_score_files")
    assert files.height == _count(v41_warehouse, "select count(*) from scores") and files["files_url"].is_not_null().all()
    row = files.filter((pl.col("system") == "eos_n128_ngc24.09_nemo") & (pl.col("benchmark") == "llama2_70b_lora")).row(0, named=True)
    assert row["files_url"] == f"https://github.com/mlcommons/training_results_v4.1/tree/{commit}/NVIDIA/results/eos_n128_ngc24.09_nemo/llama2_70b_lora"
    # no published ID of v4.1 was found, so none is given; the summarizer's row is, under its own name
    assert row["rcp_status"] == "Pass" and row["result_id"] is None and row["summarizer_row_id"] == "4.1-0037"
    # the explorer's point opens it, and its hover says the RCP check and the result ID
    (points,) = read_queries(v41_warehouse, "explorer_points", round=None)
    assert set(points["files_url"]) == set(files.filter(pl.col("time_to_train_min").is_not_null())["files_url"])
    spec = explorer_chart(explorer_data(points, fit_curves(points)), ["v4.1"], "llama2_70b_lora").to_dict()
    assert '"href": {"field": "files_url"' in json.dumps(spec) and "'RCP check': datum.rcp_status" in json.dumps(spec)
    assert "'result ID (as MLCommons published it)': datum.result_id" in json.dumps(spec)
    assert "'summarizer spreadsheet row (not the result ID)': datum.summarizer_row_id" in json.dumps(spec)
    assert points["summarizer_row_id"].is_not_null().all() and points["result_id"].is_null().all()
