"""`mlperf-scaling plan`: the planner's answer printed for a person, from the warehouse, read-only.

Every mistake a user can make (a benchmark or accelerator the warehouse does not hold, a bad deadline) is one line
on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict

import polars as pl
from rich.console import Console

from mlperf_scaling.tasks.metrics.calibration import LEVEL, coverage, load_calibration
from mlperf_scaling.tasks.metrics.plan import Plan, PlanError, make_plan, parse_minutes, select
from mlperf_scaling.tasks.metrics.predict import MODELS
from mlperf_scaling.tasks.metrics.recommend import MEASURED, NoCandidate, Step, minutes_text
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

_SEE_ALL = "--format csv or json gives every column"


def _fail(message: str) -> int:
    print(f"mlperf-scaling: {message}", file=sys.stderr)
    return 2


def _optional(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def print_plan(args: argparse.Namespace, console: Console) -> int:
    model_only = [f"--{name.replace('_', '-')}" for name in ("tokens", "active_params", "precision") if getattr(args, name) is not None]
    if args.model_params is not None:
        from mlperf_scaling.model_plan_command import print_model_plan

        return print_model_plan(args, console)
    if args.benchmark is None:
        return _fail("plan: name a BENCHMARK, or a model with --model-params P --tokens T --accelerator A")
    if model_only:
        return _fail(f"{', '.join(model_only)}: for a model's plan, with --model-params")
    try:
        deadline = parse_minutes(args.deadline) if args.deadline else None
    except ValueError as exc:
        return _fail(f"--deadline: {exc}")
    if args.max_accelerators is not None and args.max_accelerators < 1:
        return _fail("--max-accelerators must be at least 1")
    if args.price_per_accelerator_hour is not None and args.price_per_accelerator_hour < 0:
        return _fail("--price-per-accelerator-hour cannot be negative")
    if not 0 < args.threshold < 1:
        return _fail("--threshold must be between 0 and 1")
    if args.accelerators is not None and args.accelerators < 1:
        return _fail("--accelerators must be at least 1")
    if args.global_batch is not None and (args.global_batch <= 0 or args.accelerators is None):
        return _fail("--global-batch: a positive batch, with --accelerators N (the prediction it is for)")
    try:
        efficiency, backtest = read_queries(args.warehouse, "all_efficiency", "all_backtest")
        selection = select(efficiency, args.benchmark, args.accelerator, args.round_name)
        plan = make_plan(selection, args.threshold, deadline, args.max_accelerators, args.accelerators, args.global_batch,
                         coverage(backtest), load_calibration().with_backtest(backtest))
    except (WarehouseMissing, PlanError, NoCandidate) as exc:
        return _fail(str(exc))
    if args.output_format == "table":
        _print(plan, console, args.price_per_accelerator_hour)
    elif args.output_format == "csv":
        sys.stdout.write(plan_rows(plan, args.price_per_accelerator_hour).write_csv())
    else:
        sys.stdout.write(json.dumps(plan_document(plan, args.price_per_accelerator_hour), indent=2, default=_plain) + "\n")
    return 0


_MEASURED_FIELDS = {  # the warehouse's column -> the plan's, for the files
    "accelerators": "accelerators", "time_to_train_min": "time_min", "time_to_train_min_low": "fastest_run_min",
    "time_to_train_min_high": "slowest_run_min", "accelerator_hours": "accelerator_hours", "energy_kj": "energy_kj",
    "efficiency": "efficiency", "throughput_part": "throughput_part", "convergence_part": "convergence_part",
    "parts_note": "parts_note", "global_batch_size": "global_batch", "submitter": "submitter", "system": "system",
}


def _step_row(kind: str, s: Step) -> dict:
    row = {"kind": kind, "accelerators": s.accelerators, "basis": s.basis, "time_min": s.time_min, "time_min_low": s.time_min_low,
           "time_min_high": s.time_min_high, "efficiency": s.efficiency, "efficiency_low": s.efficiency_low,
           "efficiency_high": s.efficiency_high, "accelerator_hours": s.accelerator_hours}
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
    steps = [_step_row("best", s) for s in plan.steps] + [recommended]
    steps += [_step_row(kind, s) for kind, s in (("at_accelerators", plan.prediction), ("other_model", plan.other_prediction)) if s is not None]
    rows = pl.concat([measured, pl.DataFrame(steps, infer_schema_length=None)], how="diagonal_relaxed")
    if price is not None:
        rows = rows.with_columns(cost_usd=pl.col("accelerator_hours") * price)
    return rows.with_columns(pl.lit(plan.selection.round).alias("round"), pl.lit(plan.selection.benchmark).alias("benchmark"),
                             pl.lit(plan.selection.accelerator_group).alias("accelerator_group"))


def _plain(value: object) -> object:
    # numpy's scalars (a fit's bool or float) as the Python values they hold
    item = getattr(value, "item", None)
    if item is None:
        raise TypeError(f"{type(value).__name__} in a plan")
    return item()


def _backtest_document(plan: Plan) -> dict:
    return {model: {"median_abs_error_pct": b.median_error_pct, "counts": b.cases, "interval_held": b.covered, "with_interval": b.with_interval}
            for model, b in plan.backtest.items()}


def plan_document(plan: Plan, price: float | None) -> dict:
    """The whole plan for a program: what was chosen and why, the configurations, the recommendation, the backtest."""
    s = plan.selection
    rows = plan_rows(plan, price).drop("round", "benchmark", "accelerator_group")

    def part(kind: str) -> list[dict]:
        chosen = rows.filter(pl.col("kind") == kind).drop("kind")
        return chosen.select(name for name in chosen.columns if chosen[name].null_count() < chosen.height).to_dicts()

    at = part("at_accelerators")
    other = part("other_model")
    return {
        "round": s.round, "benchmark": s.benchmark, "workload": s.workload, "accelerator_group": s.accelerator_group,
        "why_round": s.why_round, "other_groups": s.other_groups,
        "efficiency_reference": {"accelerators": plan.planner.reference_accelerators, "time_min": plan.planner.reference_time_min,
                                 "system": plan.planner.reference_system},
        "measured": part("measured"), "best_per_count": part("best"), "prediction_note": plan.fit_note,
        "interval_level": LEVEL,
        "recommendation": asdict(plan.recommendation),
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


def _measured_rows(rows: pl.DataFrame, price: float | None) -> tuple[list[Column], list[list[str]]]:
    columns = _MEASURED[:4] + ([Column("cost (USD)", drop=6)] if price is not None else []) + _MEASURED[4:]
    cells = []
    for row in rows.iter_rows(named=True):
        spread = (f"{row['time_to_train_min_low']:,.2f}-{row['time_to_train_min_high']:,.2f}"
                  if row["time_to_train_min_low"] is not None else "")
        energy = None if row["energy_kj"] is None else row["energy_kj"] / 3600
        cells.append([
            f"{row['accelerators']:,}", f"{row['time_to_train_min']:,.2f}", spread, f"{row['accelerator_hours']:,.1f}",
            *([f"{row['accelerator_hours'] * price:,.0f}"] if price is not None else []),
            _optional(energy, 1), f"{row['efficiency']:.2f}", _optional(row["throughput_part"], 2),
            _optional(row["convergence_part"], 2), _optional(row["global_batch_size"], 0), f"{row['submitter']}/{row['system']}",
        ])
    return columns, cells


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


def _step_rows(plan: Plan, price: float | None) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("N"), Column("time (min)"), Column("efficiency"), Column("acc.-hours", drop=2),
               *([Column("cost (USD)", drop=3)] if price is not None else []), Column("evidence", text=True, drop=1)]
    cells = [[
        f"{s.accelerators:,}", _range(s.time_min, s.time_min_low, s.time_min_high, 2), _range(s.efficiency, s.efficiency_low, s.efficiency_high, 2),
        f"{s.accelerator_hours:,.1f}", *([f"{s.accelerator_hours * price:,.0f}"] if price is not None else []), _evidence_cell(s),
    ] for s in plan.steps]
    return columns, cells


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


def _at_text(plan: Plan) -> list[str]:
    s, group, p = plan.prediction, plan.selection.accelerator_group, plan.planner
    assert s is not None
    lines = []
    if s.basis == MEASURED:
        e = s.evidence
        assert e is not None
        lines.append(f"[bold]At {s.accelerators:,} {group}[/bold]: measured {minutes_text(s.time_min)}, "
                     + ("1 system" if e.n_systems == 1 else f"the best of {e.n_systems} systems") + f" ({e.best_system}), efficiency {s.efficiency:.2f}.")
        return lines
    q = s.prediction
    assert q is not None
    interval = f" [{q.time_min_low:,.2f}, {q.time_min_high:,.2f}]" if q.time_min_low is not None and q.time_min_high is not None else ""
    batch = f" at a global batch of {q.global_batch:,.0f}" if q.global_batch is not None and q.model != "amdahl" else ""
    backtest = plan.backtest.get(q.model)
    error = f"; backtest median error {backtest.median_error_pct:.1f} %" if backtest is not None else ""
    efficiency = _range(s.efficiency, s.efficiency_low, s.efficiency_high, 2)
    lines.append(f"[bold]At {s.accelerators:,} {group}[/bold] (not measured): predicted {q.time_min:,.2f} min{interval}{batch} "
                 f"({LEVEL * 100:.0f} % interval, {q.model} model{error}), efficiency {efficiency}.")
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
    console.print(f"[bold]{s.workload}[/bold] ({s.benchmark}) on [bold]{s.accelerator_group}[/bold], MLPerf Training {s.round}"
                  + (f" ({s.why_round})" if s.why_round else ""))
    if s.other_groups:
        console.print(f"Other comparable groups in {s.round}: {', '.join(s.other_groups)} (--accelerator)")
    console.print(f"Times are official scores; runs min-max is the fastest and slowest valid run. Efficiency, in every table here: the best "
                  f"time at the group's smallest count ({p.reference_time_min:,.2f} min, {p.reference_system}, {p.reference_accelerators:,} "
                  f"{s.accelerator_group}) x {p.reference_accelerators:,}, over the time x N. Derived, not official MLPerf results.\n")
    print_fitted(console, *_measured_rows(s.rows, price), title="Measured configurations", see_all=_SEE_ALL)
    console.print()
    title = (f"The best time per count: measured, or predicted by the {p.model.model} model with its {LEVEL * 100:.0f} % interval"
             if p.model is not None else "The best time per count, as measured")
    print_fitted(console, *_step_rows(plan, price), title=title, see_all=_SEE_ALL)
    if plan.fit_note:
        console.print(f"Nothing predicted: {plan.fit_note}.")
    elif knee := _knee_text(plan):
        console.print(knee)
    console.print()
    cost = f" About {r.accelerator_hours * price:,.0f} USD per training run." if price is not None else ""
    console.print(f"[bold]Recommendation[/bold] ({r.reason}): {r.sentence}{cost}")
    console.print(_backtest_text(plan))
    if coverage_text := _coverage_text(plan):
        console.print(coverage_text)
    if plan.prediction is not None:
        for line in _at_text(plan):
            console.print(line)
    if pl.Series(s.rows["is_complete"]).not_().any():
        console.print("Some scores count fewer runs than the rules require (scored_incomplete).")
