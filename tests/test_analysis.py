"""Scaling metrics, clusters, plots and the report: rules on small frames, values on the real v4.1 round."""

from __future__ import annotations

import csv
import datetime as dt
import re

import polars as pl
import pytest
from conftest import SHARED_MLPERF, read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.tasks.metrics.clusters import cluster_table
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table, summarize_benchmarks
from mlperf_scaling.tasks.metrics.paper_table import compare
from mlperf_scaling.tasks.publish.plots import plot_benchmark
from mlperf_scaling.tasks.publish.report import render_index


def score(system, accelerators, minutes, model="NVIDIA H100-SXM5-80GB", division="closed", status="scored", benchmark="bert"):
    return {"round": "v4.1", "submitter": "S", "system": system, "benchmark": benchmark, "benchmark_canonical": benchmark,
            "division": division, "accelerator_model_name": model, "accelerators": accelerators, "number_of_nodes": 1,
            "time_to_train_min": minutes if status != "not_scored" else None, "n_runs": 10, "n_valid": 10,
            "n_required": 10, "n_missing": 0, "status": status, "status_reason": None}


def frame(*rows) -> pl.DataFrame:
    return pl.DataFrame(list(rows), schema=frame_schema(ScoresSchema))


def by_system(table: pl.DataFrame) -> dict[str, dict]:
    return {row["system"]: row for row in table.iter_rows(named=True)}


def test_the_papers_reference_is_the_slowest_and_the_groups_the_fastest_at_the_fewest_accelerators():
    table, _ = efficiency_table(frame(score("a", 2, 100.0), score("b", 2, 120.0), score("c", 8, 20.0, model="NVIDIA A100 (400W)")))
    rows = by_system(table)
    # the paper's E': fewest accelerators, then the longest time, as the paper defines it
    assert rows["b"]["is_paper_reference"] and not rows["a"]["is_paper_reference"]
    assert rows["c"]["paper_speedup"] == pytest.approx(6.0)
    assert rows["c"]["paper_e_prime"] == pytest.approx(6.0 / 4)
    assert rows["a"]["paper_e_prime"] == pytest.approx(1.2)
    # within its own comparable group, c is its own reference
    assert rows["c"]["accelerator_group"] == "A100-SXM" and rows["a"]["accelerator_group"] == "H100-SXM"
    assert rows["c"]["is_reference"] and rows["c"]["efficiency"] == 1.0
    # within the group: the best system at the fewest accelerators, so the slower one is below 1, never above
    assert rows["b"]["reference_system"] == "S/a" and rows["a"]["is_reference"]
    assert rows["a"]["efficiency"] == 1.0 and rows["b"]["efficiency"] == pytest.approx(100 / 120)
    assert rows["b"]["efficiency_note"] is None
    assert rows["c"]["accelerator_hours"] == pytest.approx(20.0 * 8 / 60)


def test_a_super_linear_efficiency_says_why():
    table, _ = efficiency_table(frame(score("small", 2, 100.0), score("big", 8, 20.0)))
    big = by_system(table)["big"]
    assert big["efficiency"] == pytest.approx(1.25)
    assert big["efficiency_note"].startswith("super-linear against S/small (2 accelerators): faster per accelerator")


def test_a100_pcie_and_sxm_are_never_one_group():
    table, _ = efficiency_table(frame(score("pcie", 8, 30.0, model="NVIDIA A100-PCIe-40GB"), score("sxm", 8, 10.0, model="NVIDIA A100-SXM4-80GB"),
                                      score("sxm16", 16, 6.0, model="NVIDIA A100-SXM-80GB (400W)")))
    rows = by_system(table)
    assert (rows["pcie"]["accelerator_group"], rows["sxm"]["accelerator_group"], rows["sxm16"]["accelerator_group"]) == ("A100-PCIe", "A100-SXM", "A100-SXM")
    # each group is its own reference: no 3x "efficiency" from comparing the two at equal N
    assert rows["pcie"]["efficiency"] == 1.0 and rows["sxm"]["efficiency"] == 1.0
    assert rows["sxm16"]["reference_system"] == "S/sxm" and rows["sxm16"]["efficiency"] == pytest.approx(10.0 / (6.0 * 2))


