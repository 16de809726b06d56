"""`mlperf-scaling plan`: the planner's answer printed for a person, from the warehouse, read-only.

Every mistake a user can make (a benchmark or accelerator the warehouse does not hold, a bad deadline) is one line
on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import asdict

import polars as pl
from rich.console import Console

from mlperf_scaling.rounds import HPC, round_title, suite_of
from mlperf_scaling.tasks.planning.calibration import LEVEL, coverage, load_calibration
from mlperf_scaling.tasks.planning.group_planner import MEASURED, NoCandidate, Step, above_one_because
from mlperf_scaling.tasks.planning.plan import Plan, PlanError, make_plan, select
from mlperf_scaling.tasks.planning.predict import MODELS
from mlperf_scaling.tasks.planning.recommend import minutes_text
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

_SEE_ALL = "--format csv or json gives every column"


def _fail(message: str) -> int:
    print(f"mlperf-scaling: {message}", file=sys.stderr)
    return 2


def _optional(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def print_plan(args: argparse.Namespace, console: Console) -> int:
    model_only = [f"--{name.replace('_', '-')}" for name in ("tokens", "active_params", "precision", "global_batch_tokens") if getattr(args, name) is not None]
    if args.model_params is not None:
        from mlperf_scaling.model_plan_command import print_model_plan

        return print_model_plan(args, console)
    if args.benchmark is None:
        return _fail("plan: name a BENCHMARK, or a model with --model-params P --tokens T --accelerator A")
    if model_only:
        return _fail(f"{', '.join(model_only)}: for a model's plan, with --model-params")
    deadline = args.deadline  # in minutes: the option's values are checked as they are parsed (mlperf_scaling.arguments)
    if args.global_batch is not None and args.accelerators is None:
        return _fail("--global-batch: with --accelerators N (the prediction it is for)")
    try:
        efficiency, backtest, presence, weak = read_queries(args.warehouse, "all_efficiency", "all_backtest", "workload_presence",
                                                            "all_weak_scaling")
        selection = select(efficiency, args.benchmark, args.accelerator, args.round_name, among=args.round_names, presence=presence)
        plan = make_plan(selection, args.threshold, deadline, args.max_accelerators, args.accelerators, args.global_batch,
                         coverage(backtest), load_calibration().with_backtest(backtest))
    except (WarehouseMissing, PlanError, NoCandidate) as exc:
        return _fail(str(exc))
    weak = weak.filter((pl.col("benchmark_canonical") == plan.selection.canonical)
                       & (pl.col("accelerator_group") == plan.selection.accelerator_group) & ~pl.col("is_carried_over"))
    if args.output_format == "table":
        _print(plan, console, args.price_per_accelerator_hour)
        for row in weak.iter_rows(named=True):  # MLPerf HPC: the same model trained many times at once
            console.print(f"[bold]Weak scaling[/bold] (many models at once, MLPerf HPC): {row['sentence']}", markup=True, highlight=False)
    elif args.output_format == "csv":
        sys.stdout.write(tidy_frame(plan_rows(plan, args.price_per_accelerator_hour)).write_csv())
    else:
        sys.stdout.write(json.dumps(tidy(plan_document(plan, args.price_per_accelerator_hour)), indent=2, default=_plain) + "\n")
    return 0


_MEASURED_FIELDS = {  # the warehouse's column -> the plan's, for the files
    "accelerators": "accelerators", "time_to_train_min": "time_min", "time_to_train_min_low": "fastest_run_min",
    "time_to_train_min_high": "slowest_run_min", "accelerator_hours": "accelerator_hours", "energy_kj": "energy_kj",
    "efficiency": "efficiency", "throughput_part": "throughput_part", "convergence_part": "convergence_part",
    "parts_note": "parts_note", "global_batch_size": "global_batch", "submitter": "submitter", "system": "system",
    "efficiency_note": "efficiency_note",
}


def _usd(value: float) -> str:
    # cents where a run costs little, whole dollars where it costs more
    return f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"


def _best_at(plan: Plan, accelerators: int) -> dict | None:
    """The best system's efficiency row at a measured count (the one the evidence quotes), None where not measured."""
    at = plan.selection.rows.filter(pl.col("accelerators") == accelerators).sort("time_to_train_min", "submitter", "system")
    return at.row(0, named=True) if at.height else None


