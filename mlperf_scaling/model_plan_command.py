"""`mlperf-scaling plan --model-params P --tokens T --accelerator A`: the plan for a language model that is not a
benchmark, printed for a person or, with --format json|csv, every field for a program. Read-only.

A request outside the measurements is answered with what is missing, not with a number; a mistake in the request is
one line on stderr and exit 2.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import asdict

import polars as pl
from rich.console import Console
from rich.markup import escape

from mlperf_scaling.tasks.metrics.model_plan import Answer, Estimate, ModelPlan, make_model_plan, resolve_group
from mlperf_scaling.tasks.metrics.plan import PlanError
from mlperf_scaling.tasks.metrics.transfer import LEVEL, BacktestFigures, Request, human_count, language_model_evidence, leaned_on_text
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

# what each answer is the time of, and what it is not: said beside every answer
SCOPE = ("The MLPerf pace is the training's at the pace of MLPerf submissions (tuned systems, evaluations included, initialisation, "
         "checkpoints and failures not), with a global batch that keeps every accelerator as busy as theirs were; the production "
         "estimate is that pace times what public production runs took beyond it (reference/production_runs.tsv).")
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
        context, backtest, production = read_queries(args.warehouse, "all_context", "all_transfer_backtest", "all_production_backtest")
        evidence = language_model_evidence(context)
        request = Request(args.active_params or args.model_params, args.model_params, args.seq_len,
                          resolve_group(evidence, args.accelerator), args.precision, args.accelerators, accelerator_name=args.accelerator)
        plan = make_model_plan(evidence, backtest, request, args.tokens, deadline, args.price_per_accelerator_hour, args.max_accelerators,
                               production)
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
    def figures(f: BacktestFigures, what: str) -> dict:
        return {"what": what, "cases": f.cases, "refused": f.refused, "median_abs_error_pct": f.median_abs_error_pct, "interval_held": f.covered,
                "with_interval": f.with_interval, "coverage": f.coverage, "beyond_the_evidence": {"interval_held": f.beyond[0], "with_interval": f.beyond[1]},
                "per_held_out": {b: {"cases": n, "median_abs_error_pct": e, "interval_held": held, "with_interval": w}
                                 for b, (n, e, held, w) in f.per_benchmark.items()}}

    document = {"mlperf_pace": figures(plan.figures, "each language-model benchmark left out, its scores predicted from the others on the "
                                                     "same accelerator (table transfer_backtest)") | {"targets": TARGETS},
                "mlperf_pace_pooled": figures(plan.pooled_figures, "each accelerator left out, its scores predicted from every other accelerator "
                                                                  "(table transfer_backtest)")}
    if plan.production_figures is not None:
        p = plan.production_figures
        document["production"] = {"what": "each public production run predicted with its organisation left out (table production_backtest)",
                                  "runs": p.runs, "organisations": p.organisations, "median_abs_error_pct": p.median_abs_error_pct,
                                  "interval_held": p.covered, "with_interval": p.with_interval, "coverage": p.coverage,
                                  "each_architecture_left_out": {"median_abs_error_pct": p.by_architecture[0], "interval_held": p.by_architecture[1],
                                                                 "with_interval": p.by_architecture[2]}}
    return document


def model_plan_document(plan: ModelPlan) -> dict:
    """Every field of the plan, for a program."""
    r, t = plan.request, plan.transfer
    return {
        "request": {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
                    "accelerator_group": r.accelerator_group, "precision": r.precision, "accelerators": r.accelerators,
                    "deadline_min": plan.deadline_min},
        "training_flops": plan.flops, "attention_share": plan.attention_share, "precision": t.precision, "precision_assumed": t.precision_assumed,
        "precision_change": asdict(t.change) if t.change else None, "pooled": t.pooled, "reach": t.reach, "reach_seen_in_backtest": plan.reach_seen, "beyond_the_evidence": t.far,
        "peak_tflops": t.peak_tflops, "mfu_with_attention": {"predicted": t.mfu_with_attention, "low": plan.mfu_low, "high": plan.mfu_high, "level": LEVEL,
                                                             "capped": plan.mfu_capped},
        "leaned_on": [asdict(c) for c in t.cells],
        "production": asdict(plan.production) if plan.production is not None else None,
        "answer": asdict(plan.chosen) if plan.chosen is not None else None, "why": plan.why_chosen,
        "answers": [asdict(a) for a in plan.answers],
        "power": asdict(plan.power) if plan.power is not None else None,
        "backtest": _backtest_document(plan),
        "refused": plan.refused + [reason for a in plan.answers for reason in a.refused],
        "scope": SCOPE,
        "derived": "Derived from MLPerf Training results, not official MLPerf results.",
    }


def _flat(prefix: str, estimate: Estimate | None) -> dict:
    return {f"{prefix}_{name}": value for name, value in (asdict(estimate) if estimate else dict.fromkeys(Estimate.__dataclass_fields__)).items()}


def model_plan_rows(plan: ModelPlan) -> pl.DataFrame:
    """One row per count answered (or one refused row): the MLPerf pace's and the production estimate's figures side by side,
    with the request and the backtests' figures on each."""
    r, t, f = plan.request, plan.transfer, plan.figures
    made = plan.production
    common = {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
              "accelerator_group": r.accelerator_group, "precision": t.precision, "precision_assumed": t.precision_assumed,
              "precision_change": t.change.text if t.change else None, "pooled": t.pooled, "reach": t.reach,
              "peak_tflops": t.peak_tflops, "training_flops": plan.flops,
              "mfu_with_attention": t.mfu_with_attention, "mfu_low": plan.mfu_low, "mfu_high": plan.mfu_high,
              "leaned_on": leaned_on_text(t.cells), "backtest_median_abs_error_pct": f.median_abs_error_pct,
              "backtest_coverage": f.coverage, "backtest_cases": f.cases,
              "production_factor": made.factor if made else None, "production_leaned_on": made.leaned_on if made else None,
              "production_backtest_median_abs_error_pct": plan.production_figures.median_abs_error_pct if plan.production_figures else None,
              "production_backtest_coverage": plan.production_figures.coverage if plan.production_figures else None}
    rows = [common | {"accelerators": a.accelerators} | _flat("pace", a.pace) | _flat("production", a.production)
            | {"meets_deadline": a.meets_deadline, "chosen": a is plan.chosen, "refused": "; ".join(a.refused) or None, "capped": a.capped}
            for a in plan.answers]
    if not rows:
        rows = [common | {"accelerators": r.accelerators, "refused": "; ".join(plan.refused)}]
    return pl.DataFrame(rows, infer_schema_length=None)