def test_efficiency_splits_into_throughput_and_convergence():
    rows = [{**score("ref", 8, 100.0), "samples_to_converge": 1000.0}, {**score("big", 32, 40.0), "samples_to_converge": 1600.0}]
    table, _ = efficiency_table(frame(*rows))
    big = by_system(table)["big"]
    assert big["convergence_unit"] == "samples"
    assert big["convergence_part"] == pytest.approx(1000 / 1600)  # the bigger configuration needed 60 % more samples
    assert big["throughput_part"] == pytest.approx((1600 / (40 * 32)) / (1000 / (100 * 8)))
    assert big["throughput_part"] * big["convergence_part"] == pytest.approx(big["efficiency"], abs=1e-12)


def test_open_cpu_only_and_unscored_rows_are_left_out_with_a_reason():
    table, excluded = efficiency_table(frame(
        score("ok", 8, 10.0), score("open", 8, 5.0, division="open"), score("cpu", 0, 500.0, model=None),
        score("none", 8, None, status="not_scored"), score("short", 16, 6.0, status="scored_incomplete"),
    ))
    assert set(table["system"]) == {"ok", "short"}
    assert not by_system(table)["short"]["is_complete"]
    reasons = dict(zip(excluded["system"], excluded["reason"], strict=True))
    assert reasons["open"].startswith("open division")
    assert reasons["cpu"] == "CPU-only system: no accelerators to scale"
    assert reasons["none"].startswith("no official score")


def test_pareto_front_of_time_and_accelerator_hours():
    table, _ = efficiency_table(frame(score("small", 4, 60.0), score("mid", 8, 20.0), score("wasteful", 16, 20.0), score("fast", 64, 4.0)))
    pareto = dict(zip(table["system"], table["is_pareto"], strict=True))
    assert pareto == {"small": False, "mid": True, "wasteful": False, "fast": True}


def test_clusters_are_reproducible_and_tiny_groups_are_not_clustered():
    rows = [score(f"s{i}", 2 ** (i % 6 + 1), 100.0 / (i % 6 + 1) + i) for i in range(14)]
    table, _ = efficiency_table(frame(*rows))
    first, second = cluster_table(table), cluster_table(table)
    assert first.equals(second)
    assert 2 <= first["k"][0] <= 6 and -1 <= first["silhouette"][0] <= 1
    tiny, _ = efficiency_table(frame(score("one", 8, 10.0), score("two", 16, 6.0)))
    clusters = cluster_table(tiny)
    assert clusters["k"].to_list() == [1, 1] and clusters["silhouette"].is_null().all()
    assert "too few" in clusters["note"][0]


def test_k_means_runs_on_one_thread_and_finds_the_clusters_it_finds_on_every_thread(monkeypatch):
    import sklearn.cluster  # noqa: F401 - its OpenMP runtime loaded, so that threadpoolctl sees it from the first fit
    from threadpoolctl import threadpool_info

    from mlperf_scaling.tasks.metrics import clusters as module

    rows = [score(f"s{i}", 2 ** (i % 6 + 1), 100.0 / (i % 6 + 1) + i) for i in range(14)]
    table, _ = efficiency_table(frame(*rows))
    threads_seen = []
    choose = module.choose_clusters

    def watched(features):
        threads_seen.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "openmp")
        return choose(features)

    monkeypatch.setattr(module, "choose_clusters", watched)
    got = {row["system"]: (row["cluster"], row["k"]) for row in cluster_table(table).iter_rows(named=True)}
    expected = {}
    for _, group in table.sort("submitter", "system").group_by(["round", "benchmark"], maintain_order=True):
        labels, k, _, _ = choose(module._features(group))  # on every thread
        expected.update({system: (int(label), k) for system, label in zip(group["system"], labels, strict=True)})
    assert got == expected and len(got) == 14
    assert threads_seen and set(threads_seen) == {1}  # scikit-learn's OpenMP pool, capped while it fits


@pytest.mark.parametrize("n_systems", [1, 2])
def test_plots_and_page_with_one_or_two_systems(tmp_path, n_systems):
    rows = [score("one", 8, 10.0), score("two", 16, 6.0)][:n_systems]
    table, excluded = efficiency_table(frame(*rows))
    clusters = cluster_table(table)
    plots = {"bert": plot_benchmark(table, clusters, tmp_path / "plots", formats=("png", "svg"))}
    for paths in plots["bert"].values():
        assert all(p.stat().st_size > 1000 for p in paths)
    page = render_index("v4.1", summarize_benchmarks(table), table, clusters, excluded, plots, None)
    assert '<section id="bert">' in page and "not official MLPerf results" in page
    assert "<h2>BERT-large (bert) <small>language model" in page  # the workload's label, as every page names it
    title = (tmp_path / "plots" / "bert_time.svg").read_text()
    assert f"{n_systems} system{'' if n_systems == 1 else 's'}</" in title and "1 systems" not in title


