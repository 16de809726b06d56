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

from mlperf_scaling.tasks.metrics.fits import MIN_SYSTEMS_FOR_INTERVAL
from mlperf_scaling.tasks.metrics.plan import Plan, PlanError, make_plan, parse_minutes, select
from mlperf_scaling.tasks.metrics.recommend import NoCandidate
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

_SEE_ALL = "--format csv or json gives every column"


def _fail(message: str) -> int:
    print(f"mlperf-scaling: {message}", file=sys.stderr)
    return 2


def _range(point: float, low: float | None, high: float | None, digits: int) -> str:
    if low is None and high is None:
        return f"{point:,.{digits}f}"
    high_text = "unbounded" if high is None else f"{high:,.{digits}f}"
    low_text = "-" if low is None else f"{low:,.{digits}f}"
    return f"{point:,.{digits}f} [{low_text}, {high_text}]"


def _optional(value: float | None, digits: int) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def print_plan(args: argparse.Namespace, console: Console) -> int:
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
        (efficiency,) = read_queries(args.warehouse, "all_efficiency")
        selection = select(efficiency, args.benchmark, args.accelerator, args.round_name)
        plan = make_plan(selection, args.threshold, deadline, args.max_accelerators, args.accelerators, args.global_batch)
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
    "global_batch_size": "global_batch", "submitter": "submitter", "system": "system",
}


def plan_rows(plan: Plan, price: float | None) -> pl.DataFrame:
    """Every configuration the plan speaks of, one row each, `kind` saying which: measured, fit (the curve, with its
    interval), recommended, predicted."""
    measured = plan.selection.rows.select(pl.lit("measured").alias("kind"),
                                          *(pl.col(name).alias(alias) for name, alias in _MEASURED_FIELDS.items()))
    fit = pl.DataFrame([{"kind": "fit", **asdict(point)} for point in plan.curve]) if plan.curve else pl.DataFrame()
    r = plan.recommendation
    recommended = pl.DataFrame([{
        "kind": "recommended", "accelerators": r.accelerators, "time_min": r.time_min, "time_min_low": r.time_min_low,
        "time_min_high": r.time_min_high, "efficiency": r.efficiency, "efficiency_low": r.efficiency_low,
        "efficiency_high": r.efficiency_high, "accelerator_hours": r.accelerator_hours, "basis": r.basis,
    }])
    frames = [measured, fit, recommended]
    for kind, p in (("predicted", plan.prediction), ("predicted_other_model", plan.other_prediction)):
        if p is not None:
            frames.append(pl.DataFrame([{"kind": kind, **asdict(p), "accelerator_hours": p.accelerators * p.time_min / 60}])
                          .rename({"model": "basis"}))
    rows = pl.concat([frame for frame in frames if frame.width], how="diagonal_relaxed")
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


def _predicted(p, backtest: dict[str, tuple[float, int]]) -> str:
    error = backtest.get(p.model)
    batch = f" at a global batch of {p.global_batch:,.0f}" if p.global_batch is not None else ""
    return (f"{p.time_min:,.2f} min [{p.time_min_low:,.2f}, {p.time_min_high:,.2f}]{batch}, by the {p.model} model"
            + (f" (backtest median error {error[0]:.1f} %)" if error else ""))


