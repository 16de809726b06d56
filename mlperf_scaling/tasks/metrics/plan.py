"""The planner behind `mlperf-scaling plan`: a user's words (benchmark, accelerator, round, deadline) resolved against
the `efficiency` table, then the measured configurations, the fitted curve with its interval and the recommendation.

Tables in, a Plan out; printing is the command line's job.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.rounds import round_key
from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS, AmdahlBootstrap, apart_series, bootstrap_amdahl
from mlperf_scaling.tasks.metrics.predict import AMDAHL_TIME, TWO_PART, backtest_group, backtest_summary, two_part_model
from mlperf_scaling.tasks.metrics.recommend import Recommendation, recommend
from mlperf_scaling.tasks.score.rules import ruleset_name

CURVE_DOUBLINGS = 2  # the curve goes this many doublings past the largest count measured, marked extrapolated


class PlanError(ValueError):
    """The request names nothing the warehouse holds; the message says what it does hold."""


_NUMBER = r"\d+(?:\.\d+)?"
_DURATION = re.compile(
    rf"^\s*(?:(?P<h>{_NUMBER})\s*(?:hours?|hrs?|h))?"
    rf"\s*(?:(?P<m>{_NUMBER})\s*(?:minutes?|mins?|m))?"
    rf"\s*(?:(?P<s>{_NUMBER})\s*(?:seconds?|secs?|s))?\s*$",
    re.IGNORECASE,
)
_BARE_MINUTES = re.compile(rf"^\s*(?P<m>{_NUMBER})\s*$")


def parse_minutes(text: str) -> float:
    """'30m', '30', '1.5h', '2h30m', '45min', '90s' as minutes; a ValueError says what is accepted."""
    if bare := _BARE_MINUTES.match(text):
        minutes = float(bare["m"])
    elif (found := _DURATION.match(text)) and any(found[unit] for unit in "hms"):
        minutes = float(found["h"] or 0) * 60 + float(found["m"] or 0) + float(found["s"] or 0) / 60
    else:
        raise ValueError(f"not a duration: {text!r} (e.g. 30m, 90 (minutes), 1.5h, 2h30m, 45s)")
    if minutes <= 0:
        raise ValueError(f"a deadline must be longer than zero: {text!r}")
    return minutes


def _normal(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text).lower()


@dataclass(frozen=True)
class Selection:
    round: str
    benchmark: str
    workload: str
    accelerator_group: str
    rows: pl.DataFrame  # the group's efficiency rows in that round and benchmark
    other_groups: list[str]  # the benchmark's other comparable groups in that round
    why_round: str | None = None  # why this round, when the user did not name it


def select(efficiency: pl.DataFrame, benchmark: str, accelerator: str | None = None, round_name: str = "best") -> Selection:
    """The rows a plan is made from. `benchmark`: folder or canonical name; `accelerator`: a comparable group
    (H100-SXM), or a family (H100) when it has one group; default the group with most distinct counts. `round_name`:
    a round, `latest` (the newest that has it) or `best` (the one that measured it best: best_measured_round)."""
    if efficiency.height == 0:
        raise PlanError("the warehouse holds no analysed round: run `mlperf-scaling run` first")
    wanted = _normal(benchmark)
    rows = efficiency.filter(_normal_eq("benchmark", wanted) | _normal_eq("benchmark_canonical", wanted))
    if rows.height == 0:
        known = sorted(set(efficiency["benchmark"].to_list()))
        raise PlanError(f"no benchmark {benchmark!r} in the warehouse; it holds: {', '.join(known)}")
    rows = rows.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    if accelerator is not None:
        measured_on = sorted(set(rows["accelerator_group"].to_list()))
        wanted_group = _normal(accelerator)
        exact = rows.filter(_normal_eq("accelerator_group", wanted_group))
        rows = exact if exact.height else rows.filter(_normal_eq("accelerator_family", wanted_group))
        if rows.height == 0:
            raise PlanError(f"no {benchmark} result on {accelerator!r} in any round; measured on: {', '.join(measured_on)}")
    rounds = sorted(set(rows["round"].to_list()), key=round_key)
    if round_name not in (BEST, "latest"):
        if round_name not in rounds:
            raise PlanError(f"no {benchmark}{' on ' + accelerator if accelerator else ''} in {round_name}; "
                            f"rounds that have it: {', '.join(rounds)}")
        chosen_round = round_name
    elif round_name == "latest":
        chosen_round = rounds[-1]
    else:
        chosen_round = best_measured_round(rows)
    in_round = rows.filter(pl.col("round") == chosen_round)
    groups = in_round["accelerator_group"].unique().to_list()
    if len(groups) > 1 and accelerator is not None:
        raise PlanError(f"{accelerator!r} is more than one comparable group in {chosen_round}: {', '.join(sorted(groups))}; name one")
    if accelerator is None:
        ranked = in_round.group_by("accelerator_group").agg(pl.col("accelerators").n_unique().alias("counts"), pl.len().alias("n"))
        group = ranked.sort(["counts", "n", "accelerator_group"], descending=[True, True, False])["accelerator_group"][0]
    else:
        group = groups[0]
    everything = efficiency.filter((pl.col("round") == chosen_round) & (pl.col("benchmark") == in_round["benchmark"][0]))
    others = sorted(set(everything["accelerator_group"].to_list()) - {group})
    folder = str(in_round["benchmark"][0])
    chosen = in_round.filter(pl.col("accelerator_group") == group).sort("accelerators", "time_to_train_min")
    why = None
    if round_name == BEST:
        counts = chosen["accelerators"].n_unique()
        why = f"the round that measured it best: {counts} accelerator count{'s' if counts != 1 else ''}"
        if chosen_round != rounds[-1]:
            why += f"; the newest with it is {rounds[-1]} (--round {rounds[-1]})"
    return Selection(chosen_round, folder, benchmark_name(folder, chosen_round).workload, str(group), chosen, others, why)


BEST = "best"  # the default round: the one that measured the group best


def best_measured_round(rows: pl.DataFrame) -> str:
    """The round that measured a benchmark best: the most distinct accelerator counts in one comparable group (what a
    fit needs), then the most systems, then the newest. The newest round alone may know two counts where an older one
    knew eight (v5.1 and v4.1 Llama 2 LoRA on H100-SXM)."""
    ranked = (rows.group_by("round", "accelerator_group")
              .agg(pl.col("accelerators").n_unique().alias("counts"), pl.len().alias("n"))
              .with_columns(pl.col("round").map_elements(lambda r: round_key(r)[0] * 1000 + round_key(r)[1], return_dtype=pl.Int64).alias("order"))
              .sort(["counts", "n", "order"], descending=True))
    return str(ranked["round"][0])


def _normal_eq(column: str, wanted: str) -> pl.Expr:
    return pl.col(column).fill_null("").map_elements(_normal, return_dtype=pl.String).eq(wanted)


@dataclass(frozen=True)
class CurvePoint:
    accelerators: int
    time_min: float
    time_min_low: float
    time_min_high: float
    efficiency: float
    efficiency_low: float
    efficiency_high: float
    accelerator_hours: float
    measured: bool
    extrapolated: bool


@dataclass(frozen=True)
class Prediction:
    """The time at a count nobody measured (or the user named), by the model that backtested best on the group."""

    accelerators: int
    model: str  # predict.TWO_PART or predict.AMDAHL_TIME
    time_min: float
    time_min_low: float
    time_min_high: float
    global_batch: float | None  # the batch the two-part model assumed
    measured: bool  # the count was measured too (the prediction is then a check)


@dataclass(frozen=True)
class Plan:
    selection: Selection
    recommendation: Recommendation
    curve: list[CurvePoint]  # empty without a fit
    fit_note: str | None  # why there is no curve
    backtest: dict[str, tuple[float, int]] = field(default_factory=dict)  # model -> (median |error| %, counts)
    prediction: Prediction | None = None
    other_prediction: Prediction | None = None  # the same count by the other model, where it can be made


def predict_at(selection: Selection, accelerators: int, global_batch: float | None,
               backtest: dict[str, tuple[float, int]]) -> tuple[Prediction, Prediction | None]:
    """The predicted time at a count by each model that can be made, the one to go by first: the two-part model where
    the group's logs allow one and it backtested no worse than the Amdahl fit on time (or nothing was backtested, or
    the user named the batch), else the Amdahl fit. Both are returned: where they disagree, that is worth seeing.
    PlanError when neither can be made."""
    rows, _ = apart_series(selection.rows)
    two_part = two_part_model(rows, ruleset_name(selection.round), selection.benchmark)
    if global_batch is not None and two_part is None:
        raise PlanError(f"--global-batch needs the samples and batch sizes of the group's logs, which {selection.round} "
                        f"{selection.benchmark} on {selection.accelerator_group} does not have")
    measured = accelerators in set(rows["accelerators"].to_list())
    found: dict[str, Prediction] = {}
    if two_part is not None:
        time_min, low, high, batch = two_part.predict(float(accelerators), global_batch)
        found[TWO_PART] = Prediction(accelerators, TWO_PART, time_min, low, high, batch, measured)
    n = rows["accelerators"].to_numpy().astype(float)
    if len(np.unique(n)) >= MIN_DISTINCT_COUNTS:
        fit = bootstrap_amdahl(n, rows["time_to_train_min"].to_numpy().astype(float))
        time_min, low, high = fit.time_interval(float(accelerators))
        found[AMDAHL_TIME] = Prediction(accelerators, AMDAHL_TIME, time_min, low, high, None, measured)
    if not found:
        raise PlanError(f"{len(np.unique(n))} accelerator count(s) measured for {selection.accelerator_group}: too few to predict "
                        f"{accelerators:,} (at least {MIN_DISTINCT_COUNTS}, or samples and batch sizes in the logs)")
    prefer_two_part = TWO_PART in found and (
        global_batch is not None or TWO_PART not in backtest or AMDAHL_TIME not in backtest or backtest[TWO_PART][0] <= backtest[AMDAHL_TIME][0])
    first = found[TWO_PART] if prefer_two_part else found.get(AMDAHL_TIME, found.get(TWO_PART))
    assert first is not None
    other = next((prediction for model, prediction in found.items() if model != first.model), None)
    return first, other


def make_plan(selection: Selection, threshold: float = 0.5, deadline_min: float | None = None,
              max_accelerators: int | None = None, accelerators: int | None = None, global_batch: float | None = None) -> Plan:
    """The recommendation for the selected group and, where it can be fitted, its curve with 5-95 % bounds; the
    backtest of the group's predictions; and, with `accelerators`, the predicted time at that count."""
    backtest = backtest_summary(pl.DataFrame(backtest_group(selection.rows, ruleset_name(selection.round), selection.benchmark),
                                             schema=_BACKTEST_ROW) if selection.rows.height else pl.DataFrame(schema=_BACKTEST_ROW))
    plan = _plan(selection, threshold, deadline_min, max_accelerators)
    prediction, other = predict_at(selection, accelerators, global_batch, backtest) if accelerators is not None else (None, None)
    return Plan(plan.selection, plan.recommendation, plan.curve, plan.fit_note, backtest, prediction, other)