def _official_time(system: str, benchmark: str) -> float:
    with (SHARED_MLPERF / "official" / "official_scores_v4.1.csv").open() as handle:
        for row in csv.DictReader(handle):
            if row["system_folder"] == system and row["benchmark"] == benchmark:
                return float(row["time_to_train_min"])
    raise KeyError(system)


@pytest.fixture(scope="module")
def v41_analysis():
    data, _ = read_shipped_round("v4.1")
    efficiency, excluded = efficiency_table(data.scores)
    return data.scores, efficiency, excluded


def test_v41_references_match_the_paper(v41_analysis):
    scores, efficiency, excluded = v41_analysis
    found = {c.paper.benchmark: c for c in compare(efficiency, excluded, scores)}
    assert (found["bert"].systems, found["bert"].reference_system, found["bert"].reference_accelerators) == (29, "Krai/7920T_2xA5000_hdd", 2)
    assert round(found["bert"].reference_time_min, 2) == 366.19 and int(found["bert"].reference_time_min * 100) == 36618
    assert (found["llama2_70b_lora"].systems, found["llama2_70b_lora"].reference_accelerators) == (29, 4)
    assert round(found["llama2_70b_lora"].reference_time_min, 2) == 61.87
    assert (found["ssd"].systems, found["ssd"].reference_system) == (26, "Dell/R760x2H100NVL-PCIe-94GB")
    assert (found["stable_diffusion"].systems, found["stable_diffusion"].reference_system) == (25, "Dell/XE8640x4H100-SXM-80GB")
    assert any("not attributable" in note for note in found["stable_diffusion"].explanations)
    assert any("preview systems" in note for note in found["bert"].explanations)


def test_v41_a_known_efficiency(v41_analysis):
    _, efficiency, _ = v41_analysis
    row = efficiency.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("system") == "b200_preview_nemo")).row(0, named=True)
    expected = (_official_time("XE9640x4H100-SXM-80GB", "llama2_70b_lora") / _official_time("b200_preview_nemo", "llama2_70b_lora")) / (8 / 4)
    assert row["paper_e_prime"] == pytest.approx(expected, rel=1e-12)
    assert round(row["paper_e_prime"], 3) == 2.387


def test_v41_throughput_times_convergence_is_the_efficiency(v41_analysis):
    _, efficiency, _ = v41_analysis
    split = efficiency.filter(pl.col("throughput_part").is_not_null())
    # every system: Google's TPU v5p Stable Diffusion logs give samples only on the line the rules join
    assert split.height == 153 and efficiency.height == 153
    product = split["throughput_part"] * split["convergence_part"]
    assert (product - split["efficiency"]).abs().max() < 1e-9


def test_v41_a_known_throughput_part(v41_analysis):
    _, efficiency, _ = v41_analysis
    llama = efficiency.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM"))
    row = llama.filter(pl.col("system") == "512xBM.GPU.H100.8").row(0, named=True)
    # the reference: the best of the three 4-GPU systems (58.42 min; the slowest, Dell's XE9640, 61.87 min)
    assert row["reference_system"] == "Fujitsu/GX2560M7_H100_SXM_80GBx4" and row["global_batch_size"] == 64
    # samples to converge from the logs (the olympic mean over the scored runs): 8,976 against the reference's 3,120
    assert (row["samples_to_converge"], llama.filter(pl.col("is_reference"))["samples_to_converge"][0]) == (8976.0, 3120.0)
    t, t_ref = _official_time("512xBM.GPU.H100.8", "llama2_70b_lora"), _official_time("GX2560M7_H100_SXM_80GBx4", "llama2_70b_lora")
    assert row["throughput_part"] == pytest.approx((8976 / (t * 512)) / (3120 / (t_ref * 4)), rel=1e-12)
    assert round(row["throughput_part"], 3) == 0.636 and round(row["convergence_part"], 3) == 0.348
    # at 512 GPUs a 64x bigger batch costs more (convergence) than communication does (throughput)


