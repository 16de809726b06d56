"""Across rounds: carried-over results counted once, trends at equal scale, on the real v3.1 and v4.1 rounds."""

import polars as pl
from conftest import read_shipped_round

from mlperf_scaling.tasks.metrics.trends import carried_over_groups, trend_table
from mlperf_scaling.tasks.publish.trend_plots import plot_trends


def _rounds(*names):
    datas = [read_shipped_round(name)[0] for name in names]
    scores = pl.concat([d.scores for d in datas], how="vertical")
    runs = pl.concat([d.runs.select("round", "submitter", "system", "benchmark", "scaling_mode", "sha256", "run_start_ms", "run_stop_ms") for d in datas])
    return scores, runs


def test_results_republished_in_a_later_round_are_flagged():
    _, runs = _rounds("v3.1", "v4.1")
    carried = carried_over_groups(runs)
    krai = carried.filter((pl.col("submitter") == "Krai") & (pl.col("benchmark") == "bert") & (pl.col("round") == "v4.1"))
    assert krai.height == 2 and krai["is_carried_over"].all()  # the same runs as v3.1, re-published
    assert not carried["round"].is_in(["v3.1"]).any()  # the first publication is never the copy


def test_trends_count_a_result_once_and_compare_equal_scale(tmp_path):
    scores, runs = _rounds("v3.1", "v4.1")
    trends = trend_table(scores, runs)
    a5000 = trends.filter((pl.col("benchmark_canonical") == "bert") & (pl.col("accelerator_group") == "RTX A5000-PCIe"))
    assert a5000.height == 0  # v4.1's A5000 results are v3.1's again: no second point, no false trend
    h100 = trends.filter((pl.col("benchmark_canonical") == "bert") & (pl.col("accelerator_group") == "H100-SXM") & (pl.col("accelerators") == 8))
    assert h100["round"].to_list() == ["v3.1", "v4.1"]
    first, second = h100["best_time_min"].to_list()
    assert h100["speedup_vs_first"][1] == first / second
    plots = plot_trends(trends, tmp_path, ["v3.0", "v3.1", "v4.0", "v4.1"], formats=("png", "svg"))
    assert plots["bert"][0].stat().st_size > 10_000
    # v4.0 is not among these rounds: its tick is shown, and no solid line bridges it
    assert "v4.0" in plots["bert"][1].read_text()


def test_plots_are_the_same_bytes_whatever_the_row_order(tmp_path):
    from mlperf_scaling.tasks.publish.plots import plot_systems
    from mlperf_scaling.tasks.publish.trend_plots import plot_trend

    # three groups at 8 accelerators in the same rounds: equal-sized series, whose colours must come from their names
    groups = ["A100-SXM", "H100-SXM", "B200-SXM", "MI300X-OAM", "Gaudi2-OAM"]
    trends = pl.DataFrame([{"benchmark_canonical": "bert", "accelerator_group": g, "accelerators": 8, "round": r, "round_order": o,
                            "best_time_min": 10.0 / (1 + i) / (1 + o)} for i, g in enumerate(groups) for o, r in enumerate(["v3.1", "v4.0"])])
    orders = [trends, trends.reverse(), trends.sample(fraction=1.0, shuffle=True, seed=3), trends.sample(fraction=1.0, shuffle=True, seed=4)]
    drawn = [[p.read_bytes() for p in plot_trend("bert", frame, tmp_path / f"t{i}", ["v3.1", "v4.0"], ("svg", "png"))] for i, frame in enumerate(orders)]
    assert all(d == drawn[0] for d in drawn)
    # systems of several clusters at the same place: overlapping markers, drawn in an order that must not vary
    scores, _ = _rounds("v4.1")
    systems = (scores.filter((pl.col("benchmark") == "bert") & pl.col("time_to_train_min").is_not_null())
               .with_columns(accelerator_group=pl.col("accelerator_model_name"), cluster=pl.int_range(pl.len()) % 4))
    orders = [systems, systems.reverse(), systems.sample(fraction=1.0, shuffle=True, seed=5), systems.sample(fraction=1.0, shuffle=True, seed=6)]
    drawn = [[p.read_bytes() for p in plot_systems(frame, tmp_path / f"s{i}", ("svg", "png"))] for i, frame in enumerate(orders)]
    assert all(d == drawn[0] for d in drawn)


def test_a_rounds_systems_against_the_previous_rounds_fit():
    from conftest import read_shipped_round

    from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
    from mlperf_scaling.tasks.metrics.software_gains import software_gains

    scores = pl.concat([read_shipped_round(r)[0].scores for r in ("v4.1", "v5.1")], how="diagonal_relaxed")
    gains = software_gains(efficiency_table(scores)[0])
    llama = gains.filter((pl.col("benchmark_canonical") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM")).sort("accelerators")
    # v5.1's two H100-SXM systems against v4.1's fit (8 counts from 4 to 1,024): 6 % and 1 % faster at 64 and 128 GPUs
    assert llama["previous_round"].to_list() == ["v4.1", "v4.1"] and llama["system"].to_list() == ["hpf_n8", "hpf_n16"]
    assert [round(r, 2) for r in llama["time_ratio"]] == [0.94, 0.99] and not llama["extrapolated"].any()
    assert (gains["measured_min"] / gains["predicted_min"] - gains["time_ratio"]).abs().max() < 1e-12
    assert set(gains["round"]) == {"v5.1"}  # only where the previous round measured the group at three counts or more


def test_hpc_results_republished_are_flagged_per_scaling_mode():
    """Fugaku's CosmoFlow logs are the same bytes in HPC v2.0 and v3.0, strong and weak; eos_n256's strong and weak
    DeepCAM (v3.0 only) are two results, neither a copy."""
    _, runs = _rounds("hpc-v2.0", "hpc-v3.0")
    carried = carried_over_groups(runs).filter(pl.col("round") == "hpc-v3.0")
    fugaku = carried.filter(pl.col("system").str.starts_with("fugaku"))
    assert sorted(zip(fugaku["system"], fugaku["scaling_mode"], strict=True)) == [
        ("fugaku_512xA64FX_tensorflow_closed", "strong"), ("fugaku_512xA64FX_tensorflow_open", "strong"),
        ("fugaku_82944xA64FX_tensorflow_closed", "weak"), ("fugaku_82944xA64FX_tensorflow_open", "weak")]
    assert fugaku["is_carried_over"].all()
    assert carried.filter(pl.col("system") == "eos_n256_ngc23.09_pytorch").height == 0
