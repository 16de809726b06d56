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

from mlperf_scaling.tasks.metrics.context import SINGLE_SOURCE_PEAK
from mlperf_scaling.tasks.planning.calibration import LEVEL
from mlperf_scaling.tasks.planning.evidence import language_model_evidence
from mlperf_scaling.tasks.planning.model_plan import Answer, Estimate, ModelPlan, duration_words, make_model_plan, resolve_group
from mlperf_scaling.tasks.planning.pace import Calibrated, leaned_on_text
from mlperf_scaling.tasks.planning.pace_backtest import BacktestFigures
from mlperf_scaling.tasks.planning.requests import PlanError
from mlperf_scaling.tasks.planning.work import Request, human_count
from mlperf_scaling.terminal import Column, print_fitted
from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

# what each answer is the time of, and what it is not: said beside every answer
SCOPE = ("The MLPerf pace is the training's at the pace of MLPerf submissions (tuned systems, evaluations included, initialisation, "
         "checkpoints and failures not), their utilisation while computing plus the overhead every step pays at the count; the "
         "production estimate is that pace times what public production runs took beyond it (reference/production_runs.tsv).")
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
        return "--global-batch is a benchmark's batch in samples; a model's is --global-batch-tokens B (tokens per optimiser step)"
    return None


def print_model_plan(args: argparse.Namespace, console: Console) -> int:
    if (problem := _request_problem(args)) is not None:
        return _fail(problem)
    deadline = args.deadline  # in minutes, checked as the options were parsed
    try:
        context, backtest, production, scale = read_queries(args.warehouse, "all_context", "all_transfer_backtest", "all_production_backtest",
                                                            "all_scale_backtest")
        evidence = language_model_evidence(context)
        request = Request(args.active_params or args.model_params, args.model_params, args.seq_len,
                          resolve_group(evidence, args.accelerator), args.precision, args.accelerators, accelerator_name=args.accelerator,
                          global_batch_tokens=args.global_batch_tokens)
        plan = make_model_plan(evidence, backtest, request, args.tokens, deadline, args.price_per_accelerator_hour, args.max_accelerators,
                               production, scale)
    except (PlanError, WarehouseMissing) as exc:
        return _fail(readable(str(exc)))
    if plan.refused:  # what cannot be stated for this request is its mistake: one line
        return _fail(readable("; ".join(plan.refused)))
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
                                                     "same accelerator at their own counts and batches (table transfer_backtest)") | {"targets": TARGETS},
                "mlperf_pace_pooled": figures(plan.pooled_figures, "each accelerator left out, its scores predicted from its generation's or "
                                                                  "every other accelerator (table transfer_backtest)")}
    if plan.scale_figures is not None:
        document["counts_never_seen"] = figures(plan.scale_figures, "the largest counts of each language-model benchmark and accelerator "
                                                                    "hidden, predicted from the smaller ones (table scale_backtest)")
    if plan.production_figures is not None:
        p = plan.production_figures
        document["production"] = {"what": "each public production run at its reported count, predicted with its organisation left out "
                                          "(table production_backtest)",
                                  "runs": p.runs, "organisations": p.organisations, "median_abs_error_pct": p.median_abs_error_pct,
                                  "interval_held": p.covered, "with_interval": p.with_interval, "coverage": p.coverage,
                                  "each_architecture_left_out": {"median_abs_error_pct": p.by_architecture[0], "interval_held": p.by_architecture[1],
                                                                 "with_interval": p.by_architecture[2]}}
    return document


def _batch_document(plan: ModelPlan) -> dict | None:
    b = plan.batch
    if b is None:
        return None
    return {"tokens": b.tokens, "sequences": b.sequences, "given": b.given, "basis": b.basis, "model_parallel": b.model_parallel,
            "largest_model_parallel": b.largest_model_parallel, "largest_useful_accelerators": b.largest_useful,
            "fastest": asdict(plan.fastest) if plan.fastest is not None else None}