def test_v41_headlines_compare_comparable_hardware(v41_analysis):
    _, efficiency, _ = v41_analysis
    summary = summarize_benchmarks(efficiency)
    bert = summary.filter(pl.col("benchmark") == "bert").row(0, named=True)
    # the paper's E' calls an 8-GPU B200 24.1 times as efficient as the 2x A5000 reference: a hardware generation
    b200 = efficiency.filter((pl.col("benchmark") == "bert") & (pl.col("accelerator_group") == "B200-SXM")).row(0, named=True)
    assert round(b200["paper_e_prime"], 1) == 24.1 and b200["efficiency"] == 1.0
    # within comparable hardware the best BERT scale-out is 16 to 32 A100 PCIe cards, at 0.99
    assert (bert["best_scale_out_group"], bert["best_scale_out_accelerators"], bert["best_scale_out_reference_accelerators"]) == ("A100-PCIe", 32, 16)
    assert round(bert["best_scale_out_efficiency"], 2) == 0.99
    assert summary["best_scale_out_efficiency"].max() <= 1.5
    for row in summary.iter_rows(named=True):
        chosen = efficiency.filter((pl.col("benchmark") == row["benchmark"]) & (pl.format("{}/{}", "submitter", "system") == row["best_scale_out_system"])
                                   & (pl.col("accelerators") == row["best_scale_out_accelerators"]))
        assert chosen["accelerator_group"][0] == row["best_scale_out_group"] == chosen["accelerator_group"][0]
        assert chosen["accelerators"][0] > chosen["reference_accelerators"][0]


