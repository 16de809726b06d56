"""Check the model planner on public training runs it was not given: each run planned as a user would ask for it, at
its reported count, and its reported accelerator-hours held to the production estimate and its 90 % interval, beside
the rule of thumb (6 x active parameters x tokens at 40 % of the 16-bit peak).

    python tools/check_public_runs.py RUNS.tsv [--warehouse data/mlperf.duckdb]
    python tools/check_public_runs.py bench/public_runs_held_out.tsv     # public runs never used to fit, each with its source

RUNS.tsv is tab-separated with a header: run, accelerator_group, accelerators, parameters, active_parameters, tokens,
seq_len, precision, accelerator_hours, and optionally global_batch_tokens (seq_len, precision and the batch may be empty:
the planner's defaults apply, 8,192 tokens, 16-bit, public runs of the size's batch). A run without a count is listed
and left out of the figures: the planner answers at a count. Prints one line per run and then the share refused, the
median |error| against the rule of thumb's, how often the interval held, and the widest interval: the figures the
issues set targets for (median error at most 30 % and at most two thirds of the rule of thumb's, the interval holding
80 to 95 %, none wider than x10 from end to end).
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys

from mlperf_scaling.tasks.planning.datasheets import datasheet_of
from mlperf_scaling.tasks.planning.evidence import language_model_evidence
from mlperf_scaling.tasks.planning.model_plan import make_model_plan, resolve_group
from mlperf_scaling.tasks.planning.requests import PlanError
from mlperf_scaling.tasks.planning.work import PRECISION_COLUMN, Request, training_flops
from mlperf_scaling.warehouse.read import read_queries

RULES_TO_REQUEST = {"bfloat16": "bf16"} | {name: name for name in PRECISION_COLUMN}  # a run's stated precision as --precision takes it
RULE_OF_THUMB = 0.40  # of the 16-bit peak


def _number(row: dict, name: str) -> float | None:
    value = (row.get(name) or "").strip()
    return float(value) if value else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", help="a TSV of public runs (see above)")
    parser.add_argument("--warehouse", default="data/mlperf.duckdb")
    args = parser.parse_args(argv)
    context, backtest, production, scale = read_queries(args.warehouse, "all_context", "all_transfer_backtest", "all_production_backtest",
                                                        "all_scale_backtest")
    evidence = language_model_evidence(context)
    refused, uncounted, errors, rule_errors, held, widths = 0, 0, [], [], [], []
    with open(args.runs, encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        if not (row.get("accelerators") or "").strip():
            uncounted += 1
            print(f"{row['run']}: no count reported: not planned")
            continue
        stated = (row.get("precision") or "").strip().lower()
        if stated and stated not in RULES_TO_REQUEST:
            print(f"{row['run']}: precision {stated!r} is none the planner takes: not planned")
            refused += 1
            continue
        precision = RULES_TO_REQUEST.get(stated)
        try:
            group = resolve_group(evidence, row["accelerator_group"])
            request = Request(float(row["active_parameters"] or row["parameters"]), float(row["parameters"]), _number(row, "seq_len") or 8192,
                              group, precision, int(row["accelerators"]), global_batch_tokens=_number(row, "global_batch_tokens"))
            plan = make_model_plan(evidence, backtest, request, float(row["tokens"]), production=production, scale=scale)
        except PlanError as exc:
            refused += 1
            print(f"{row['run']}: refused: {exc}")
            continue
        made = plan.chosen.production if plan.chosen is not None else None
        if plan.refused or made is None or made.accelerator_hours is None:
            refused += 1
            print(f"{row['run']}: refused: {'; '.join(plan.refused) or 'no production estimate'}")
            continue
        reported = float(row["accelerator_hours"])
        error = made.accelerator_hours / reported - 1
        low, high = made.accelerator_hours_low, made.accelerator_hours_high
        inside = low is not None and high is not None and low <= reported <= high
        spec = datasheet_of(request)
        sixteen = (spec.peak_tflops.get("bf16") or spec.peak_tflops.get("fp16")) if spec is not None else None
        rule = training_flops(request.active_parameters, float(row["tokens"]), request.seq_len) / (RULE_OF_THUMB * sixteen * 1e12) / 3600 if sixteen else None
        errors.append(abs(error))
        held.append(inside)
        if low is not None and high is not None:
            widths.append(high / low)
        if rule is not None:
            rule_errors.append(abs(rule / reported - 1))
        print(f"{row['run']}: {group} x{request.accelerators:,} at {plan.pace.precision}: predicted {made.accelerator_hours:,.0f} "
              f"[{low or 0:,.0f}, {high or 0:,.0f}] accelerator-hours, reported {reported:,.0f}: {error * 100:+.0f} %"
              f"{'' if inside else ', outside the interval'}" + (f" (rule of thumb {rule / reported * 100 - 100:+.0f} %)" if rule else ""))
    if not rows:
        print("no runs")
        return 1
    planned = len(rows) - uncounted
    print(f"\n{len(rows)} runs, {uncounted} with no count; of {planned} planned: {refused} refused ({refused / max(planned, 1) * 100:.0f} %)", end="")
    if errors:
        print(f"; median |error| {statistics.median(errors) * 100:.1f} % (the rule of thumb's on the same runs: "
              f"{statistics.median(rule_errors) * 100:.1f} %); the 90 % interval held for {sum(held)} of {len(held)} "
              f"({sum(held) / len(held) * 100:.0f} %); the widest interval x{max(widths):.1f} from end to end")
    else:
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