def _beyond(plan: ModelPlan, a: Answer | None) -> list[str]:
    """What lies beyond the evidence: the request's size, length and kind, and the count asked for or chosen."""
    words = plan.pace.count_words(a.accelerators) if a is not None else None
    return plan.pace.far + ([words] if words else [])


def model_plan_document(plan: ModelPlan) -> dict:
    """Every field of the plan, for a program."""
    r, t = plan.request, plan.pace
    overhead = t.overhead.basis(t.architecture) if t.overhead is not None else None
    return {
        "request": {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
                    "accelerator_group": r.accelerator_group, "precision": r.precision, "accelerators": r.accelerators,
                    "global_batch_tokens": r.global_batch_tokens, "deadline_min": plan.deadline_min},
        "training_flops": plan.flops, "attention_share": plan.attention_share, "precision": t.precision, "precision_assumed": t.precision_assumed,
        "scores_leaned_on": t.n_scores, "scores_at_an_assumed_precision": t.n_precision_assumed,
        "precision_change": asdict(t.change) if t.change else None, "training_change": asdict(t.training_change) if t.training_change else None,
        "pooled": t.pooled, "reach": t.reach, "reach_seen_in_backtest": plan.reach_seen,
        "beyond_the_evidence": _beyond(plan, plan.chosen), "largest_count_measured_on_generation": t.largest_measured,
        "peak_tflops": t.peak_tflops, "peak_single_source": t.peak_single_source,
        "mfu_compute": {"predicted": t.mfu_compute, "low": plan.mfu_low, "high": plan.mfu_high, "level": LEVEL, "capped": plan.mfu_capped},
        "step_overhead": {"architecture": t.architecture, "seconds_per_level": t.overhead.per_level(t.architecture) if t.overhead else None,
                          "basis": overhead},
        "batch": _batch_document(plan),
        "leaned_on": [asdict(c) for c in t.cells],
        "production": asdict(plan.production) if plan.production is not None else None,
        "answer": asdict(plan.chosen) if plan.chosen is not None else None, "why": plan.why_chosen,
        "answers": [asdict(a) for a in plan.answers],
        "power": asdict(plan.power) if plan.power is not None else None,
        "backtest": _backtest_document(plan),
        "refused": plan.refused,
        "scope": SCOPE,
        "derived": "Derived from MLPerf Training results, not official MLPerf results.",
    }


def _flat(prefix: str, estimate: Estimate | None) -> dict:
    return {f"{prefix}_{name}": value for name, value in (asdict(estimate) if estimate else dict.fromkeys(Estimate.__dataclass_fields__)).items()}


def model_plan_rows(plan: ModelPlan) -> pl.DataFrame:
    """One row per count answered (or one refused row): the MLPerf pace's and the production estimate's figures side by side,
    with the request, the batch and the backtests' figures on each."""
    r, t, f, b = plan.request, plan.pace, plan.figures, plan.batch
    made = plan.production
    common = {"model_params": r.parameters, "active_params": r.active_parameters, "tokens": plan.tokens, "seq_len": r.seq_len,
              "accelerator_group": r.accelerator_group, "precision": t.precision, "precision_assumed": t.precision_assumed,
              "precision_change": t.change.text if t.change else None, "pooled": t.pooled, "reach": t.reach,
              "peak_tflops": t.peak_tflops, "peak_single_source": t.peak_single_source, "training_flops": plan.flops,
              "mfu_compute": t.mfu_compute, "mfu_compute_low": plan.mfu_low, "mfu_compute_high": plan.mfu_high,
              "global_batch_tokens": b.tokens if b else None, "global_batch_given": b.given if b else None,
              "model_parallel": b.model_parallel if b else None, "largest_useful_accelerators": b.largest_useful if b else None,
              "leaned_on": leaned_on_text(t.cells), "backtest_median_abs_error_pct": f.median_abs_error_pct,
              "backtest_coverage": f.coverage, "backtest_cases": f.cases,
              "counts_never_seen_median_abs_error_pct": plan.scale_figures.median_abs_error_pct if plan.scale_figures else None,
              "counts_never_seen_coverage": plan.scale_figures.coverage if plan.scale_figures else None,
              "production_factor": made.factor if made else None, "production_leaned_on": made.leaned_on if made else None,
              "production_backtest_median_abs_error_pct": plan.production_figures.median_abs_error_pct if plan.production_figures else None,
              "production_backtest_coverage": plan.production_figures.coverage if plan.production_figures else None}
    rows = [common | {"accelerators": a.accelerators, "mfu": a.mfu, "overhead_share": a.overhead_share, "count_beyond": a.count_beyond}
            | _flat("pace", a.pace) | _flat("production", a.production)
            | {"meets_deadline": a.meets_deadline, "chosen": a is plan.chosen, "capped": a.capped}
            for a in plan.answers]
    if not rows:
        rows = [common | {"accelerators": r.accelerators, "refused": "; ".join(plan.refused)}]
    return pl.DataFrame(rows, infer_schema_length=None)


