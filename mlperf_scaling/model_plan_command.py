"""`mlperf-scaling plan --model-params P --tokens T --accelerator A`: the plan for a language model that is not a
benchmark, printed for a person or, with --format json|csv, every field for a program. Read-only.

A request outside the measurements is answered with what is missing, not with a number; a mistake in the request is
one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict

import polars as pl
from rich.console import Console

from mlperf_scaling.tasks.metrics.model_plan import Answer, ModelPlan, make_model_plan, resolve_group
from mlperf_scaling.tasks.metrics.plan import PlanError
from mlperf_scaling.tasks.metrics.transfer import LEVEL, Request, language_model_evidence, leaned_on_text
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

# what the answer is the time of, and what it is not: said beside every answer
SCOPE = ("The time is the training's at the pace of MLPerf submissions (tuned systems, evaluations included, initialisation, "
         "checkpoints and failures not); it assumes the global batch keeps every accelerator as busy as theirs were.")
TARGETS = {"median_abs_error_pct": 20.0, "coverage_low": 0.80, "coverage_high": 0.95}


def _fail(message: str) -> int:
    print(f"mlperf-scaling: {message}", file=sys.stderr)
    return 2


def _request_problem(args: argparse.Namespace) -> str | None:
    if args.benchmark is not None:
        return "plan: a BENCHMARK or --model-params, not both"
    if args.tokens is None or args.accelerator is None:
        return "plan --model-params: give --tokens T and --accelerator A too (e.g. --tokens 2e12 --accelerator H100-SXM)"
    if args.active_params is not None and args.active_params > args.model_params:
        return "--active-params: at most --model-params (the parameters each token uses, of all the model's)"
    if args.round_names is not None or args.round_name != "best":
        return "--round and --rounds are for a benchmark's plan; a model's plan leans on every round that measured the accelerator"
    if args.global_batch is not None:
        return "--global-batch is for a benchmark's plan; a model's plan assumes the batch keeps the accelerators as busy as measured"
    return None


def print_model_plan(args: argparse.Namespace, console: Console) -> int:
    if (problem := _request_problem(args)) is not None:
        return _fail(problem)
    deadline = args.deadline  # in minutes, checked as the options were parsed
    try:
        context, backtest = read_queries(args.warehouse, "all_context", "all_transfer_backtest")
        evidence = language_model_evidence(context)
        request = Request(args.active_params or args.model_params, args.model_params, args.seq_len,
                          resolve_group(evidence, args.accelerator), args.precision, args.accelerators)
        plan = make_model_plan(evidence, backtest, request, args.tokens, deadline, args.price_per_accelerator_hour, args.max_accelerators)
    except PlanError as exc:
        return _fail(str(exc))
    except WarehouseMissing as exc:
        return _fail(str(exc))
    if args.output_format == "json":
        sys.stdout.write(json.dumps(model_plan_document(plan), indent=2) + "\n")
    elif args.output_format == "csv":
        sys.stdout.write(model_plan_rows(plan).write_csv())
    else:
        _print(plan, console)
    return 0


def _backtest_document(plan: ModelPlan) -> dict:
    f = plan.figures
    return {
        "what": "each language-model benchmark left out, its scores predicted from the others on the same accelerator "
                "(table transfer_backtest)",
        "cases": f.cases, "refused": f.refused, "median_abs_error_pct": f.median_abs_error_pct, "interval_held": f.covered,
        "with_interval": f.with_interval, "coverage": f.coverage, "targets": TARGETS,
        "per_benchmark": {b: {"cases": n, "median_abs_error_pct": e, "interval_held": held, "with_interval": w}
                          for b, (n, e, held, w) in f.per_benchmark.items()},
    }


def model_plan_document(plan: ModelPlan) -> dict:
    """Every field of the plan, for a program."""
    r, t = plan.request, plan.transfer
    return {
        "request": {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
                    "accelerator_group": r.accelerator_group, "precision": r.precision, "accelerators": r.accelerators,
                    "deadline_min": plan.deadline_min},
        "training_flops": plan.flops, "attention_share": plan.attention_share, "precision": t.precision, "precision_assumed": t.precision_assumed,
        "peak_tflops": t.peak_tflops, "mfu_with_attention": {"predicted": t.mfu_with_attention, "low": plan.mfu_low, "high": plan.mfu_high, "level": LEVEL},
        "leaned_on": [asdict(c) for c in t.cells],
        "answer": asdict(plan.chosen) if plan.chosen is not None else None, "why": plan.why_chosen,
        "answers": [asdict(a) for a in plan.answers],
        "power": asdict(plan.power) if plan.power is not None else None,
        "backtest": _backtest_document(plan),
        "refused": plan.refused + [reason for a in plan.answers for reason in a.refused],
        "scope": SCOPE,
        "derived": "Derived from MLPerf Training results, not official MLPerf results.",
    }


def model_plan_rows(plan: ModelPlan) -> pl.DataFrame:
    """One row per count answered (or one refused row), with the request and the backtest's figures on each."""
    r, t, f = plan.request, plan.transfer, plan.figures
    common = {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
              "accelerator_group": r.accelerator_group, "precision": t.precision, "peak_tflops": t.peak_tflops, "training_flops": plan.flops,
              "mfu_with_attention": t.mfu_with_attention, "mfu_low": plan.mfu_low, "mfu_high": plan.mfu_high,
              "leaned_on": leaned_on_text(t.cells), "backtest_median_abs_error_pct": f.median_abs_error_pct,
              "backtest_coverage": f.coverage, "backtest_cases": f.cases}
    rows = [common | {k: v for k, v in asdict(a).items() if k != "refused"} | {"chosen": a is plan.chosen, "refused": "; ".join(a.refused) or None}
            for a in plan.answers]
    if not rows:
        rows = [common | {"accelerators": r.accelerators, "refused": "; ".join(plan.refused)}]
    return pl.DataFrame(rows, infer_schema_length=None)


