"""The plots as a reader sees them at a 1,280 px viewport: every text at least 10 CSS px at the width its page shows
the plot, the colour naming the accelerator (the same colour in every plot of a round), the k-means cluster only a
marker's shape. Drawn from small frames, measured in the SVG the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.scores import ScoresSchema
from mlperf_scaling.tasks.metrics.clusters import cluster_table
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table

TEMPLATES = Path(__file__).resolve().parents[1] / "mlperf_scaling" / "tasks" / "publish" / "templates"
VIEWPORT_PX = 1280
MIN_TEXT_PX = 10.0
REM_PX = 16.0  # the browser's default root font size: the pages set none


def shown_widths(viewport: float = VIEWPORT_PX) -> dict[str, float]:
    """CSS px each plot kind is shown at on its page at `viewport`, from base.html.j2's rules: the body's content box
    (max-width, less its side padding), a round page's grid of `minmax(Npx, 1fr)` columns with their gap, the kinds
    that span the grid, and the rest (trend, why, power) alone across the body."""
    css = (TEMPLATES / "base.html.j2").read_text(encoding="utf-8")
    body = re.search(r"\bbody \{([^}]*)\}", css)
    assert body is not None
    max_width = float(re.search(r"max-width:\s*([\d.]+)px", body.group(1)).group(1))  # type: ignore[union-attr]
    side = float(re.search(r"padding:\s*0 ([\d.]+)rem", body.group(1)).group(1)) * REM_PX  # type: ignore[union-attr]
    content = min(max_width, viewport - 2 * side)
    grid = re.search(r"\.plots \{[^}]*minmax\(([\d.]+)px, 1fr\)\);\s*gap:\s*([\d.]+)rem", css)
    assert grid is not None
    minimum, gap = float(grid.group(1)), float(grid.group(2)) * REM_PX
    columns = max(1, int((content + gap) // (minimum + gap)))
    column = (content - gap * (columns - 1)) / columns
    spanning = re.search(r"((?:figure\.\w+,?\s*)+)\{\s*grid-column:\s*1\s*/\s*-1;", css)
    assert spanning is not None
    wide = set(re.findall(r"figure\.(\w+)", spanning.group(1)))
    # the image fills its figure: `width: 100%` scales the SVG's viewBox to that width
    assert re.search(r"figure img \{[^}]*width:\s*100%", css)
    widths = {kind: content if kind in wide else column for kind in ("scaling", "time", "energy", "systems", "paper")}
    return {**widths, "trend": content, "why": content, "power": content}


def smallest_text_px(svg: Path, shown_px: float) -> tuple[float, str]:
    """The smallest text of an SVG in CSS px when shown `shown_px` wide, and that text.

    Matplotlib writes `viewBox="0 0 {72 W} {72 H}"` and each text's `font-size` in those user units (points of the
    figure): shown D px wide, a font of s units renders at s * D / (72 W) px."""
    text = svg.read_text(encoding="utf-8")
    view_width = float(re.search(r'viewBox="0 0 ([\d.]+) ', text).group(1))  # type: ignore[union-attr]
    found = []
    for tag, content in re.findall(r"(<text\b[^>]*>)(.*?)</text>", text, flags=re.S):
        size = re.search(r"font-size:\s*([\d.]+)px", tag)
        assert size is not None, tag  # every text states its size
        found.append((float(size.group(1)) * shown_px / view_width, re.sub(r"<[^>]+>", "", content).strip()))
    assert found, svg
    return min(found)


def score(system, accelerators, minutes, model, submitter="S", benchmark="bert"):
    return {"round": "v4.1", "submitter": submitter, "system": system, "benchmark": benchmark, "benchmark_canonical": benchmark,
            "division": "closed", "accelerator_model_name": model, "accelerators": accelerators, "number_of_nodes": max(1, accelerators // 8),
            "time_to_train_min": minutes, "n_runs": 10, "n_valid": 10, "n_required": 10, "n_missing": 0, "status": "scored", "status_reason": None}


H100, A100, GAUDI2 = "NVIDIA H100-SXM5-80GB", "NVIDIA A100-SXM4-80GB", "Intel Gaudi2"
# twelve comparable groups, the most a round has held (v3.1: 13 with an unnamed one)
MANY = [H100, A100, GAUDI2, "NVIDIA H100-PCIe-80GB", "NVIDIA A100-PCIe-80GB", "NVIDIA L40S", "NVIDIA L40", "NVIDIA L4", "NVIDIA A30",
        "NVIDIA RTX A5000", "TPU-v5e", "NVIDIA A10G"]


def systems(benchmark: str = "bert", models: list[str] | None = None) -> pl.DataFrame:
    """A round's benchmark: a few groups at several counts (scaling curves, a Pareto front, several clusters), one
    system with a long name."""
    rows = [score(f"h100_n{n}_{benchmark}", n, 400.0 / n ** 0.9, H100, benchmark=benchmark) for n in (8, 16, 64, 256, 1024)]
    rows += [score(f"a100_n{n}", n, 900.0 / n ** 0.85, A100, submitter="T", benchmark=benchmark) for n in (8, 32, 128)]
    rows += [score("gaudi2_8x", 8, 120.0, GAUDI2, submitter="U", benchmark=benchmark),
             score("dgxh100_n2_ngc24.04_nemo-with-the-submitters-own-long-suffix", 16, 24.0, H100, submitter="V", benchmark=benchmark)]
    rows += [score(f"other_{i}", 2 ** (i % 4 + 1), 300.0 + 10 * i, model, submitter="W", benchmark=benchmark) for i, model in enumerate(models or [])]
    table, _ = efficiency_table(pl.DataFrame(rows, schema=frame_schema(ScoresSchema)))
    # power measured for the H100 systems: the energy plot
    return table.with_columns(
        energy_kj=pl.when(pl.col("accelerator_group") == "H100-SXM").then(pl.col("time_to_train_min") * pl.col("accelerators") * 0.6),
        is_pareto_energy=pl.col("accelerator_group") == "H100-SXM")


def drawn_round(folder: Path, table: pl.DataFrame) -> dict[str, list[Path]]:
    from mlperf_scaling.tasks.publish.plots import plot_benchmark

    return plot_benchmark(table, cluster_table(table), folder, formats=("svg",))


def drawn_elsewhere(folder: Path) -> dict[str, list[Path]]:
    """The plots of the other pages: a trend (across rounds), why and power (why it scales)."""
    from mlperf_scaling.tasks.publish.trend_plots import plot_power, plot_trend, plot_why

    groups = ["A100-SXM", "H100-SXM", "B200-SXM", "MI300X-OAM", "Gaudi2-OAM"]
    trends = pl.DataFrame([{"benchmark_canonical": "bert", "accelerator_group": g, "accelerators": 8, "round": r, "round_order": o,
                            "best_time_min": 10.0 / (1 + i) / (1 + o)} for i, g in enumerate(groups) for o, r in enumerate(["v3.1", "v4.0", "v4.1"])])
    context = pl.DataFrame([{"round": "v4.1", "benchmark_canonical": "bert", "submitter": submitter, "accelerators": n,
                             "time_to_train_min": 300.0 / n, "interconnect_kind": kind, "measurement": measurement,
                             "w_per_accelerator": 700.0 + n, "j_per_sample": 2.0 + n / 100}
                            for submitter, kind, measurement in (("Dell", "NVLink + NVSwitch", "AC"), ("SMC", "PCIe", "DC"), ("Lenovo", None, None))
                            for n in (8, 16, 64)])
    return {"trend": plot_trend("bert", trends, folder, ["v3.1", "v4.0", "v4.1"], ("svg",)),
            "why": plot_why("bert", context, folder, ("svg",)), "power": plot_power("bert", context, folder, ("svg",))}


def test_the_pages_show_a_rounds_plots_in_two_columns_of_592_px_at_1280():
    widths = shown_widths()
    assert widths["systems"] == widths["paper"] == widths["energy"] == 592
    assert widths["scaling"] == widths["time"] == widths["trend"] == widths["why"] == widths["power"] == 1200


def test_the_canvas_knows_the_widths_the_pages_show():
    from mlperf_scaling.tasks.publish.plot_canvas import SHOWN_PX, shown_text_px

    assert SHOWN_PX == shown_widths()
    assert shown_text_px(8, 6.4, "systems") == pytest.approx(8 * 592 / (72 * 6.4))


def test_every_text_of_every_plot_reads_at_10_px_or_more_at_1280(tmp_path):
    widths = shown_widths()
    drawn = {**drawn_round(tmp_path, systems(models=MANY[3:])), **drawn_elsewhere(tmp_path)}
    assert set(drawn) == {"scaling", "time", "energy", "systems", "paper", "trend", "why", "power"}
    smallest = {kind: smallest_text_px(next(p for p in paths if p.suffix == ".svg"), widths[kind]) for kind, paths in drawn.items()}
    too_small = {kind: (round(px, 2), text) for kind, (px, text) in smallest.items() if px < MIN_TEXT_PX}
    assert too_small == {}


# every comparable group each published round held (its systems JSON, v0.6 to v5.1), those the reference names
PUBLISHED_ROUNDS = {
    "v0.7": ["A100 (form factor not stated)", "A100-SXM", "Ascend 910", "TPU v3", "V100 (form factor not stated)", "V100-PCIe", "V100-SXM"],
    "v1.0": ["A100-PCIe", "A100-SXM", "Ascend 910", "Gaudi-OAM", "IPU GC200-PCIe"],
    "v2.1": ["A100-PCIe", "A100-SXM", "A30-PCIe", "A40-PCIe", "Gaudi2-OAM", "H100-SXM", "RTX A5000-PCIe"],
    "v3.1": ["A100-PCIe", "A100-SXM", "A10G-PCIe", "A30-PCIe", "Gaudi2-OAM", "H100-PCIe", "H100-SXM", "L4-PCIe", "L40-PCIe", "L40S-PCIe",
             "RTX A5000-PCIe", "TPU v5e"],
    "v4.0": ["A100-SXM", "Gaudi2-OAM", "GeForce RTX 4090-PCIe", "H100-PCIe", "H100-SXM", "H200-SXM", "L40S-PCIe", "Radeon RX 7900 XTX-PCIe",
             "TPU v5p"],
    "v4.1": ["A100-PCIe", "B200-SXM", "GeForce RTX 4090-PCIe", "H100-PCIe", "H100-SXM", "H200-SXM", "RTX A5000-PCIe", "Radeon RX 7900 XTX-PCIe",
             "TPU Trillium", "TPU v5p"],
    "v5.1": ["B200-SXM", "B300-SXM", "GB200", "GB300", "H100-SXM", "H200-PCIe", "H200-SXM", "MI300X-OAM", "MI325X-OAM", "MI350X-OAM",
             "MI355X-OAM", "RTX PRO 6000-PCIe"],
}


@pytest.mark.parametrize("round_name", sorted(PUBLISHED_ROUNDS))
def test_no_two_accelerators_of_a_round_share_a_colour(round_name):
    from mlperf_scaling.tasks.publish.plots import GROUP_COLOURS, group_colour

    groups = PUBLISHED_ROUNDS[round_name]
    assert set(groups) <= set(GROUP_COLOURS)  # listed, not left to a hash
    assert len({group_colour(g) for g in groups}) == len(groups)


def _fills(svg: str) -> set[str]:
    return set(re.findall(r"fill:\s*(#[0-9a-f]{6})", svg))


def _texts(svg: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", t).strip() for t in re.findall(r"<text\b[^>]*>(.*?)</text>", svg, flags=re.S)]


def test_colour_names_the_accelerator_the_same_in_every_plot_and_shape_the_cluster(tmp_path):
    from mlperf_scaling.tasks.publish.plots import cluster_marker, group_colour

    # two benchmarks of a round: the A100s lead in one, trail in the other, and a third group only in the second
    first = systems("bert")
    second = systems("resnet", models=["NVIDIA L40S"] * 3).with_columns(
        time_to_train_min=pl.when(pl.col("accelerator_group") == "A100-SXM").then(pl.col("time_to_train_min") / 10).otherwise(pl.col("time_to_train_min")))
    for table, folder in ((first, tmp_path / "bert"), (second, tmp_path / "resnet")):
        drawn = drawn_round(folder, table)
        groups = table["accelerator_group"].unique().to_list()
        for kind in ("time", "paper", "systems", "scaling"):
            svg = drawn[kind][0].read_text(encoding="utf-8")
            shown = [g for g in groups if kind != "scaling" or g in ("H100-SXM", "A100-SXM")]  # scaling: groups of two counts or more
            assert {group_colour(g) for g in shown} <= _fills(svg), kind
        for kind in ("time", "paper"):  # the legend names each accelerator, never a colour per cluster
            texts = _texts(drawn[kind][0].read_text(encoding="utf-8"))
            n = table.group_by("accelerator_group").len()
            assert {f"{g} ({k})" for g, k in n.iter_rows()} <= set(texts), kind
            assert not [t for t in texts if re.fullmatch(r"cluster \d+", t)] or "shape: k-means cluster 0" in texts
    assert len({cluster_marker(c) for c in range(6)}) == 6  # k-means finds at most 6 clusters here (clusters.K_RANGE)


def test_a_round_of_twelve_accelerators_draws_twelve_colours(tmp_path):
    from mlperf_scaling.tasks.publish.plots import group_colour

    table = systems(models=MANY[3:])
    groups = table["accelerator_group"].unique().to_list()
    assert len(groups) == 12
    svg = drawn_round(tmp_path, table)["time"][0].read_text(encoding="utf-8")
    colours = {group_colour(g) for g in groups}
    assert len(colours) == 12 and colours <= _fills(svg)


def test_an_accelerator_nobody_listed_gets_one_colour_everywhere():
    from mlperf_scaling.tasks.publish.plots import GROUP_COLOURS, group_colour

    assert "Z9000-OAM" not in GROUP_COLOURS
    assert group_colour("Z9000-OAM") == group_colour("Z9000-OAM")
    assert group_colour("unknown: N/A") in ("#7f7f7f", "#c7c7c7")  # grey: the reference does not know it