def test_analyze_and_publish_flows_write_tables_report_and_artifacts(prefect_isolated, warehouse_path, tmp_path):
    from prefect.client.orchestration import get_client

    from mlperf_scaling.flows.analyze import analyze_round
    from mlperf_scaling.flows.publish import publish_round
    from mlperf_scaling.tasks.load.steps import load_round, validate_round
    from mlperf_scaling.tasks.score.steps import ScoredRound
    from mlperf_scaling.tasks.source.resolve import Source
    from mlperf_scaling.warehouse.connection import connect

    data, provenance = read_shipped_round("v4.1")
    result = ScoredRound(Source("training_results_v4.1.tar.gz", "archive", "v4.1", "/dev/null"), provenance, data, dt.datetime(2026, 1, 1))
    load_round.fn(result, validate_round.fn(result), str(warehouse_path))

    assert analyze_round("v4.1", str(warehouse_path)).efficiency.height == 153
    published = publish_round("v4.1", str(warehouse_path), str(tmp_path / "reports"))
    with connect(warehouse_path, read_only=True) as connection:
        assert connection.execute("select count(*) from efficiency where round = 'v4.1'").fetchone()[0] == 153
        assert connection.execute("select count(distinct benchmark) from clusters where round = 'v4.1'").fetchone()[0] == 7
    folder = tmp_path / "reports" / "v4.1"
    page = (folder / "index.html").read_text()
    # sections by the workload's canonical name, plots by the round's folder
    for workload, benchmark in [("bert", "bert"), ("dlrm_dcnv2", "dlrm_dcnv2"), ("rgat", "gnn"), ("gpt3", "gpt3"),
                                ("llama2_70b_lora", "llama2_70b_lora"), ("retinanet", "ssd"), ("stable_diffusion", "stable_diffusion")]:
        assert f'<section id="{workload}">' in page
        for kind in ("scaling", "systems", "paper_e_prime", "time"):
            assert (folder / "plots" / f"{benchmark}_{kind}.svg").is_file()
            assert not (folder / "plots" / f"{benchmark}_{kind}.png").exists()  # drawn only when asked for
            assert f'<img src="plots/{benchmark}_{kind}.svg"' in page
    assert pl.read_csv(folder / "efficiency.csv").height == 153
    # the page answers first: the recommendation table comes before any benchmark's section
    assert page.index('<section id="answer"') < page.index('<section id="bert">')
    # (read without the <wbr> that let a name break after its separators)
    answer = page[page.index('<section id="answer"'):page.index('<section id="bert">')].replace("<wbr>", "")
    assert "<td>H100-SXM</td>" in answer and "Llama 2 70B LoRA" in answer
    # each answer quotes what was measured, and how well the planner predicted the group's measured counts (v4.1 Llama 2
    # LoRA: 8 counts, the interval held in 6)
    assert "backtest: median error; interval held" in answer and "<td>9.5 % (8 counts); 6 of 8</td>" in answer
    assert "<td>3.07 measured (Oracle/128xBM.GPU.H100.8)</td>" in answer
    assert "In this round&#39;s backtest, each measured count left out and predicted from the others, the stated 90 % interval held" in answer
    assert pl.read_csv(folder / "plan_backtest.csv").filter(pl.col("benchmark") == "llama2_70b_lora").height >= 16
    recommendations = pl.read_csv(folder / "recommendations.csv")
    llama = recommendations.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM")).row(0, named=True)
    assert llama["basis"] == "measured" and llama["accelerators"] == 128
    # by default the reports are not served: nothing links a file (a browser refuses file:// from the UI's page); the
    # summary says where the report is and how to serve it, and the round's headline figure comes as an image
    assert published.artifacts == ["scaling-summary-v4-1", "efficiency-v4-1", "plot-v4-1-bert-scaling"]

    async def artifacts(key: str) -> list[str]:
        from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

        async with get_client() as client:  # the run's API is shared: other tests' v4.1 artifacts are there too
            return [a.data for a in await client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key])))]

    import asyncio

    summaries = asyncio.run(artifacts("scaling-summary-v4-1"))
    unserved = [summary for summary in summaries if "is on the machine that ran the job" in summary]
    assert unserved and not any("file://" in summary for summary in unserved)
    assert f"`{(folder / 'index.html').resolve()}`. To open it from here, serve the reports there (`mlperf-scaling reports`" in unserved[0]
    assert "Image artifacts of this run: `plot-v4-1-bert-scaling`." in unserved[0]
    # served (MLPERF_REPORTS_URL), the report and every plot are linked there
    served = publish_round("v4.1", str(warehouse_path), str(tmp_path / "reports"), reports_url="http://reports.example:8765/")
    assert served.artifacts == ["scaling-summary-v4-1", "efficiency-v4-1", "report-v4-1"]
    assert "[MLPerf Training v4.1: report](http://reports.example:8765/v4.1/index.html)" in asyncio.run(artifacts("report-v4-1"))
    linked = "| Llama 2 70B LoRA | [scaling](http://reports.example:8765/v4.1/plots/llama2_70b_lora_scaling.svg) · [time]("
    summaries = asyncio.run(artifacts("scaling-summary-v4-1"))
    assert any(linked in summary for summary in summaries)
    # no table in it wider than the UI's pane (about 830 px, some 110 characters of its text): names and sentences are
    # list items, which wrap; a table keeps its short cells only (a link's target is not shown)
    for summary in summaries:
        shown = [re.sub(r"\]\([^)]*\)", "]", line) for line in summary.splitlines() if line.startswith("|")]
        assert not shown or max(len(line) for line in shown) <= 110
        assert "- **Llama 2 70B LoRA** on H100-SXM: 128 H100-SXM: measured 3.07 min" in summary
    # asked for (MLPERF_ARTIFACT_IMAGES=embed), the scaling and time plots are image artifacts too, each far under the
    # server's 1.5 MB event limit; the plots are not drawn again
    again = publish_round("v4.1", str(warehouse_path), str(tmp_path / "reports"), embed_plots=True)
    assert len([key for key in again.artifacts if key.startswith("plot-v4-1-")]) == 14  # 7 benchmarks, 2 plots each
    images = asyncio.run(artifacts("plot-v4-1-llama2-70b-lora-scaling"))
    assert images and all(image.startswith("data:image/svg+xml;base64,") and 10_000 < len(image) < 500_000 for image in images)


def test_plots_are_not_redrawn_when_nothing_changed(tmp_path):
    from mlperf_scaling.tasks.metrics.fits import fit_table
    from mlperf_scaling.tasks.metrics.steps import RoundAnalysis
    from mlperf_scaling.tasks.publish.steps import draw_round_plots

    def analysis(minutes: float) -> RoundAnalysis:
        table, excluded = efficiency_table(frame(score("a", 8, minutes), score("b", 16, 6.0), score("c", 32, 4.0)))
        return RoundAnalysis("v4.1", table, cluster_table(table), excluded, fit_table(table))

    first = draw_round_plots(analysis(10.0), str(tmp_path))
    png = first["bert"]["time"][0]
    drawn_at = png.stat().st_mtime_ns
    again = draw_round_plots(analysis(10.0), str(tmp_path))
    assert again == first and png.stat().st_mtime_ns == drawn_at  # same inputs, same code: not drawn again
    draw_round_plots(analysis(11.0), str(tmp_path))
    assert png.stat().st_mtime_ns != drawn_at  # one time changed: drawn again
    png.unlink()
    draw_round_plots(analysis(11.0), str(tmp_path))
    assert png.is_file()  # a file gone is drawn again