def _count(value: float) -> str:
    """70e9 as 70B, 1e12 as 1T, 3.4e9 as 3.4B: parameters and tokens as people say them."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


_SCIENTIFIC = re.compile(r"\b\d+(?:\.\d+)?e\+\d+\b")


def readable(reason: str) -> str:
    """A refusal as a person reads it: `7e+10 parameters` as `70B parameters`."""
    return _SCIENTIFIC.sub(lambda found: _count(float(found.group(0))), reason)


def _level() -> str:
    return f"{LEVEL * 100:.0f} %"


def _duration(hours: float) -> str:
    if hours < 1:
        return f"{hours * 60:,.0f} min"
    if hours < 48:
        return f"{hours:,.1f} h"
    return f"{hours / 24:,.1f} days"


def _range_text(point: float | None, low: float | None, high: float | None, digits: int = 0, unit: str = "") -> str:
    if point is None:
        return ""
    if low is None or high is None:
        return f"{point:,.{digits}f}{unit}"
    return f"{point:,.{digits}f} [{low:,.{digits}f}, {high:,.{digits}f}]{unit}"


def _time_text(a: Answer) -> str:
    if a.hours is None:
        return ""
    if a.hours_low is None or a.hours_high is None:
        return f"{_duration(a.hours)} (no interval)"
    return f"{_duration(a.hours)} [{_duration(a.hours_low)}, {_duration(a.hours_high)}]"


def _answer_rows(plan: ModelPlan) -> tuple[list[Column], list[list[str]]]:
    cost = any(a.cost_usd is not None for a in plan.answers)
    columns = [Column("N"), Column("time to train"), Column("acc.-hours", drop=2), Column("energy (MWh)", drop=3),
               *([Column("cost (USD)", drop=4)] if cost else []), Column("note", text=True, drop=1)]
    cells = []
    for a in plan.answers:
        note = readable("; ".join(a.refused)) if a.refused else ("meets the deadline" if a.meets_deadline else
                                                       "misses the deadline" if a.meets_deadline is False else "")
        cells.append([f"{a.accelerators:,}", _time_text(a), _range_text(a.accelerator_hours, a.accelerator_hours_low, a.accelerator_hours_high),
                      _range_text(a.energy_mwh, a.energy_mwh_low, a.energy_mwh_high, 1),
                      *([_range_text(a.cost_usd, a.cost_usd_low, a.cost_usd_high)] if cost else []), note])
    return columns, cells


def _leaned_on(cells: list) -> str:
    """The benchmarks the utilisation comes from, with their weight and evidence (a score, or scores)."""
    return re.sub(r"\((1) scores,", r"(\1 score,", leaned_on_text(cells))


def _backtest_text(plan: ModelPlan) -> str:
    f = plan.figures
    if not f.cases:
        return "Backtest across benchmarks: no language-model benchmark could be predicted from the others yet."
    per = "; ".join(f"{b} {e:.0f} % ({held} of {w})" for b, (n, e, held, w) in f.per_benchmark.items())
    held = f", the {_level()} interval held in {f.covered} of {f.with_interval} ({f.coverage * 100:.0f} %)" if f.coverage is not None else ""
    return (f"Backtest across benchmarks (each language-model benchmark left out and its {f.cases} scores predicted from the others): "
            f"median error {f.median_abs_error_pct:.1f} %{held}. Per benchmark, median error (interval held): {per}.")


def _print(plan: ModelPlan, console: Console) -> None:
    r, t = plan.request, plan.transfer
    kind = f"{_count(r.parameters)}-parameter mixture of experts ({_count(r.active_parameters)} active)" if r.moe else f"{_count(r.parameters)}-parameter model"
    precision = ""
    if t.precision:
        precision = f" at {t.precision}" + (" (assumed: the logs leaned on do not say; the round's and accelerator's usual)" if t.precision_assumed else "")
    console.print(f"[bold]A {kind}[/bold], {_count(plan.tokens)} tokens in sequences of {r.seq_len:,.0f}, on [bold]{r.accelerator_group}[/bold]{precision}")
    if plan.refused:
        console.print("[bold]No number[/bold]: the measurements do not cover this request.")
        for reason in plan.refused:
            console.print(f"  Missing: {readable(reason)}.")
        console.print(_backtest_text(plan))
        return
    assert t.mfu_with_attention is not None
    console.print(f"Training FLOPs {plan.flops:.3g}: 6 x active parameters x tokens, plus {plan.attention_share * 100:.1f} % for attention.")
    console.print(f"Expected model FLOPs utilisation (attention counted) {_range_text(t.mfu_with_attention, plan.mfu_low, plan.mfu_high, 3)} "
                  f"({_level()} interval) of the {t.peak_tflops:,.0f} TFLOPS peak, from the language models measured on {r.accelerator_group}: "
                  f"{_leaned_on(t.cells)}.")
    a = plan.chosen
    if a is not None and a.hours is None:
        console.print(f"[bold]At {a.accelerators:,} {r.accelerator_group}[/bold]: no number. Missing: {readable('; '.join(a.refused))}.")
        console.print(_backtest_text(plan))
        return
    console.print()
    print_fitted(console, *_answer_rows(plan), title=f"Time to train, accelerator-hours and energy, with their {_level()} intervals",
                 see_all="--format csv or json gives every field")
    if a is None:
        console.print("The accelerator-hours are the same at every count: utilisation is taken as independent of the count within the "
                      "counts measured (docs/plan_a_model.md says why); --deadline picks the fewest that meet it, --accelerators N answers at N.")
    if plan.power is None:
        console.print(f"Energy: no power measured for a language model on {r.accelerator_group}.")
    else:
        p = plan.power
        console.print(f"Energy at the measured {p.w_per_accelerator:,.0f} W per accelerator ({p.low:,.0f}-{p.high:,.0f} W; {p.scores} "
                      f"power-measured scores of {p.benchmarks}, the whole system's power over its accelerators).")
    if a is not None and a.hours is not None:
        deadline = ""
        if a.meets_deadline is not None and plan.deadline_min is not None:
            deadline = (f"; it {'meets' if a.meets_deadline else 'misses'} the deadline of {_duration(plan.deadline_min / 60)} "
                        "on the interval's slow end")
        said = [_range_text(a.accelerator_hours, a.accelerator_hours_low, a.accelerator_hours_high, unit=" accelerator-hours")]
        if a.energy_mwh is not None:
            said.append(_range_text(a.energy_mwh, a.energy_mwh_low, a.energy_mwh_high, 1, " MWh"))
        if a.cost_usd is not None:
            said.append(_range_text(a.cost_usd, a.cost_usd_low, a.cost_usd_high, unit=" USD"))
        console.print(f"[bold]At {a.accelerators:,} {r.accelerator_group}[/bold] ({plan.why_chosen}): about {_time_text(a)}, "
                      f"{', '.join(said)}{deadline}.")
    console.print(_backtest_text(plan))
    console.print(SCOPE + " Derived from MLPerf Training results, not official MLPerf results.")