_SCIENTIFIC = re.compile(r"\b\d+(?:\.\d+)?e\+\d+\b")


def readable(reason: str) -> str:
    """A refusal as a person reads it: `7e+10 parameters` as `70B parameters`."""
    return _SCIENTIFIC.sub(lambda found: human_count(float(found.group(0))), reason)


def _level() -> str:
    return f"{LEVEL * 100:.0f} %"


def _in_unit_of(point: float, value: float) -> str:
    """An interval's end in the unit of the estimate before it: one unit per interval."""
    if point < 1:
        return f"{value * 60:,.0f}"
    if point < 48:
        return f"{value:,.1f}"
    return f"{value / 24:,.1f}"


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
        return f"{duration_words(e.hours)} (no interval)"
    number, unit = duration_words(e.hours).split(" ", 1)
    return f"{number} [{_in_unit_of(e.hours, e.hours_low)}, {_in_unit_of(e.hours, e.hours_high)}] {unit}"


def _note(plan: ModelPlan, a: Answer) -> str:
    said = []
    if a.meets_deadline is not None:
        said.append("meets the deadline" if a.meets_deadline else "misses the deadline")
    if a.count_beyond > 1:
        said.append(f"{a.count_beyond:,.1f}x beyond the largest count measured")
    if plan.fastest is not None and a.accelerators == plan.fastest.accelerators:
        said.append("the fastest within the batch")
    return "; ".join(said)


def _answer_rows(plan: ModelPlan) -> tuple[list[Column], list[list[str]]]:
    cost = any((a.production or a.pace).cost_usd is not None for a in plan.answers)
    made = plan.production is not None
    columns = [Column("N"), Column("MFU", drop=7), *([Column("in production"), Column("production acc.-hours", drop=3)] if made else []),
               Column("at the MLPerf pace", drop=2 if made else 0), Column("pace acc.-hours", drop=4),
               Column("production energy (MWh)" if made else "energy (MWh)", drop=5), *([Column("cost (USD)", drop=6)] if cost else []),
               Column("note", text=True, drop=1)]
    cells = []
    for a in plan.answers:
        shown = a.production or a.pace
        cells.append([f"{a.accelerators:,}", f"{a.mfu:.3f}",
                      *([_time_text(a.production), _range_text(*_triple(a.production, "accelerator_hours"))] if made else []),
                      _time_text(a.pace), _range_text(*_triple(a.pace, "accelerator_hours")),
                      _range_text(*_triple(shown, "energy_mwh"), 1),
                      *([_range_text(*_triple(shown, "cost_usd"))] if cost else []), _note(plan, a)])
    return columns, cells


def _triple(e: Estimate | None, name: str) -> tuple[float | None, float | None, float | None]:
    if e is None:
        return None, None, None
    return getattr(e, name), getattr(e, f"{name}_low"), getattr(e, f"{name}_high")


def _held(f: BacktestFigures) -> str:
    return f"the {_level()} interval held in {f.covered} of {f.with_interval} ({f.coverage * 100:.0f} %)" if f.coverage is not None else "no interval"


