"""The planner: durations and names a user types, recommendations on small frames (measured evidence first, deadlines
on measured times or predicted upper ends), invariants searched by hypothesis, and the real v4.1 round, against the
warehouse with `mlperf-scaling plan`."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from conftest import read_shipped_round
from hypothesis import given
from hypothesis import strategies as st

from mlperf_scaling.cli import main
from mlperf_scaling.tasks.metrics.calibration import load_calibration
from mlperf_scaling.tasks.metrics.efficiency import efficiency_table
from mlperf_scaling.tasks.metrics.plan import PlanError, make_plan, parse_minutes, select
from mlperf_scaling.tasks.metrics.predict import AMDAHL, TWO_PART, backtest_group, backtest_summary, backtest_table
from mlperf_scaling.tasks.metrics.recommend import MEASURED, PREDICTED, NoCandidate, planner, recommend, recommendation_table


@pytest.mark.parametrize(("text", "minutes"), [("30m", 30.0), ("30", 30.0), ("1.5h", 90.0), ("2h30m", 150.0), ("45 min", 45.0), ("2H", 120.0),
     ("30s", 0.5), ("1s", 1 / 60), ("1m30s", 1.5), ("2 hours", 120.0), ("90 seconds", 1.5), ("1h1m6s", 61.1)])
def test_durations(text, minutes):
    assert parse_minutes(text) == minutes


@pytest.mark.parametrize("text", ["", "soon", "-5m", "0", "0s", "30x", "s", "1s30m"])
def test_bad_durations_say_what_is_accepted(text):
    with pytest.raises(ValueError, match="duration|longer than zero"):
        parse_minutes(text)


def _points(pairs, submitters=None):
    return pl.DataFrame({"accelerators": [n for n, _ in pairs], "time_to_train_min": [t for _, t in pairs],
                         "submitter": submitters or ["S"] * len(pairs), "system": [f"s{i}" for i in range(len(pairs))]})


def test_two_counts_are_answered_from_the_measurements_alone():
    p = planner(_points([(8, 40.0), (8, 44.0), (64, 8.0)]), "H100-SXM")
    found = recommend(p, threshold=0.5)
    assert p.model is None and found.basis == MEASURED and found.reference_accelerators == 8
    assert found.accelerators == 64 and found.time_min == 8.0 and found.efficiency == pytest.approx(40 * 8 / (8.0 * 64))
    assert found.next_accelerators is None and "no model: 2 distinct accelerator counts" in found.sentence
    assert found.sentence.startswith("64 H100-SXM: measured 8.00 min, 1 system (S/s2)")
    single = recommend(planner(_points([(8, 40.0)]), "B200-SXM"))
    assert single.efficiency == 1.0 and "the only accelerator count measured" in single.sentence


AMDAHL_COUNTS = np.array([8, 16, 32, 64, 128, 256])


def _amdahl_points():
    return _points(list(zip(AMDAHL_COUNTS.tolist(), (2.0 + 800.0 / AMDAHL_COUNTS).tolist(), strict=True)))  # A = 2, B = 800


def test_a_deadline_is_met_on_a_measured_time_or_on_a_predicted_upper_end():
    p = planner(_amdahl_points(), "X")
    measured = recommend(p, deadline_min=20.0)
    # 64 takes 14.5 min as measured; 32 takes 27 min
    assert (measured.basis, measured.accelerators, measured.time_min) == (MEASURED, 64, 2 + 800 / 64)
    assert "on its measured time" in measured.reason and measured.time_min_low is None
    # 256 is the fastest measured (5.1 min): 4.2 min needs a count nobody measured, met on its interval's upper end
    predicted = recommend(p, deadline_min=4.2)
    assert predicted.basis == PREDICTED and predicted.accelerators == 1024
    assert predicted.time_min_low < predicted.time_min < predicted.time_min_high <= 4.2 < p.step(512).time_min_high
    assert "(not measured)" in predicted.sentence and "on the interval's upper end" in predicted.sentence
    hopeless = recommend(p, deadline_min=1.0)
    assert hopeless.accelerators == 256 and hopeless.basis == MEASURED and hopeless.reason.startswith("no count meets")
    capped = recommend(p, max_accelerators=40)
    assert capped.accelerators == 32 and "at most 40 accelerators" in capped.reason
    with pytest.raises(NoCandidate, match="smallest has 8"):
        recommend(p, max_accelerators=4)


def test_beyond_twice_the_counts_measured_a_prediction_is_warned_about():
    p = planner(_amdahl_points(), "X")
    step = p.step(4096)
    assert step is not None and step.basis == PREDICTED and step.prediction.beyond_ratio == 16
    warning = p.warning([step])
    assert "4,096 is 16.0x beyond the largest count measured (256): an extrapolation" in warning
    far = p.step(256 * 128)
    assert "far outside the evidence" in p.warning([far])
    assert p.warning([p.step(512)]) is None  # twice the largest: no warning


_groups = st.lists(st.tuples(st.sampled_from([1, 2, 4, 8, 16, 32, 64, 128, 256, 512]), st.floats(0.5, 500.0), st.sampled_from("ABC")),
                   min_size=1, max_size=14)


@given(_groups, st.floats(0.05, 0.95), st.one_of(st.none(), st.floats(0.3, 600.0)))
def test_an_answer_at_a_measured_count_is_the_measurement(points, threshold, deadline):
    """Whatever the group: a recommendation at a measured count quotes the best time measured there (never a fit),
    with no interval and the efficiency of the tables; a predicted one is a count nobody measured, and its interval
    holds its point."""
    frame = _points([(n, t) for n, t, _ in points], [s for _, _, s in points])
    p = planner(frame, "X")
    found = recommend(p, threshold, deadline)
    best = frame.group_by("accelerators").agg(pl.col("time_to_train_min").min())
    best_at = dict(zip(best["accelerators"].to_list(), best["time_to_train_min"].to_list(), strict=True))
    smallest = min(best_at)
    if found.accelerators in best_at:
        assert found.basis == MEASURED and found.time_min == best_at[found.accelerators] and found.time_min_low is None
        assert math.isclose(found.efficiency, best_at[smallest] * smallest / (found.time_min * found.accelerators))
        assert "measured" in found.sentence.split(";")[0]
    else:
        assert found.basis == PREDICTED and deadline is not None and found.time_min_high <= deadline
        assert found.time_min_low <= found.time_min <= found.time_min_high
    if deadline is None:
        assert found.basis == MEASURED


@pytest.fixture(scope="module")
def v41_efficiency():
    data, _ = read_shipped_round("v4.1")
    return efficiency_table(data.scores)[0]


def test_v41_llama2_on_h100_sxm_quotes_what_was_measured(v41_efficiency):
    selection = select(v41_efficiency, "llama2_70b_lora", "h100 sxm", "4.1")
    assert (selection.round, selection.accelerator_group, selection.rows.height) == ("v4.1", "H100-SXM", 20)
    assert selection.other_groups == ["B200-SXM", "H200-SXM"]
    # the intervals at the level v4.1's other groups set, as the warehouse's and `plan`'s
    plan = make_plan(selection, calibration=load_calibration().with_backtest(backtest_table(v41_efficiency)))
    r = plan.recommendation
    assert (r.basis, r.accelerators, r.reference_accelerators, r.best_system) == (MEASURED, 128, 4, "Oracle/128xBM.GPU.H100.8")
    # the measurement, not a fit: 3.07 min (its runs 2.90-3.52), efficiency 0.60 against the best at 4 (58.42 min)
    assert round(r.time_min, 3) == 3.066 and r.time_min_low is None and round(r.efficiency, 2) == 0.60
    assert round(r.reference_time_min, 2) == 58.42 and r.reference_system == "Fujitsu/GX2560M7_H100_SXM_80GBx4"
    assert r.sentence.startswith("128 H100-SXM: measured 3.07 min, 1 system (Oracle/128xBM.GPU.H100.8; its runs 2.90-3.52 min); "
                                 "efficiency 0.60 against the best at 4 (58.4 min); doubling to 256 (not measured: predicted 2.37 min [2.07, 2.93])")
    assert (r.next_basis, r.model, r.backtest_counts, r.warning) == (PREDICTED, AMDAHL, 8, None)
    assert 128 <= r.knee_low < r.knee < r.knee_high < 512 and round(r.knee) == 174
    assert [s.accelerators for s in plan.steps] == [4, 8, 16, 32, 64, 128, 512, 1024, 2048, 4096]
    assert [s.basis for s in plan.steps][-3:] == [MEASURED, PREDICTED, PREDICTED]
    assert all(s.time_min_low < s.time_min < s.time_min_high for s in plan.steps if s.basis == PREDICTED)


def test_names_and_rounds_as_people_type_them(v41_efficiency):
    assert select(v41_efficiency, "llama2_70b_lora", "B200").accelerator_group == "B200-SXM"  # a family with one group
    assert select(v41_efficiency, "gnn").accelerator_group == "H100-SXM"  # default: the most counts measured
    with pytest.raises(PlanError, match="did you mean llama2_70b_lora"):
        select(v41_efficiency, "llama2")
    with pytest.raises(PlanError, match="did you mean stable_diffusion"):
        select(v41_efficiency, "stable_difusion")
    with pytest.raises(PlanError, match="holds: bert, dlrm_dcnv2"):
        select(v41_efficiency, "resnet")
    with pytest.raises(PlanError, match="measured on: B200-SXM, H100-SXM, H200-SXM"):
        select(v41_efficiency, "llama2_70b_lora", "MI300X")
    with pytest.raises(PlanError, match=r"more than one comparable group in v4.1: H100-PCIe, H100-SXM"):
        select(v41_efficiency, "ssd", "H100")
    with pytest.raises(PlanError, match="rounds that have it: v4.1"):
        select(v41_efficiency, "bert", None, "v3.1")


def test_v41_recommendations_table_quotes_measurements(v41_efficiency):
    from mlperf_scaling.tasks.metrics.predict import backtest_table

    backtest = backtest_table(v41_efficiency)
    table = recommendation_table(v41_efficiency, backtest)
    groups = v41_efficiency.filter(~pl.col("accelerator_group").str.starts_with("unknown")).select("benchmark", "accelerator_group").unique()
    assert table.height == groups.height == 28 and (table["basis"] == MEASURED).all()
    assert table.filter(pl.col("benchmark") == "ssd")["workload"][0] == "object detection (RetinaNet; folder ssd until v4.1)"
    best = v41_efficiency.group_by("benchmark", "accelerator_group", "accelerators").agg(pl.col("time_to_train_min").min().alias("best"))
    joined = table.join(best, on=["benchmark", "accelerator_group", "accelerators"])
    assert joined.height == table.height and (joined["time_min"] == joined["best"]).all()  # never faster than the best measured
    predicted_next = table.filter(pl.col("next_basis") == PREDICTED)
    assert predicted_next.height and (predicted_next["next_time_min_low"] < predicted_next["next_time_min_high"]).all()


def test_plan_command(v41_warehouse, tmp_path, capsys):
    from mlperf_scaling.warehouse.read import read_queries

    warehouse = v41_warehouse
    (latest,) = read_queries(warehouse, "latest_recommendations")
    assert latest.height == 28 and latest.filter((pl.col("benchmark_canonical") == "retinanet") & (pl.col("accelerator_group") == "H100-PCIe"))["accelerators"][0] == 16

    code = main(["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--round", "4.1", "--warehouse", str(warehouse),
                 "--price-per-accelerator-hour", "2.5"])
    out = capsys.readouterr().out
    assert code == 0
    assert "LLM fine-tuning (Llama 2 70B LoRA) (llama2_70b_lora) on H100-SXM, MLPerf Training v4.1" in out
    assert "128 H100-SXM: measured 3.07 min, 1 system (Oracle/128xBM.GPU.H100.8" in out
    assert "512xBM.GPU.H100.8" in out and "0.64" in out and "0.35" in out  # throughput and convergence parts
    assert "Efficiency falls below 0.5 from about 174 [128, 215] H100-SXM (measured: 0.60 at 128, 0.22 at 512)." in out
    assert "About 16 USD per training run." in out  # 6.5 accelerator-hours at 2.5 USD
    assert "predicted, 2.0x beyond the counts measured" in out and "4.0x beyond the counts measured: an extrapolation" in out
    assert "Over every backtest in the warehouse, the stated 90 % interval held the measured best time in: amdahl model" in out

    assert main(["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--deadline", "10m", "--warehouse", str(warehouse)]) == 0
    assert "32 H100-SXM: measured 8.22 min" in capsys.readouterr().out  # 16 took 16.7 min

    assert main(["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--accelerators", "2048", "--warehouse", str(warehouse)]) == 0
    out = capsys.readouterr().out
    assert "At 2,048 H100-SXM (not measured): predicted 0.93 min [0.77, 1.16] (90 % interval, amdahl model" in out
    assert "The two-part model: 0.76 min [0.63, 1.03] at a global batch of 128." in out

    for argv, message in [
        (["plan", "resnet"], "no benchmark 'resnet' in the warehouse"),
        (["plan", "llama2"], "no benchmark 'llama2' in the warehouse: did you mean llama2_70b_lora?"),
        (["plan", "bert", "--deadline", "soon"], "--deadline: not a duration: 'soon'"),
        (["plan", "bert", "--accelerator", "H100-SXM", "--max-accelerators", "2"], "no H100-SXM configuration measured with at most 2"),
    ]:
        assert main([*argv, "--warehouse", str(warehouse)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"mlperf-scaling: {message}") and err.count("\n") == 1
    assert main(["plan", "bert", "--warehouse", str(tmp_path / "absent.duckdb")]) == 2
    assert "no warehouse at" in capsys.readouterr().err
    assert main(["plan", "bert", "--round", "four", "--warehouse", str(warehouse)]) == 2
    assert "not a round name (expected vX.Y or X.Y, e.g. v4.1): 'four'" in capsys.readouterr().err


def test_plan_as_json_says_what_is_measured_and_what_predicted(v41_warehouse, capsys):
    import json

    assert main(["plan", "llama2_70b_lora", "--accelerator", "H100-SXM", "--accelerators", "2048", "--format", "json",
                 "--warehouse", str(v41_warehouse)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["recommendation"]["basis"] == "measured" and document["interval_level"] == 0.9
    assert document["efficiency_reference"] == {"accelerators": 4, "time_min": pytest.approx(58.4207, abs=1e-4),
                                                "system": "Fujitsu/GX2560M7_H100_SXM_80GBx4"}
    by_count = {row["accelerators"]: row for row in document["best_per_count"]}
    assert by_count[1024]["basis"] == "measured" and by_count[1024]["time_min_low"] is None
    assert by_count[4096]["basis"] == "predicted" and by_count[4096]["beyond_ratio"] == 4.0
    assert document["at_accelerators"]["basis"] == "predicted" and document["other_model"]["model"] == TWO_PART
    assert set(document["backtest"]) == {AMDAHL, TWO_PART} and document["backtest"][AMDAHL]["counts"] == 8


@pytest.fixture(scope="module")
def v41_v51_efficiency():
    frames = [read_shipped_round(r)[0].scores for r in ("v4.1", "v5.1")]
    return efficiency_table(pl.concat(frames, how="diagonal_relaxed"))[0]


def test_without_a_round_the_plan_answers_from_the_round_that_measured_the_group_best(v41_v51_efficiency):
    best = select(v41_v51_efficiency, "llama2_70b_lora", "H100-SXM")
    assert best.round == "v4.1" and best.rows["accelerators"].n_unique() == 8
    assert best.why_round == "the round that measured it best: 8 accelerator counts; the newest with it is v5.1 (--round v5.1)"
    newest = select(v41_v51_efficiency, "llama2_70b_lora", "H100-SXM", "latest")
    assert newest.round == "v5.1" and newest.rows["accelerators"].n_unique() == 2


def test_v41_llama2_backtest_leaves_each_count_out(v41_efficiency):
    rows = v41_efficiency.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM"))
    found = pl.DataFrame(backtest_group(rows, "4.1.0", "llama2_70b_lora", "v4.1"))
    assert found.height == 16 and sorted(set(found["accelerators"].to_list())) == [4, 8, 16, 32, 64, 128, 512, 1024]
    # the measured value is the best time at that count; each prediction comes from the seven other counts
    at_512 = found.filter((pl.col("accelerators") == 512) & (pl.col("model") == AMDAHL)).row(0, named=True)
    assert round(at_512["measured_min"], 3) == 2.065 and round(at_512["predicted_min"], 3) == 1.466 and at_512["covered"] is False
    assert found.filter(pl.col("accelerators").is_in([4, 1024]))["extrapolated"].all()
    assert found.filter(pl.col("accelerators") == 1024)["beyond_ratio"].to_list() == [2.0, 2.0]
    summary = backtest_summary(found)
    assert set(summary) == {TWO_PART, AMDAHL} and all(s.cases == 8 for s in summary.values())
    assert round(summary[AMDAHL].median_error_pct, 1) == 9.5 and (summary[AMDAHL].covered, summary[AMDAHL].with_interval) == (6, 8)


def test_the_convergence_part_comes_from_the_rulesets_rcps():
    from mlperf_scaling.tasks.metrics.predict import rcp_curve

    curve = rcp_curve("4.1.0", "llama2_70b_lora")
    # the RCP checker's own olympic means of samples to converge at batch 8, 16 and 128 (32 pruned as it prunes)
    assert [batch for batch, _ in curve] == [8.0, 16.0, 128.0]
    assert [round(mean) for _, mean in curve] == [3179, 4032, 11264]
    assert rcp_curve("0.7.0", "bert") == ()  # the RCP checker starts at 1.0.0


def test_the_answer_at_a_count(v41_efficiency):
    selection = select(v41_efficiency, "llama2_70b_lora", "H100-SXM", "v4.1")
    plan = make_plan(selection, accelerators=2048)
    p = plan.prediction
    assert p is not None and p.accelerators == 2048 and p.basis == PREDICTED and p.prediction.model == AMDAHL
    assert p.time_min_low < p.time_min < p.time_min_high
    at_1024 = make_plan(selection, accelerators=1024).prediction
    assert at_1024.basis == MEASURED and round(at_1024.time_min, 3) == 1.188 and p.time_min < at_1024.time_min
    assert make_plan(selection, accelerators=1024).other_prediction is None  # measured: nothing predicted beside it
    named = make_plan(selection, accelerators=1024, global_batch=128).prediction
    assert named.prediction.model == TWO_PART and named.prediction.global_batch == 128 and named.basis == PREDICTED
    assert plan.other_prediction.prediction.model == TWO_PART


def test_the_two_part_model_follows_the_batch_the_counts_imply(v41_efficiency):
    from mlperf_scaling.tasks.metrics.fits import apart_series
    from mlperf_scaling.tasks.metrics.predict import two_part_model

    rows = v41_efficiency.filter((pl.col("benchmark") == "llama2_70b_lora") & (pl.col("accelerator_group") == "H100-SXM"))
    model = two_part_model(apart_series(rows)[0], "4.1.0", "llama2_70b_lora")
    assert model is not None and model.convergence.source == "RCPs of training_4.1.0 and the runs at 1 more batch size(s)"
    # the batch N implies: the measured ones at measured counts, log-log between, the largest measured beyond
    assert [model.batch(n) for n in (8, 128, 512, 1024, 4096)] == pytest.approx([8, 16, 64, 128, 128])
    assert model.batch(256) == pytest.approx(32.0)
    # the shape: a bigger batch needs more samples, so the same count takes longer
    assert model.minutes(1024, 256) > model.minutes(1024, 128)