_BACKTEST_ROW = {"accelerators": pl.Int64, "model": pl.String, "measured_min": pl.Float64, "predicted_min": pl.Float64,
                 "predicted_low_min": pl.Float64, "predicted_high_min": pl.Float64, "error_pct": pl.Float64, "extrapolated": pl.Boolean}


def _plan(selection: Selection, threshold: float, deadline_min: float | None, max_accelerators: int | None) -> Plan:
    rows, _ = apart_series(selection.rows)  # the recommendation says which series it left out
    n = rows["accelerators"].to_numpy().astype(float)
    t = rows["time_to_train_min"].to_numpy().astype(float)
    distinct = np.unique(n)
    fit: AmdahlBootstrap | None = bootstrap_amdahl(n, t) if len(distinct) >= MIN_DISTINCT_COUNTS else None
    if fit is not None and not (math.isfinite(fit.a) and math.isfinite(fit.b) and fit.a + fit.b > 0):
        fit = None
    recommendation = recommend(selection.rows, selection.accelerator_group, threshold, deadline_min, max_accelerators, fit)
    if fit is None:
        note = (f"{len(distinct)} distinct accelerator count(s) measured: at least {MIN_DISTINCT_COUNTS} are needed for a fit"
                if len(distinct) < MIN_DISTINCT_COUNTS else "the fit did not converge")
        return Plan(selection, recommendation, [], note)
    counts = sorted({*distinct.tolist(), *(distinct.max() * 2.0 ** k for k in range(1, CURVE_DOUBLINGS + 1))})
    if max_accelerators is not None:
        counts = [c for c in counts if c <= max_accelerators]
    curve = []
    for k in counts:
        efficiency, efficiency_low, efficiency_high = fit.efficiency(k)
        time_min, time_low, time_high = fit.time_interval(k)
        curve.append(CurvePoint(int(k), time_min, time_low, time_high, efficiency, efficiency_low, efficiency_high,
                                k * time_min / 60, bool(k in distinct), bool(k > distinct.max())))
    return Plan(selection, recommendation, curve, None)