def _count(value: float) -> str:
    """70e9 as 70B, 1e12 as 1T, 3.4e9 as 3.4B: parameters and tokens as people say them."""
    return human_count(value)


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


def _time_text(e: Estimate | None) -> str:
    if e is None:
        return ""
    if e.hours_low is None or e.hours_high is None:
        return f"{_duration(e.hours)} (no interval)"
    return f"{_duration(e.hours)} [{_duration(e.hours_low)}, {_duration(e.hours_high)}]"


def _answer_rows(plan: ModelPlan) -> tuple[list[Column], list[list[str]]]:
    cost = any((a.production or a.pace) is not None and (a.production or a.pace).cost_usd is not None for a in plan.answers)  # type: ignore[union-attr]
    made = plan.production is not None
    columns = [Column("N"), *([Column("in production"), Column("production acc.-hours", drop=3)] if made else []),
               Column("at the MLPerf pace", drop=2 if made else 0), Column("pace acc.-hours", drop=4),
               Column("energy (MWh)", drop=5), *([Column("cost (USD)", drop=6)] if cost else []), Column("note", text=True, drop=1)]
    cells = []
    for a in plan.answers:
        note = readable("; ".join(a.refused)) if a.refused else ("meets the deadline" if a.meets_deadline else
                                                       "misses the deadline" if a.meets_deadline is False else "")
        shown = a.production or a.pace
        cells.append([f"{a.accelerators:,}",
                      *([_time_text(a.production), _range_text(*_triple(a.production, "accelerator_hours"))] if made else []),
                      _time_text(a.pace), _range_text(*_triple(a.pace, "accelerator_hours")),
                      _range_text(*_triple(shown, "energy_mwh"), 1),
                      *([_range_text(*_triple(shown, "cost_usd"))] if cost else []), note])
    return columns, cells