def _backtest_text(plan: ModelPlan) -> str:
    f = plan.figures
    if not f.cases:
        return "Backtest across benchmarks: no language-model benchmark could be predicted from the others yet."
    per = "; ".join(f"{b} {e:.0f} % ({held} of {w})" for b, (n, e, held, w) in f.per_benchmark.items())
    far = f"; beyond the evidence it held in {f.beyond[0]} of {f.beyond[1]}" if f.beyond[1] else ""
    text = (f"MLPerf pace, backtested across benchmarks (each language-model benchmark left out and its {f.cases} scores predicted from the "
            f"others at their own counts and batches): median error {f.median_abs_error_pct:.1f} %, {_held(f)}{far}. Per benchmark, "
            f"median error (interval held): {per}.")
    if plan.pace.pooled and plan.pooled_figures.cases:
        p = plan.pooled_figures
        text += (f" Pooled over accelerators (each accelerator left out, {p.cases} scores): median error {p.median_abs_error_pct:.1f} %, "
                 f"the interval held in {p.covered} of {p.with_interval}.")
    if (s := plan.scale_figures) is not None and s.cases:
        text += (f" At counts never seen (the largest counts of each benchmark and accelerator hidden and predicted from the smaller "
                 f"ones, {s.cases} scores): median error {s.median_abs_error_pct:.1f} %, {_held(s)}.")
    return text


def _production_text(plan: ModelPlan) -> str | None:
    made, f = plan.production, plan.production_figures
    if made is None or f is None:
        return None
    factors = [a.production_factor for a in plan.answers if a.production_factor is not None]
    factor = plan.chosen.production_factor if plan.chosen is not None and plan.chosen.production_factor is not None else made.factor
    bounds = f" [x{factor * math.exp(made.log_bounds[0]):.2f}, x{factor * math.exp(made.log_bounds[1]):.2f}]" if made.log_bounds else ""
    where = (f" at {plan.chosen.accelerators:,}" if plan.chosen is not None else
             f" (x{min(factors):.2f} to x{max(factors):.2f} over the counts below: more where the step overhead is a larger share)"
             if factors and max(factors) / min(factors) > 1.005 else "")
    held = f", the {_level()} interval held for {f.covered} of {f.with_interval} runs ({f.coverage * 100:.0f} %)" if f.coverage is not None else ""
    return (f"In production: x{factor:.2f}{bounds}{where} the MLPerf pace's accelerator-hours, what public production runs took beyond "
            f"it (checkpoints, restarts, evaluations, less tuned software), learnt from {made.leaned_on}. Backtested on {f.runs} public runs "
            f"of {f.organisations} organisations at their reported counts, each organisation left out: median error "
            f"{f.median_abs_error_pct:.1f} %{held}; "
            + (f"each architecture left out: median error {f.by_architecture[0]:.1f} %, held for {f.by_architecture[1]} of {f.by_architecture[2]}. "
               if f.by_architecture[0] is not None else "no architecture could be left out (too few runs). ") +
            f"Interval from {made.basis}.")


def _batch_text(plan: ModelPlan) -> str:
    b, r = plan.batch, plan.request
    assert b is not None
    whose = "yours" if b.given else b.basis
    fastest = plan.fastest
    within = "the count you have" if plan.largest is not None and plan.largest < b.largest_useful else "within it"
    there = (f"; the fastest count {within} is {fastest.accelerators:,}, about {_time_text(fastest.production or fastest.pace)}"
             f"{' in production' if fastest.production else ' at the MLPerf pace'}") if fastest is not None else ""
    parallel = (f"model parallelism {b.model_parallel} holds the weights and gradients" if b.model_parallel >= 8 else
                f"model parallelism {b.model_parallel} holds the weights and gradients, and tensor parallelism within a node of 8 "
                f"spreads a sequence further")
    return (f"Global batch {human_count(b.tokens)} tokens, {b.sequences:,} sequences of {r.seq_len:,.0f} ({whose}): {parallel}, so at one "
            f"sequence per data-parallel replica at most {b.largest_useful:,} {r.accelerator_group} are useful{there}.")