def _energy_kwh(plan: Plan, s: Step) -> float | None:
    """The energy of a training run at a step, where its best system's power was measured."""
    best = _best_at(plan, s.accelerators) if s.basis == MEASURED else None
    return None if best is None or best["energy_kj"] is None else best["energy_kj"] / 3600


def above_one(plan: Plan, s: Step) -> str | None:
    """Why a step's efficiency (or its interval's upper end) is above 1, in words; None when it is not."""
    if s.evidence is not None:
        return s.evidence.above_one_because
    high = s.efficiency_high if s.efficiency_high is not None else s.efficiency
    if s.efficiency <= 1 and high <= 1:
        return None
    above = [c for c in plan.planner.counts if plan.planner.evidence[c].efficiency > 1]
    measured = (f"the measured counts it follows are above 1 themselves ({', '.join(f'{c:,}' for c in above)})" if above
                else "no measured count of this group is above 1")
    if s.efficiency <= 1:
        return f"predicted: only the interval's fast end, which the calibration allows; {measured}"
    return f"predicted by the model fitted to the measured counts, not measured; {measured}"


def _step_row(kind: str, s: Step, plan: Plan) -> dict:
    row = {"kind": kind, "accelerators": s.accelerators, "basis": s.basis, "time_min": s.time_min, "time_min_low": s.time_min_low,
           "time_min_high": s.time_min_high, "efficiency": s.efficiency, "efficiency_low": s.efficiency_low,
           "efficiency_high": s.efficiency_high, "efficiency_note": above_one(plan, s), "accelerator_hours": s.accelerator_hours,
           "accelerator_hours_low": None if s.time_min_low is None else s.accelerators * s.time_min_low / 60,
           "accelerator_hours_high": None if s.time_min_high is None else s.accelerators * s.time_min_high / 60,
           "energy_kj": None if (kwh := _energy_kwh(plan, s)) is None else kwh * 3600}
    if s.evidence is not None:
        row.update({"best_system": s.evidence.best_system, "n_systems_at": s.evidence.n_systems,
                    "slowest_system_min": s.evidence.slowest_system_min, "fastest_run_min": s.evidence.fastest_run_min,
                    "slowest_run_min": s.evidence.slowest_run_min})
    if s.prediction is not None:
        row.update({"model": s.prediction.model, "beyond_ratio": s.prediction.beyond_ratio, "global_batch": s.prediction.global_batch})
    return row


def plan_rows(plan: Plan, price: float | None) -> pl.DataFrame:
    """Every configuration the plan speaks of, one row each, `kind` saying which: measured (a system), best (the best
    time per count, measured or predicted), recommended, at_accelerators (the count asked for), other_model."""
    measured = plan.selection.rows.select(pl.lit("measured").alias("kind"), pl.lit(MEASURED).alias("basis"),
                                          *(pl.col(name).alias(alias) for name, alias in _MEASURED_FIELDS.items()))
    r = plan.recommendation
    recommended = {"kind": "recommended", "accelerators": r.accelerators, "basis": r.basis, "time_min": r.time_min,
                   "time_min_low": r.time_min_low, "time_min_high": r.time_min_high, "efficiency": r.efficiency,
                   "efficiency_low": r.efficiency_low, "efficiency_high": r.efficiency_high, "accelerator_hours": r.accelerator_hours,
                   "best_system": r.best_system, "warning": r.warning}
    if r.deadline_min is not None:  # which count met the deadline, on what, and the runs slower than it
        recommended.update({"deadline_min": r.deadline_min, "meets_deadline": r.meets_deadline, "deadline_basis": r.deadline_basis,
                            "fastest_run_min": r.fastest_run_min, "slowest_run_min": r.slowest_run_min,
                            "slowest_run_misses_deadline": r.slowest_run_misses_deadline, "slow_runs": r.slow_runs})
    chosen = plan.planner.step(r.accelerators) if r.basis == MEASURED else None
    if chosen is not None:
        recommended.update({k: v for k, v in _step_row("recommended", chosen, plan).items() if k in ("efficiency_note", "energy_kj")})
    else:
        recommended.update({"accelerator_hours_low": None if r.time_min_low is None else r.accelerators * r.time_min_low / 60,
                            "accelerator_hours_high": None if r.time_min_high is None else r.accelerators * r.time_min_high / 60})
    steps = [_step_row("best", s, plan) for s in plan.steps] + [recommended]
    steps += [_step_row(kind, s, plan) for kind, s in (("at_accelerators", plan.prediction), ("other_model", plan.other_prediction))
              if s is not None]
    rows = pl.concat([measured, pl.DataFrame(steps, infer_schema_length=None)], how="diagonal_relaxed")
    rows = rows.with_columns((pl.col("energy_kj") / 3600).alias("energy_kwh"))
    if price is not None:
        rows = rows.with_columns(cost_usd=pl.col("accelerator_hours") * price, cost_usd_low=pl.col("accelerator_hours_low") * price,
                                 cost_usd_high=pl.col("accelerator_hours_high") * price)
    return rows.with_columns(pl.lit(plan.selection.round).alias("round"), pl.lit(plan.selection.benchmark).alias("benchmark"),
                             pl.lit(plan.selection.canonical).alias("benchmark_canonical"),
                             pl.lit(plan.selection.accelerator_group).alias("accelerator_group"))