def _triple(e: Estimate | None, name: str) -> tuple[float | None, float | None, float | None]:
    if e is None:
        return None, None, None
    return getattr(e, name), getattr(e, f"{name}_low"), getattr(e, f"{name}_high")


def _leaned_on(cells: list) -> str:
    """The benchmarks the utilisation comes from, with their weight and evidence (a score, or scores)."""
    return re.sub(r"\((1) scores,", r"(\1 score,", leaned_on_text(cells))


def _backtest_text(plan: ModelPlan) -> str:
    f = plan.figures
    if not f.cases:
        return "Backtest across benchmarks: no language-model benchmark could be predicted from the others yet."
    per = "; ".join(f"{b} {e:.0f} % ({held} of {w})" for b, (n, e, held, w) in f.per_benchmark.items())
    held = f", the {_level()} interval held in {f.covered} of {f.with_interval} ({f.coverage * 100:.0f} %)" if f.coverage is not None else ""
    far = f"; beyond the evidence it held in {f.beyond[0]} of {f.beyond[1]}" if f.beyond[1] else ""
    text = (f"MLPerf pace, backtested across benchmarks (each language-model benchmark left out and its {f.cases} scores predicted from the "
            f"others): median error {f.median_abs_error_pct:.1f} %{held}{far}. Per benchmark, median error (interval held): {per}.")
    if plan.transfer.pooled and plan.pooled_figures.cases:
        p = plan.pooled_figures
        text += (f" Pooled over accelerators (each accelerator left out, {p.cases} scores): median error {p.median_abs_error_pct:.1f} %, "
                 f"the interval held in {p.covered} of {p.with_interval}.")
    return text


def _production_text(plan: ModelPlan) -> str | None:
    made, f = plan.production, plan.production_figures
    if made is None or f is None:
        return None
    bounds = f" [x{made.factor * math.exp(made.log_bounds[0]):.2f}, x{made.factor * math.exp(made.log_bounds[1]):.2f}]" if made.log_bounds else ""
    held = f", the {_level()} interval held for {f.covered} of {f.with_interval} runs ({f.coverage * 100:.0f} %)" if f.coverage is not None else ""
    return (f"In production: x{made.factor:.2f}{bounds} the MLPerf pace's accelerator-hours, what public production runs took beyond "
            f"it (checkpoints, restarts, evaluations, less tuned software), learnt from {made.leaned_on}. Backtested on {f.runs} public runs "
            f"of {f.organisations} organisations, each organisation left out: median error {f.median_abs_error_pct:.1f} %{held}; "
            + (f"each architecture left out: median error {f.by_architecture[0]:.1f} %, held for {f.by_architecture[1]} of {f.by_architecture[2]}. "
               if f.by_architecture[0] is not None else "no architecture could be left out (too few runs). ") +
            f"Interval from {made.basis}.")