def plan_document(plan: Plan, price: float | None) -> dict:
    """The whole plan for a program: what was chosen and why, the configurations, the recommendation, the backtest."""
    s = plan.selection
    rows = plan_rows(plan, price).drop("round", "benchmark", "accelerator_group")

    def part(kind: str) -> list[dict]:
        chosen = rows.filter(pl.col("kind") == kind).drop("kind")
        return chosen.select(name for name in chosen.columns if chosen[name].null_count() < chosen.height).to_dicts()

    return {
        "round": s.round, "benchmark": s.benchmark, "workload": s.workload, "accelerator_group": s.accelerator_group,
        "why_round": s.why_round, "other_groups": s.other_groups,
        "measured": part("measured"), "fit": part("fit"), "fit_note": plan.fit_note,
        "recommendation": asdict(plan.recommendation),
        "backtest": {model: {"median_abs_error_pct": error, "counts": counts} for model, (error, counts) in plan.backtest.items()},
        "prediction": None if plan.prediction is None else asdict(plan.prediction),
        "other_prediction": None if plan.other_prediction is None else asdict(plan.other_prediction),
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


def _curve_rows(plan: Plan, price: float | None, few: bool) -> tuple[list[Column], list[list[str]]]:
    columns = [Column("N"), Column("time (min)"), Column("efficiency"), Column("acc.-hours", drop=2),
               *([Column("cost (USD)", drop=3)] if price is not None else []), Column("", text=True, drop=1)]
    cells = [[
        f"{point.accelerators:,}",
        f"{point.time_min:,.2f}" if few else _range(point.time_min, point.time_min_low, point.time_min_high, 2),
        f"{point.efficiency:.2f}" if few else _range(point.efficiency, point.efficiency_low, point.efficiency_high, 2),
        f"{point.accelerator_hours:,.1f}",
        *([f"{point.accelerator_hours * price:,.0f}"] if price is not None else []),
        "extrapolated" if point.extrapolated else ("measured" if point.measured else ""),
    ] for point in plan.curve]
    return columns, cells


def _print(plan: Plan, console: Console, price: float | None) -> None:
    s, r = plan.selection, plan.recommendation
    console.print(f"[bold]{s.workload}[/bold] ({s.benchmark}) on [bold]{s.accelerator_group}[/bold], MLPerf Training {s.round}"
                  + (f" ({s.why_round})" if s.why_round else ""))
    if s.other_groups:
        console.print(f"Other comparable groups in {s.round}: {', '.join(s.other_groups)} (--accelerator)")
    console.print("Efficiency is against the best system at the group's smallest configuration; times are official scores, "
                  "the spread is the fastest and slowest valid runs. Derived, not official MLPerf results.\n")
    print_fitted(console, *_measured_rows(s.rows, price), title="Measured configurations", see_all=_SEE_ALL)
    console.print()

    if plan.curve:
        few = s.rows.height < MIN_SYSTEMS_FOR_INTERVAL  # an interval from a handful of systems would look precise
        title = (f"Amdahl fit on {s.rows.height} systems: too few for an interval" if few
                 else "Amdahl fit, 5-95 % bootstrap interval over systems (1,000 resamples, seeded)")
        print_fitted(console, *_curve_rows(plan, price, few), title=title, see_all=_SEE_ALL)
        if r.knee is not None:
            knee = f"{r.knee:,.0f}" if few else _range(r.knee, r.knee_low, r.knee_high, 0)
            console.print(f"Efficiency falls below {r.threshold:g} from about {knee} {s.accelerator_group}.")
        else:
            console.print(f"In this fit efficiency never falls below {r.threshold:g}.")
    else:
        console.print(f"No fitted curve: {plan.fit_note}.")
    console.print()
    cost = f" About {r.accelerator_hours * price:,.0f} USD per training run." if price is not None else ""
    console.print(f"[bold]Recommendation[/bold] ({r.reason}): {r.sentence}{cost}")
    if plan.backtest:
        said = "; ".join(f"{model} {error:.1f} %" for model, (error, _) in sorted(plan.backtest.items()))
        counts = max(n for _, n in plan.backtest.values())
        console.print(f"Backtest, each of {counts} measured counts left out and predicted from the others: median error {said}.")
    else:
        console.print("Backtest: fewer than four accelerator counts measured, so no count can be left out and predicted.")
    if plan.prediction is not None:
        p = plan.prediction
        best = s.rows.filter(pl.col("accelerators") == p.accelerators)["time_to_train_min"].min() if p.measured else None

        def off(q) -> str:
            return f" ({100 * (q.time_min / best - 1):+.1f} %)" if isinstance(best, float) else ""

        measured = f"; measured too: best {best:,.2f} min{off(p)}" if isinstance(best, float) else "; predicted, not measured"
        console.print(f"[bold]Predicted[/bold] {p.accelerators:,} {s.accelerator_group}: {_predicted(p, plan.backtest)}{measured}.")
        if plan.other_prediction is not None:
            q = plan.other_prediction
            console.print(f"The other model: {_predicted(q, plan.backtest)}" + (f"; against the best measured{off(q)}" if off(q) else "") + ".")
    if pl.Series(s.rows["is_complete"]).not_().any():
        console.print("Some scores count fewer runs than the rules require (scored_incomplete).")