def _print(plan: ModelPlan, console: Console) -> None:
    r, t = plan.request, plan.pace
    kind = f"{human_count(r.parameters)}-parameter mixture of experts ({human_count(r.active_parameters)} active)" if r.moe else f"{human_count(r.parameters)}-parameter model"
    precision = ""
    if t.precision:
        precision = f" at {t.precision}" + (" (no --precision given: 16-bit mixed precision, as most public production runs train)" if t.precision_assumed else "")
    console.print(f"[bold]A {kind}[/bold], {human_count(plan.tokens)} tokens in sequences of {r.seq_len:,.0f}, on [bold]{escape(r.accelerator_group)}[/bold]"
                  f"{escape(precision)}")
    assert t.mfu_compute is not None and t.peak_tflops is not None and t.overhead is not None
    console.print(f"Training FLOPs {plan.flops:.3g}: 6 x active parameters x tokens, plus {plan.attention_share * 100:.1f} % for attention.", markup=False)
    measured_on = "accelerators measured, pooled" if t.pooled else f"the language models measured on {r.accelerator_group}"
    console.print(f"At the MLPerf pace: model FLOPs utilisation while computing (attention counted) {_range_text(t.mfu_compute, plan.mfu_low, plan.mfu_high, 3)} "
                  f"({_level()} interval) of the {t.peak_tflops:,.0f} TFLOPS {t.precision} peak"
                  f"{f' (a {SINGLE_SOURCE_PEAK}: the times below are only as sure as it)' if t.peak_single_source else ''}, "
                  f"from {measured_on}: {leaned_on_text(t.cells)}. "
                  f"Every optimiser step also pays an overhead that does not shrink with the count, {t.overhead.basis(t.architecture)}; "
                  f"the MFU column is the whole step's.", markup=False)
    if plan.mfu_capped:
        console.print(f"  The interval stops at 1: {readable(plan.mfu_capped)}.", markup=False)
    if t.n_precision_assumed:
        console.print(f"  {t.n_precision_assumed} of the {t.n_scores} scores it rests on are at an assumed precision: no log, config file or "
                      "statement of their submitters says it (their MFU is against that precision's peak).", markup=False)
    for change in (t.change, t.training_change):
        if change is not None:
            console.print(f"  {change.source} was measured, not {change.target}: {change.text}; the interval carries its spread.", markup=False)
    console.print(_batch_text(plan), markup=False)
    beyond = _beyond(plan, plan.chosen)
    if beyond:
        seen = plan.reach_seen or 1.0
        wider = (f"the interval is x{t.reach_scale(Calibrated(0.0, 0.0, seen)):.2f} as wide: this model is {t.reach:,.0f} times beyond its "
                 f"evidence in size, sequence length and kind, farther than the backtest's farthest case ({seen:,.0f} times)"
                 if t.reach > seen else "within the backtest's farthest case in size and length, not widened for them")
        console.print(f"  Beyond the evidence ({wider}; a count beyond the largest measured widens it by what the counts never seen taught): "
                      f"{readable('; '.join(beyond))}.", markup=False)
    if (made := _production_text(plan)) is not None:
        console.print(made, markup=False)
    a = plan.chosen
    console.print()
    print_fitted(console, *_answer_rows(plan), title=f"Time to train, accelerator-hours and energy, with their {_level()} intervals",
                 see_all="--format csv or json gives every field")
    if a is None:
        console.print("Accelerator-hours grow with the count: the batch is spread thinner, and each step's overhead is a larger share of it. "
                      "--deadline picks the fewest that meet it, --accelerators N answers at N.", markup=False)
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
        deadline = f"; it {'meets' if a.meets_deadline else 'misses'} the deadline of {duration_words(plan.deadline_min / 60)} on {basis} slow end"
    capped = f" ({a.capped})" if a.capped else ""
    return f"[bold]At {a.accelerators:,} {escape(r.accelerator_group)}[/bold] {escape(f'({plan.why_chosen}): ' + '; '.join(parts) + deadline + capped)}."