def _print(plan: ModelPlan, console: Console) -> None:
    r, t = plan.request, plan.transfer
    kind = f"{_count(r.parameters)}-parameter mixture of experts ({_count(r.active_parameters)} active)" if r.moe else f"{_count(r.parameters)}-parameter model"
    precision = ""
    if t.precision:
        precision = f" at {t.precision}" + (" (no --precision given: 16-bit mixed precision, as most public production runs train)" if t.precision_assumed else "")
    console.print(f"[bold]A {kind}[/bold], {_count(plan.tokens)} tokens in sequences of {r.seq_len:,.0f}, on [bold]{escape(r.accelerator_group)}[/bold]"
                  f"{escape(precision)}")
    if plan.refused:
        console.print("[bold]No number[/bold]: this cannot be stated.")
        for reason in plan.refused:
            console.print(f"  Missing: {readable(reason)}.", markup=False)
        console.print(_backtest_text(plan), markup=False)
        return
    assert t.mfu_with_attention is not None and t.peak_tflops is not None
    console.print(f"Training FLOPs {plan.flops:.3g}: 6 x active parameters x tokens, plus {plan.attention_share * 100:.1f} % for attention.", markup=False)
    measured_on = "every accelerator measured, pooled" if t.pooled else f"the language models measured on {r.accelerator_group}"
    console.print(f"At the MLPerf pace: model FLOPs utilisation (attention counted) {_range_text(t.mfu_with_attention, plan.mfu_low, plan.mfu_high, 3)} "
                  f"({_level()} interval) of the {t.peak_tflops:,.0f} TFLOPS {t.precision} peak, from {measured_on}: {_leaned_on(t.cells)}.",
                  markup=False)
    if plan.mfu_capped:
        console.print(f"  The interval stops at 1: {readable(plan.mfu_capped)}.", markup=False)
    if t.change is not None:
        console.print(f"  {t.change.source} was measured, not {t.change.target}: {t.change.text}; the interval carries its spread.", markup=False)
    if t.far:
        seen = plan.reach_seen or 1.0
        wider = (f"the interval is x{1 + math.log(t.reach / seen):.2f} as wide: farther than the backtest's farthest case, x{seen:,.1f}"
                 if t.reach > seen else f"not widened: the backtest's cases reached x{seen:,.1f} and erred no more for it")
        console.print(f"  Beyond the evidence ({wider}): {readable('; '.join(t.far))}.", markup=False)
    if (made := _production_text(plan)) is not None:
        console.print(made, markup=False)
    a = plan.chosen
    if a is not None and a.refused:
        console.print(f"[bold]At {a.accelerators:,} {escape(r.accelerator_group)}[/bold]: no number. Missing: {escape(readable('; '.join(a.refused)))}.")
        console.print(_backtest_text(plan), markup=False)
        return
    console.print()
    print_fitted(console, *_answer_rows(plan), title=f"Time to train, accelerator-hours and energy, with their {_level()} intervals",
                 see_all="--format csv or json gives every field")
    if a is None:
        console.print("The accelerator-hours are the same at every count: utilisation is taken as independent of the count (docs/plan_a_model.md "
                      "says why; the interval widens beyond the counts measured); --deadline picks the fewest that meet it, --accelerators N answers at N.", markup=False)
    if plan.power is None:
        console.print(f"Energy: no power measured for a language model on {r.accelerator_group}.", markup=False)
    else:
        p = plan.power
        console.print(f"Energy at the measured {p.w_per_accelerator:,.0f} W per accelerator ({p.low:,.0f}-{p.high:,.0f} W; {p.scores} "
                      f"power-measured scores of {p.benchmarks}, the whole system's power over its accelerators).", markup=False)
    if a is not None:
        console.print(_chosen_text(plan, a))
    console.print(_backtest_text(plan), markup=False)
    console.print(SCOPE + " Derived from MLPerf Training results, not official MLPerf results.", markup=False)


def _chosen_text(plan: ModelPlan, a: Answer) -> str:
    r = plan.request
    parts = []
    for label, e in (("in production", a.production), ("at the MLPerf pace", a.pace)):
        if e is None:
            continue
        figures = [f"about {_time_text(e)}", f"{_range_text(*_triple(e, 'accelerator_hours'))} accelerator-hours"]
        if e.energy_mwh is not None:
            figures.append(f"{_range_text(*_triple(e, 'energy_mwh'), 1)} MWh")
        if e.cost_usd is not None:
            figures.append(f"USD {_range_text(*_triple(e, 'cost_usd'))}")
        parts.append(f"{label} {', '.join(figures)}")
    deadline = ""
    if a.meets_deadline is not None and plan.deadline_min is not None:
        basis = "the production estimate's" if a.production is not None else "the pace's"
        deadline = f"; it {'meets' if a.meets_deadline else 'misses'} the deadline of {_duration(plan.deadline_min / 60)} on {basis} slow end"
    capped = f" ({a.capped})" if a.capped else ""
    return f"[bold]At {a.accelerators:,} {escape(r.accelerator_group)}[/bold] {escape(f'({plan.why_chosen}): ' + '; '.join(parts) + deadline + capped)}."