@pytest.mark.parametrize("n_measured", [1, 2])
def test_energy_measured_once_is_a_sentence_not_a_plot(tmp_path, n_measured):
    rows = [score("one", 8, 10.0), score("two", 16, 6.0), score("three", 32, 4.0)]
    for row, energy_j in zip(rows[:n_measured], (36e6, 40e6), strict=False):  # 36 MJ = 10 kWh
        row["energy_j"] = energy_j
    table, excluded = efficiency_table(frame(*rows))
    clusters = cluster_table(table)
    plots = {"bert": plot_benchmark(table, clusters, tmp_path / "plots")}
    page = render_index("v4.1", summarize_benchmarks(table), table, clusters, excluded, plots, None)
    sentence = "Energy to train, measured for one system only: S/one, 8 accelerators, 10.0 kWh in 10.00 min, 60.0 kW on average"
    assert ("energy" in plots["bert"]) is (n_measured == 2)
    assert (sentence in page) is (n_measured == 1)


def test_counts_batches_and_knees_print_as_whole_numbers():
    from mlperf_scaling.tasks.publish.report import cell, present

    assert cell(406.694, "knee_accelerators") == "407" and cell(13888.0, "global_batch_size") == "13,888"
    assert cell(768.0, "global_batch_size") == "768" and cell(1024.0, "reference_accelerators") == "1,024"
    assert cell(0.5, "efficiency") == "0.500" and cell(1.0, "efficiency") == "1.000" and cell(12345.67, "time") == "12,345.7"
    assert cell(float("nan"), "n_systems") == "nan" and cell(None, "n_systems") == "" and cell(True) == "yes"
    rows = [{"a": 1, "b": None, "c": False}, {"a": 2, "b": None, "c": True}]
    assert present([("a", "A"), ("b", "B"), ("c", "C")], rows) == [("a", "A"), ("c", "C")]


def test_plots_are_linked_in_the_prefect_ui_unless_embedding_is_asked_for(monkeypatch):
    from pydantic import ValidationError

    from mlperf_scaling.settings import Settings

    monkeypatch.delenv("MLPERF_ARTIFACT_IMAGES", raising=False)
    assert Settings().artifact_images == "link" and not Settings().embed_plots
    monkeypatch.setenv("MLPERF_ARTIFACT_IMAGES", "embed")
    assert Settings().artifact_images == "embed" and Settings().embed_plots
    monkeypatch.setenv("MLPERF_ARTIFACT_IMAGES", "inline")
    with pytest.raises(ValidationError, match="'link' or 'embed'"):
        Settings()


def test_pages_show_svg_and_link_png_when_both_are_drawn(monkeypatch):
    from pydantic import ValidationError

    from mlperf_scaling.settings import Settings
    from mlperf_scaling.tasks.publish.report import figure_files

    monkeypatch.delenv("MLPERF_PLOT_FORMATS", raising=False)
    assert Settings().plot_formats == ("svg",)
    monkeypatch.setenv("MLPERF_PLOT_FORMATS", "png svg")
    assert Settings().plot_formats == ("png", "svg")
    for wrong in ("gif", "", "svg svg"):
        monkeypatch.setenv("MLPERF_PLOT_FORMATS", wrong)
        with pytest.raises(ValidationError, match="svg, png or both"):
            Settings()
    from pathlib import Path

    both = [Path("plots/bert_time.png"), Path("plots/bert_time.svg")]
    assert figure_files(both) == {"src": "plots/bert_time.svg", "link": "plots/bert_time.png"}
    assert figure_files(both[:1]) == {"src": "plots/bert_time.png", "link": "plots/bert_time.png"}


