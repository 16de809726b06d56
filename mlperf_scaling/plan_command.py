"""`mlperf-scaling plan`: the planner's answer printed for a person, from the warehouse, read-only.

Every mistake a user can make (a benchmark or accelerator the warehouse does not hold, a bad deadline) is one line
on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import sys

import polars as pl
from rich.console import Console
from rich.table import Table

from mlperf_scaling.tasks.metrics.fits import MIN_SYSTEMS_FOR_INTERVAL
from mlperf_scaling.tasks.metrics.plan import Plan, PlanError, make_plan, parse_minutes, select
from mlperf_scaling.tasks.metrics.recommend import NoCandidate
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries


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
    _print(plan, console, args.price_per_accelerator_hour)
    return 0


def _print(plan: Plan, console: Console, price: float | None) -> None:
    s, r = plan.selection, plan.recommendation
    console.print(f"[bold]{s.workload}[/bold] ({s.benchmark}) on [bold]{s.accelerator_group}[/bold], MLPerf Training {s.round}"
                  + (f" ({s.why_round})" if s.why_round else ""))
    if s.other_groups:
        console.print(f"Other comparable groups in {s.round}: {', '.join(s.other_groups)} (--accelerator)")
    console.print("Efficiency is against the best system at the group's smallest configuration; times are official scores, "
                  "the spread is the fastest and slowest valid runs. Derived, not official MLPerf results.\n")

    measured = Table(title="Measured configurations", title_justify="left", box=None, header_style="bold")
    for column in ("N", "time (min)", "runs min-max", "acc.-hours", *(["cost (USD)"] if price is not None else []),
                   "energy (kWh)", "efficiency", "throughput part", "convergence part", "global batch", "system"):
        measured.add_column(column, justify="left" if column == "system" else "right", no_wrap=column != "system")
    for row in s.rows.iter_rows(named=True):
        spread = (f"{row['time_to_train_min_low']:,.2f}-{row['time_to_train_min_high']:,.2f}"
                  if row["time_to_train_min_low"] is not None else "")
        energy = None if row["energy_kj"] is None else row["energy_kj"] / 3600
        measured.add_row(
            f"{row['accelerators']:,}", f"{row['time_to_train_min']:,.2f}", spread, f"{row['accelerator_hours']:,.1f}",
            *([f"{row['accelerator_hours'] * price:,.0f}"] if price is not None else []),
            _optional(energy, 1), f"{row['efficiency_group']:.2f}", _optional(row["throughput_part"], 2),
            _optional(row["convergence_part"], 2), _optional(row["global_batch_size"], 0), f"{row['submitter']}/{row['system']}",
        )
    console.print(measured)
    console.print()

    if plan.curve:
        few = s.rows.height < MIN_SYSTEMS_FOR_INTERVAL  # an interval from a handful of systems would look precise
        title = (f"Amdahl fit on {s.rows.height} systems: too few for an interval" if few
                 else "Amdahl fit, 5-95 % bootstrap interval over systems (1,000 resamples, seeded)")
        curve = Table(title=title, title_justify="left", box=None, header_style="bold")
        for column in ("N", "time (min)", "efficiency", "acc.-hours", *(["cost (USD)"] if price is not None else []), ""):
            curve.add_column(column, justify="right" if column else "left", no_wrap=True)
        for point in plan.curve:
            curve.add_row(
                f"{point.accelerators:,}",
                f"{point.time_min:,.2f}" if few else _range(point.time_min, point.time_min_low, point.time_min_high, 2),
                f"{point.efficiency:.2f}" if few else _range(point.efficiency, point.efficiency_low, point.efficiency_high, 2),
                f"{point.accelerator_hours:,.1f}",
                *([f"{point.accelerator_hours * price:,.0f}"] if price is not None else []),
                "extrapolated" if point.extrapolated else ("measured" if point.measured else ""),
            )
        console.print(curve)
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
        error = plan.backtest.get(p.model)
        batch = f" at a global batch of {p.global_batch:,.0f}" if p.global_batch is not None else ""
        console.print(
            f"[bold]Predicted[/bold] {p.accelerators:,} {s.accelerator_group}: {p.time_min:,.2f} min [{p.time_min_low:,.2f}, "
            f"{p.time_min_high:,.2f}]{batch}, by the {p.model} model"
            + (f" (backtest median error {error[0]:.1f} %)" if error else "")
            + ("; measured too, see above" if p.measured else "; predicted, not measured") + "."
        )
    if pl.Series(s.rows["is_complete"]).not_().any():
        console.print("Some scores count fewer runs than the rules require (scored_incomplete).")