SIGNIFICANT = 6  # digits a file keeps of a derived number: more only repeats the arithmetic's noise
_WHOLE = ("global_batch", "global_batch_size")  # counts of samples: whole numbers


def tidy(value: object, key: str = "") -> object:
    """A plan's document with its numbers as a person would write them: six significant digits, batches whole."""
    if isinstance(value, dict):
        return {k: tidy(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [tidy(v, key) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy's scalars
        value = value.item()
    if isinstance(value, float) and math.isfinite(value):
        return round(value) if key in _WHOLE else float(f"{value:.{SIGNIFICANT}g}")
    return value


def tidy_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """The same for a table: floats to six significant digits, batches whole."""
    return frame.with_columns(pl.col(pl.Float64).round_sig_figs(SIGNIFICANT)).with_columns(
        *(pl.col(name).round(0).cast(pl.Int64) for name in _WHOLE if name in frame.columns))


def _plain(value: object) -> object:
    # numpy's scalars (a fit's bool or float) as the Python values they hold
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} in a plan")
    return item()


def _backtest_document(plan: Plan) -> dict:
    return {model: {"median_abs_error_pct": b.median_error_pct, "counts": b.cases, "interval_held": b.covered, "with_interval": b.with_interval}
            for model, b in plan.backtest.items()}


# what a recommendation's row adds to the Recommendation itself: the answer's cost, energy and why above 1
_ANSWERED = ("efficiency_note", "accelerator_hours_low", "accelerator_hours_high", "energy_kwh", "cost_usd", "cost_usd_low", "cost_usd_high")


def plan_document(plan: Plan, price: float | None) -> dict:
    """The whole plan for a program: what was chosen and why, the configurations, the recommendation, the backtest."""
    s = plan.selection
    rows = plan_rows(plan, price).drop("round", "benchmark", "benchmark_canonical", "accelerator_group")

    def part(kind: str) -> list[dict]:
        chosen = rows.filter(pl.col("kind") == kind).drop("kind")
        return chosen.select(name for name in chosen.columns if chosen[name].null_count() < chosen.height).to_dicts()

    at = part("at_accelerators")
    other = part("other_model")
    return {
        "round": s.round, "benchmark": s.benchmark, "benchmark_canonical": s.canonical, "workload": s.workload, "label": s.label,
        "accelerator_group": s.accelerator_group,
        "why_round": s.why_round, "why_group": s.why_group, "other_groups": s.other_groups,
        "efficiency_reference": {"accelerators": plan.planner.reference_accelerators, "time_min": plan.planner.reference_time_min,
                                 "system": plan.planner.reference_system},
        "measured": part("measured"), "best_per_count": part("best"), "prediction_note": plan.fit_note,
        "interval_level": LEVEL,
        "recommendation": {**asdict(plan.recommendation), **{key: value for key, value in part("recommended")[0].items() if key in _ANSWERED}},
        "backtest": _backtest_document(plan),
        "coverage_all_backtests": {model: {"interval_held": held, "cases": cases} for model, (held, cases) in plan.coverage.items()},
        "at_accelerators": at[0] if at else None,
        "other_model": other[0] if other else None,
        "derived": "Derived, not official MLPerf results.",
    }


# what a measured configuration shows, and in which order its columns go when the terminal is narrow
_MEASURED = [Column("N"), Column("time (min)"), Column("runs min-max", drop=2), Column("acc.-hours", drop=5),
             Column("energy (kWh)", drop=3), Column("efficiency"), Column("throughput part", drop=1),
             Column("convergence part", drop=1), Column("global batch", drop=4), Column("system", text=True)]


ABOVE_ONE = "*"  # marks an efficiency above 1 in a table; the reason is printed under it


def _measured_rows(rows: pl.DataFrame, price: float | None) -> tuple[list[Column], list[list[str]], list[str]]:
    """The measured table's columns and cells, and the reason of each efficiency above 1 in it."""
    columns = _MEASURED[:4] + ([Column("cost (USD)", drop=6)] if price is not None else []) + _MEASURED[4:]
    cells, notes = [], []
    for row in rows.iter_rows(named=True):
        spread = (f"{row['time_to_train_min_low']:,.2f}-{row['time_to_train_min_high']:,.2f}"
                  if row["time_to_train_min_low"] is not None else "")
        energy = None if row["energy_kj"] is None else row["energy_kj"] / 3600
        system = f"{row['submitter']}/{row['system']}"
        why = above_one_because(row["efficiency_note"])
        if why:
            notes.append(f"{row['accelerators']:,} ({system}): {why}")
        cells.append([
            f"{row['accelerators']:,}", f"{row['time_to_train_min']:,.2f}", spread, f"{row['accelerator_hours']:,.1f}",
            *([_usd(row["accelerator_hours"] * price)] if price is not None else []),
            _optional(energy, 1), f"{row['efficiency']:.2f}" + (ABOVE_ONE if why else ""), _optional(row["throughput_part"], 2),
            _optional(row["convergence_part"], 2), _optional(row["global_batch_size"], 0), system,
        ])
    return columns, cells, notes


def _range(point: float, low: float | None, high: float | None, digits: int) -> str:
    if low is None or high is None:
        return f"{point:,.{digits}f}"
    return f"{point:,.{digits}f} [{low:,.{digits}f}, {high:,.{digits}f}]"


def _evidence_cell(s: Step) -> str:
    if s.evidence is not None:
        e = s.evidence
        return "measured: 1 system" if e.n_systems == 1 else f"measured: best of {e.n_systems} systems (up to {e.slowest_system_min:,.2f} min)"
    assert s.prediction is not None
    ratio = s.prediction.beyond_ratio
    if ratio <= 1:
        return "predicted, between measured counts"
    return f"predicted, {ratio:,.1f}x beyond the counts measured" + (": an extrapolation" if ratio > 2 else "")


def _step_rows(plan: Plan, price: float | None) -> tuple[list[Column], list[list[str]], list[str]]:
    """The table of the best time per count, and the reason of each efficiency above 1 in it."""
    energies = [_energy_kwh(plan, s) for s in plan.steps]
    columns = [Column("N"), Column("time (min)"), Column("efficiency"), Column("acc.-hours", drop=2),
               *([Column("cost (USD)", drop=3)] if price is not None else []),
               *([Column("energy (kWh)", drop=4)] if any(e is not None for e in energies) else []), Column("evidence", text=True, drop=1)]
    cells, notes = [], []
    for s, energy in zip(plan.steps, energies, strict=True):
        why = above_one(plan, s)
        if why:
            notes.append(f"{s.accelerators:,}: {why}")
        hours = _hours(s)
        cells.append([
            f"{s.accelerators:,}", _range(s.time_min, s.time_min_low, s.time_min_high, 2),
            _range(s.efficiency, s.efficiency_low, s.efficiency_high, 2) + (ABOVE_ONE if why else ""), _range(*hours, 1),
            *([_usd(s.accelerator_hours * price)] if price is not None else []),
            *([_optional(energy, 1)] if any(e is not None for e in energies) else []), _evidence_cell(s),
        ])
    return columns, cells, notes


def _hours(s: Step) -> tuple[float, float | None, float | None]:
    """A step's accelerator-hours, with the interval's where predicted."""
    return s.accelerator_hours, *(None if t is None else s.accelerators * t / 60 for t in (s.time_min_low, s.time_min_high))  # type: ignore[return-value]


def _print_table(console: Console, columns: list[Column], cells: list[list[str]], notes: list[str], title: str) -> None:
    print_fitted(console, columns, cells, title=title, see_all=_SEE_ALL)
    if notes:
        console.print(f"{ABOVE_ONE} Efficiency above 1, why: " + "; ".join(notes) + ".")


def _knee_text(plan: Plan) -> str:
    r, p = plan.recommendation, plan.planner
    group = plan.selection.accelerator_group
    above = [c for c in p.counts if p.evidence[c].efficiency >= r.threshold]
    below = [c for c in p.counts if p.evidence[c].efficiency < r.threshold]
    measured = ""
    if above and below and min(below) > max(above):
        measured = (f" (measured: {p.evidence[max(above)].efficiency:.2f} at {max(above):,}, "
                    f"{p.evidence[min(below)].efficiency:.2f} at {min(below):,})")
    if r.knee is None:
        return (f"Efficiency stays at or above {r.threshold:g} up to {p.counts[-1] * 16:,} {group} as far as this group's model says."
                if p.model is not None else "")
    high = "beyond reach" if r.knee_high is None else f"{r.knee_high:,.0f}"
    low = "-" if r.knee_low is None else f"{r.knee_low:,.0f}"
    return f"Efficiency falls below {r.threshold:g} from about {r.knee:,.0f} [{low}, {high}] {group}{measured}."


def _backtest_text(plan: Plan) -> str:
    if not plan.backtest:
        return "Backtest: fewer than four accelerator counts measured, so no count can be left out and predicted."
    said = []
    for model in MODELS:
        b = plan.backtest.get(model)
        if b is None:
            continue
        held = f", the {LEVEL * 100:.0f} % interval held in {b.covered} of {b.with_interval}" if b.with_interval else ""
        said.append(f"{model} model {b.median_error_pct:.1f} %{held}")
    counts = max(b.cases for b in plan.backtest.values())
    return f"Backtest of this group, each of its {counts} measured counts left out and predicted from the others: median error {'; '.join(said)}."


def _coverage_text(plan: Plan) -> str:
    said = [f"{model} model {held:,} of {cases:,} ({100 * held / cases:.0f} %)" for model, (held, cases) in sorted(plan.coverage.items()) if cases]
    if not said:
        return ""
    return (f"Over every backtest in the warehouse, the stated {LEVEL * 100:.0f} % interval held the measured best time in: {'; '.join(said)} "
            "(each round's intervals calibrated on the other rounds).")


def run_cost(plan: Plan, s: Step, price: float | None) -> str:
    """What a training run at a step takes: accelerator-hours (with the interval where predicted), the cost at the
    price asked for, the energy where its best system's power was measured."""
    said = [f"{_range(*_hours(s), 1)} accelerator-hours"]
    if price is not None:
        low, high = (None if t is None else s.accelerators * t / 60 * price for t in (s.time_min_low, s.time_min_high))
        cost = _usd(s.accelerator_hours * price) + (f" [{_usd(low)}, {_usd(high)}]" if low is not None and high is not None else "")
        said.append(f"{cost} USD at {price:,g} USD per accelerator-hour")
    energy = _energy_kwh(plan, s)
    said.append(f"{energy:,.1f} kWh measured" if energy is not None else "energy not measured at this count")
    return ", ".join(said)


def _at_text(plan: Plan, price: float | None) -> list[str]:
    s, group, p = plan.prediction, plan.selection.accelerator_group, plan.planner
    assert s is not None
    lines = []
    why = above_one(plan, s)
    above = f" (above 1: {why})" if why else ""
    if s.basis == MEASURED:
        e = s.evidence
        assert e is not None
        lines.append(f"[bold]At {s.accelerators:,} {group}[/bold]: measured {minutes_text(s.time_min)}, "
                     + ("1 system" if e.n_systems == 1 else f"the best of {e.n_systems} systems")
                     + f" ({e.best_system}), efficiency {s.efficiency:.2f}{above}; a run takes {run_cost(plan, s, price)}.")
        return lines
    q = s.prediction
    assert q is not None
    interval = f" [{q.time_min_low:,.2f}, {q.time_min_high:,.2f}]" if q.time_min_low is not None and q.time_min_high is not None else ""
    batch = f" at a global batch of {q.global_batch:,.0f}" if q.global_batch is not None and q.model != "amdahl" else ""
    backtest = plan.backtest.get(q.model)
    error = f"; backtest median error {backtest.median_error_pct:.1f} %" if backtest is not None else ""
    efficiency = _range(s.efficiency, s.efficiency_low, s.efficiency_high, 2)
    lines.append(f"[bold]At {s.accelerators:,} {group}[/bold] (not measured): predicted {q.time_min:,.2f} min{interval}{batch} "
                 f"({LEVEL * 100:.0f} % interval, {q.model} model{error}), efficiency {efficiency}{above}; a run takes "
                 f"{run_cost(plan, s, price)}.")
    if plan.other_prediction is not None and plan.other_prediction.prediction is not None:
        o = plan.other_prediction.prediction
        o_interval = f" [{o.time_min_low:,.2f}, {o.time_min_high:,.2f}]" if o.time_min_low is not None and o.time_min_high is not None else ""
        lines.append(f"The {o.model} model: {o.time_min:,.2f} min{o_interval} at a global batch of {o.global_batch:,.0f}.")
    warning = p.warning([s])
    if warning:
        lines.append(f"[bold]Warning[/bold]: {warning}.")
    return lines


def _print(plan: Plan, console: Console, price: float | None) -> None:
    s, r, p = plan.selection, plan.recommendation, plan.planner
    strong = " strong scaling (one model to its target)" if suite_of(s.round) == HPC else ""
    console.print(f"[bold]{s.label}[/bold], {s.workload.split(' (')[0]}, on [bold]{s.accelerator_group}[/bold], {round_title(s.round)}{strong}"
                  + (f" ({s.why_round})" if s.why_round else ""))
    if s.why_group:
        console.print(f"Why {s.accelerator_group}: {s.why_group}.", markup=False)
    if "scale_unit" in s.rows.columns and (s.rows["scale_unit"] == "processors").any():  # MLPerf HPC's CPU-only machines
        console.print(f"{s.accelerator_group} is a CPU, not an accelerator: N counts its processors (host processors x nodes, as the "
                      "systems JSON states them), and accelerator-hours here are processor-hours.")
    if s.other_groups:
        console.print(f"Other comparable groups in {s.round}: {', '.join(s.other_groups)} (--accelerator)")
    console.print(f"Times are official scores; runs min-max is the fastest and slowest valid run. Efficiency, in every table here: the best "
                  f"time at the group's smallest count ({p.reference_time_min:,.2f} min, {p.reference_system}, {p.reference_accelerators:,} "
                  f"{s.accelerator_group}) x {p.reference_accelerators:,}, over the time x N. Derived, not official MLPerf results.\n")
    _print_table(console, *_measured_rows(s.rows, price), title="Measured configurations")
    console.print()
    title = (f"The best time per count: measured, or predicted by the {p.model.model} model with its {LEVEL * 100:.0f} % interval"
             if p.model is not None else "The best time per count, as measured")
    _print_table(console, *_step_rows(plan, price), title=title)
    if plan.fit_note:
        console.print(f"Nothing predicted: {plan.fit_note}.")
    elif knee := _knee_text(plan):
        console.print(knee)
    console.print()
    chosen = plan.planner.step(r.accelerators) if r.basis == MEASURED else None
    answer = chosen if chosen is not None else next((step for step in plan.steps if step.accelerators == r.accelerators), None)
    cost = f" A run at {r.accelerators:,} takes {run_cost(plan, answer, price)}." if answer is not None else ""
    console.print(f"[bold]Recommendation[/bold] ({r.reason}): {r.sentence}{cost}")
    console.print(_backtest_text(plan))
    if coverage_text := _coverage_text(plan):
        console.print(coverage_text)
    if plan.prediction is not None:
        for line in _at_text(plan, price):
            console.print(line)
    if pl.Series(s.rows["is_complete"]).not_().any():
        console.print("Some scores count fewer runs than the rules require (scored_incomplete).")