def test_a_long_title_is_split_rather_than_cut_at_the_edges():
    from mlperf_scaling.tasks.publish.plots import TITLE_CHARACTERS, title_text

    title = title_text("v4.1", "llama2_70b_lora", "the paper's E' (reference across hardware generations)", 29)
    assert title.splitlines() == ["MLPerf Training v4.1 · Llama 2 70B LoRA:",
                                  "the paper's E' (reference across hardware generations)", "29 systems"]
    assert all(len(line) <= TITLE_CHARACTERS for line in title.splitlines())
    assert title_text("v4.1", "bert", "time to train", 1).splitlines() == ["MLPerf Training v4.1 · BERT-large (bert): time to train", "1 system"]


def test_a_reused_figure_draws_the_same_bytes_as_a_new_one(v41_warehouse, tmp_path, monkeypatch):
    import random

    import matplotlib.pyplot as plt

    from mlperf_scaling.tasks.publish import plots
    from mlperf_scaling.warehouse.read import read_queries

    assert plots.scaffold("time", (9, 5.6))[0] is plots.scaffold("time", (9, 5.6))[0]  # one figure per kind, kept
    efficiency, clusters, recommendations = read_queries(v41_warehouse, "round_efficiency", "round_clusters", "round_recommendations", round="v4.1")
    benchmarks = sorted(efficiency["benchmark"].unique())

    def draw(order, folder):
        for benchmark in order:
            mine = pl.col("benchmark") == benchmark.removesuffix("*")
            where, frame = tmp_path / folder, efficiency.filter(mine)
            if benchmark.endswith("*"):  # no throughput and convergence parts: the right panel holds no data of its own
                where, frame = where / "no_parts", frame.with_columns(pl.lit(None, pl.Float64).alias("throughput_part"))
            plot_benchmark(frame, clusters.filter(mine), where, recommendations.filter(mine), ("svg",))
        return {str(p.relative_to(tmp_path / folder)): p.read_bytes() for p in (tmp_path / folder).rglob("*") if p.suffix in (".svg", ".png")}

    # every figure after figures of other benchmarks (other scales, limits, legends, sizes); SVG holds every coordinate
    reused = draw(random.Random(7).sample(benchmarks, len(benchmarks)) + ["bert*"], "reused")
    monkeypatch.setattr(plots, "scaffold", lambda kind, figsize, ncols=1, sharex=False: plt.subplots(1, ncols, figsize=figsize, sharex=sharex))
    new = draw(benchmarks + ["bert*"], "new")
    kinds = {kind for name in new for kind in ("scaling", "time", "systems", "paper_e_prime") if name.endswith(f"_{kind}.svg")}
    assert kinds == {"scaling", "time", "systems", "paper_e_prime"}
    assert len(new) == 32 and reused.keys() == new.keys()  # 7 benchmarks and one without parts, 4 kinds
    assert [name for name in new if reused[name] != new[name]] == []


LONG_NAME = "dgxb200_n8_ngc25.09_nemo-with-the-submitters-own-long-suffix_and_a_region-eastus2"  # 82 characters


def test_the_time_plots_legend_carries_whole_system_names(tmp_path):
    import re as regex

    table, _ = efficiency_table(frame(score(LONG_NAME, 8, 10.0), score("two", 16, 6.0)))
    plot_benchmark(table, cluster_table(table), tmp_path, formats=("svg",))
    svg = (tmp_path / "bert_time.svg").read_text()
    # matplotlib keeps the text as text here: every character of the name is in the legend, over lines that end at a separator
    texts = [regex.sub(r"<[^>]+>", "", t) for t in regex.findall(r"<text[^>]*>.*?</text>", svg, flags=regex.S)]
    shown = "".join("".join(t.split()) for t in texts)
    assert "".join(LONG_NAME.split()) in shown
    assert LONG_NAME[:40] + " " not in svg  # not cut at 40 characters


@given(st.text(alphabet="abc_-./ 0123456789XYZ", min_size=1, max_size=120))
def test_a_wrapped_name_keeps_every_character_and_cuts_no_token(name):
    import re as regex

    from mlperf_scaling.tasks.publish.labels import LEGEND_LINE, wrapped_name

    lines = wrapped_name(name).split("\n")
    assert "".join(name.split()) == "".join("".join(lines).split())  # nothing lost but the blanks at a break
    for token in filter(None, regex.split(r"[_\-./\s]", name)):
        assert any(token in line for line in lines), token  # every token whole on one line
    for line in lines:  # a line is over the width only where one token alone is
        assert len(line) <= LEGEND_LINE or len(list(filter(None, regex.split(r"[_\-./\s]", line)))) == 1
