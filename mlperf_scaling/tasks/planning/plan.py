"""The planner behind `mlperf-scaling plan`: a user's words (benchmark, accelerator, round, deadline) resolved against
the `efficiency` table, then the measured configurations, the best time per count (measured, or predicted with its
calibrated interval), the backtest of the group and the recommendation.

Tables in, a Plan out; printing is the command line's job.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

import polars as pl

from mlperf_scaling.reference.lookup import (
    accelerator_spec,
    accelerator_specs,
    benchmark_name,
    canonical_benchmark,
    folder_rounds,
    workload_names,
    workloads_named,
)
from mlperf_scaling.rounds import normal_round, round_order
from mlperf_scaling.tasks.metrics.fits import MIN_DISTINCT_COUNTS, apart_series
from mlperf_scaling.tasks.planning.calibration import Calibration
from mlperf_scaling.tasks.planning.group_planner import PREDICTED, Planner, Step, planner
from mlperf_scaling.tasks.planning.predict import TWO_PART, BacktestSummary, backtest_group, backtest_summary, group_model
from mlperf_scaling.tasks.planning.recommend import Recommendation, recommend
from mlperf_scaling.tasks.planning.requests import PlanError, normal_name
from mlperf_scaling.tasks.score.rules import ruleset_name

CURVE_DOUBLINGS = 2  # the curve goes this many doublings past the largest count measured, marked extrapolated


_NUMBER = r"\d+(?:\.\d+)?"
_DURATION = re.compile(
    rf"^\s*(?:(?P<d>{_NUMBER})\s*(?:days?|d))?"
    rf"\s*(?:(?P<h>{_NUMBER})\s*(?:hours?|hrs?|h))?"
    rf"\s*(?:(?P<m>{_NUMBER})\s*(?:minutes?|mins?|m))?"
    rf"\s*(?:(?P<s>{_NUMBER})\s*(?:seconds?|secs?|s))?\s*$",
    re.IGNORECASE,
)
_BARE_MINUTES = re.compile(rf"^\s*(?P<m>{_NUMBER})\s*$")


def parse_minutes(text: str) -> float:
    """'30m', '30', '1.5h', '2h30m', '45min', '90s', '30d' as minutes; a ValueError says what is accepted."""
    if bare := _BARE_MINUTES.match(text):
        minutes = float(bare["m"])
    elif (found := _DURATION.match(text)) and any(found[unit] for unit in "dhms"):
        minutes = float(found["d"] or 0) * 1440 + float(found["h"] or 0) * 60 + float(found["m"] or 0) + float(found["s"] or 0) / 60
    else:
        raise ValueError(f"not a duration: {text!r} (e.g. 30m, 90 (minutes), 1.5h, 2h30m, 45s, 30d)")
    if minutes <= 0:
        raise ValueError(f"a deadline must be longer than zero: {text!r}")
    return minutes


def _suggestion(wanted: str, known: list[str]) -> str:
    """`: did you mean llama2_70b_lora?` for `llama2`: the names that start with or contain what was typed, else the
    closest spelling."""
    close = [name for name in known if normal_name(name).startswith(wanted)] or [name for name in known if wanted and wanted in normal_name(name)]
    if not close:
        by_normal = {normal_name(name): name for name in known}
        close = [by_normal[found] for found in difflib.get_close_matches(wanted, list(by_normal), n=2, cutoff=0.6)]
    return f": did you mean {' or '.join(sorted(set(close)))}?" if close else ""


@dataclass(frozen=True)
class Selection:
    round: str
    benchmark: str  # the folder the round's analysis names the workload by
    workload: str  # the task and the model: `object detection (RetinaNet)`
    accelerator_group: str
    rows: pl.DataFrame  # the group's efficiency rows in that round and benchmark
    other_groups: list[str]  # the benchmark's other comparable groups in that round
    why_round: str | None = None  # why this round, when the user did not name it
    why_group: str | None = None  # why this accelerator group, when the user did not name it
    canonical: str = ""  # the workload's name across rounds: `retinanet`
    label: str = ""  # how every page names it: `RetinaNet`, `BERT-large (bert)`


def _named(rows: pl.DataFrame, label: str) -> str:
    """A workload's label with the rounds and folders of its score rows: `NCF (v0.5: 4 scores)`."""
    said = [f"{r}: {n:,} score{'s' if n != 1 else ''}" for r, n in rows.group_by("round").agg(pl.col("n_scores").sum())
            .sort(pl.col("round").map_elements(lambda r: round_order(r), return_dtype=pl.Int64)).iter_rows()]
    return f"{label} ({'; '.join(said)})"


def _held(efficiency: pl.DataFrame, presence: pl.DataFrame | None) -> str:
    """The workloads the warehouse holds, each once, by the name `plan` takes, with the other names it takes for them."""
    canonical = set(efficiency["benchmark_canonical"].to_list())
    present = set(presence["benchmark_canonical"].to_list()) if presence is not None else canonical
    aliases = workload_names()
    said = []
    for name in sorted(canonical | present):
        others = [a for a in aliases.get(name, []) if normal_name(a) != normal_name(canonical_benchmark(name).model)]
        said.append(name + (f" (also {', '.join(others)})" if others else "") + ("" if name in canonical else ": no time to train"))
    return ", ".join(said)


def _unscored(label: str, rows: pl.DataFrame, round_name: str | None = None) -> str:
    """Why a workload the warehouse holds has nothing to plan from (in a round, or anywhere): no score of it has a
    time, or none is on an accelerator that can be compared."""
    if rows.filter(pl.col("status") != "not_scored").height:
        return (f"{_named(rows, label)} is in the warehouse, but none of its scores is on an accelerator the project knows, "
                "so none is compared (mlperf_scaling/reference/accelerators.tsv names them)")
    reason = rows.sort("n_scores", descending=True)["reason"].drop_nulls()
    because = f" (e.g. {reason[0]})" if reason.len() else ""
    if round_name is not None:
        n = int(rows["n_scores"].sum())
        return f"{label} has no time to train in {round_name}: its {n:,} score{'s' if n != 1 else ''} there were not scored{because}"
    return f"{_named(rows, label)} is in the warehouse, but has no time to train: none of its scores was scored{because}; nothing to plan from"


def resolve_workload(efficiency: pl.DataFrame, benchmark: str, round_name: str = "best", presence: pl.DataFrame | None = None) -> str:
    """The canonical name a typed name means: a canonical name, a model's name or a folder (in the round named, where a
    folder held two workloads: ssd). PlanError, in one line, for a name the warehouse does not hold, one that names two
    workloads, or a workload present but never scored (`presence`: the workload_presence query)."""
    wanted = normal_name(benchmark)
    named = workloads_named(benchmark)
    if not named:  # a folder benchmarks.tsv does not list yet (a new round's): its own name
        pairs = efficiency.select("benchmark", "benchmark_canonical").unique()
        named = sorted({c for b, c in pairs.iter_rows() if wanted in (normal_name(b), normal_name(c))})
    held = set(efficiency["benchmark_canonical"].to_list()) | (set(presence["benchmark_canonical"].to_list()) if presence is not None else set())
    if len(named) > 1 and any(c in held for c in named):  # of the workloads a folder held, those the warehouse holds
        named = [c for c in named if c in held]
    if len(named) > 1 and round_name not in (BEST, "latest"):
        in_round = [c for c in named if benchmark_name(benchmark.strip().lower(), normal_round(round_name)).canonical_name == c]
        named = in_round or named
    if len(named) > 1:
        said = " and ".join(f"{canonical_benchmark(c).label} ({c}: the folder {benchmark.strip()} {folder_rounds(benchmark.strip().lower(), c)})"
                            for c in named)
        raise PlanError(f"{benchmark!r} names {len(named)} workloads: {said}; name one, or give --round")
    if not named:
        held = set(efficiency["benchmark_canonical"].to_list())
        by_alias = {alias: canonical for canonical, aliases in workload_names().items() if canonical in held for alias in aliases}
        by_alias.update({canonical: canonical for canonical in held})
        close = _suggestion(wanted, sorted(by_alias))
        suggested = sorted({by_alias[name] for name in close.removeprefix(": did you mean ").removesuffix("?").split(" or ")} if close else set())
        said = f": did you mean {' or '.join(suggested)}?" if suggested else ""
        raise PlanError(f"no workload {benchmark!r} in the warehouse{said}; it holds: {_held(efficiency, presence)}")
    canonical = named[0]
    if efficiency.filter(pl.col("benchmark_canonical") == canonical).height == 0:
        label = canonical_benchmark(canonical).label
        rows = presence.filter(pl.col("benchmark_canonical") == canonical) if presence is not None else None
        if rows is not None and rows.height:
            raise PlanError(_unscored(label, rows))
        raise PlanError(f"no {label} in the warehouse; it holds: {_held(efficiency, presence)}")
    return canonical


def select(efficiency: pl.DataFrame, benchmark: str, accelerator: str | None = None, round_name: str = "best",
           among: list[str] | None = None, presence: pl.DataFrame | None = None) -> Selection:
    """The rows a plan is made from. `benchmark`: a workload by its canonical name, its model's name or a folder
    (resolve_workload); `accelerator`: a comparable group (H100-SXM), or a family (H100) when it has one group; default
    the newest generation measured well enough to fit (default_group), chosen before the round. `round_name`: a round, `latest` (the newest that has it) or `best` (the one
    that measured it best: best_measured_round); `among`: the rounds `best` chooses from (default: every round);
    `presence`: the workload_presence query, to say a workload is held but not scored."""
    if efficiency.height == 0:
        raise PlanError("the warehouse holds no analysed round: run `mlperf-scaling run` first")
    canonical = resolve_workload(efficiency, benchmark, round_name, presence)
    label = canonical_benchmark(canonical).label
    benchmark = label  # how the messages below name it
    rows = efficiency.filter(pl.col("benchmark_canonical") == canonical)
    rows = rows.filter(~pl.col("accelerator_group").str.starts_with("unknown"))
    if accelerator is not None:
        measured_on = sorted(set(rows["accelerator_group"].to_list()))
        wanted_group = normal_name(accelerator)
        exact = rows.filter(_normal_eq("accelerator_group", wanted_group))
        rows = exact if exact.height else rows.filter(_normal_eq("accelerator_family", wanted_group))
        if rows.height == 0:
            near = difflib.get_close_matches(wanted_group, [normal_name(g) for g in measured_on], n=1, cutoff=0.6)
            meant = next((f"did you mean {g}? " for g in measured_on if near and normal_name(g) == near[0]), "")
            raise PlanError(f"no {benchmark} result on {accelerator!r} in any round; {meant}measured on: {', '.join(measured_on)}")
    if among:
        wanted_rounds = {normal_round(r) for r in among}
        having = set(efficiency.filter(pl.col("benchmark_canonical") == canonical)["round"].to_list())
        if lacking := sorted(wanted_rounds - having, key=round_order):  # every round asked for is one the answer can stand on
            raise PlanError(f"no {benchmark} in {', '.join(lacking)}; rounds that have it: {', '.join(sorted(having, key=round_order))}")
        held = sorted(set(rows["round"].to_list()), key=round_order)
        rows = rows.filter(pl.col("round").is_in(wanted_rounds))
        if rows.height == 0:
            raise PlanError(f"no {benchmark}{' on ' + accelerator if accelerator else ''} in {', '.join(sorted(wanted_rounds, key=round_order))}; "
                            f"rounds that have it: {', '.join(held)}")
    why_group = None
    if accelerator is None:
        # the group first, then its round: the newest generation measured well enough to fit, not the old one measured most
        in_scope = rows
        if round_name not in (BEST, "latest"):
            with_round = _normal_round_or_none(round_name)
            in_scope = rows.filter(pl.col("round") == with_round) if with_round is not None else rows.clear()
        if in_scope.height:
            default, why_group = default_group(in_scope)
            rows = rows.filter(pl.col("accelerator_group") == default)
    rounds = sorted(set(rows["round"].to_list()), key=round_order)
    if round_name not in (BEST, "latest"):
        try:
            round_name = normal_round(round_name)
        except ValueError as exc:
            raise PlanError(str(exc)) from None
        if round_name not in rounds:
            there = (presence.filter((pl.col("benchmark_canonical") == canonical) & (pl.col("round") == round_name))
                     if presence is not None and accelerator is None else None)
            if there is not None and there.height:
                raise PlanError(f"{_unscored(label, there, round_name)}; rounds with one: {', '.join(rounds)}")
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
        why = (f"the round that measured it best{' of ' + ', '.join(rounds) if among else ''}: {counts} accelerator "
               f"count{'s' if counts != 1 else ''}")
        if chosen_round != rounds[-1]:
            why += f"; the newest with it is {rounds[-1]} (--round {rounds[-1]})"
    name = benchmark_name(folder, chosen_round)
    return Selection(chosen_round, folder, name.workload, str(group), chosen, others, why, why_group, canonical, name.label)


def _normal_round_or_none(round_name: str) -> str | None:
    try:
        return normal_round(round_name)
    except ValueError:
        return None  # said below, where the round is resolved


def generation_of(family: str | None, form_factor: str | None) -> tuple[str | None, int | None]:
    """(architecture, the year its first part came out) of an accelerator, from the datasheets: the generation a group
    belongs to (an H200 is a Hopper of 2022, as the H100). (None, None) where no datasheet row or year says."""
    spec = accelerator_spec(family, form_factor, None)
    if spec is None or not spec.architecture:
        return None, None
    years = [s.year for s in accelerator_specs() if s.architecture == spec.architecture and s.year is not None]
    return spec.architecture, min(years) if years else None


def default_group(rows: pl.DataFrame) -> tuple[str, str]:
    """The group a plan answers for when the user names none, with why in words: the newest accelerator generation
    measured at MIN_DISTINCT_COUNTS counts or more in one round (enough to fit a model), then the most counts, the most
    systems, the newest round; where no group has that many, the group with the most counts. The why names the group
    with the most counts where it is another."""
    ranked = []
    for (group, round_name), at in rows.group_by("accelerator_group", "round"):
        row = at.row(0, named=True)
        architecture, year = generation_of(row["accelerator_family"], row["accelerator_form_factor"])
        kept, _ = apart_series(at)  # the counts a fit is made of: a series apart from the rest is left out of it
        ranked.append({"accelerator_group": group, "round": round_name, "counts": at["accelerators"].n_unique(), "n": at.height,
                       "fitted_counts": kept["accelerators"].n_unique(), "architecture": architecture, "year": year,
                       "order": round_order(str(round_name))})
    most = max(ranked, key=lambda r: (r["counts"], r["n"], r["order"], r["accelerator_group"]))
    fitted = [r for r in ranked if r["fitted_counts"] >= MIN_DISTINCT_COUNTS]
    most_text = f"{most['accelerator_group']}, {most['counts']} in {most['round']} (--accelerator {most['accelerator_group']})"
    if not fitted:
        return (str(most["accelerator_group"]), f"the group with the most accelerator counts, {most['counts']} in {most['round']}: none was "
                f"measured at the {MIN_DISTINCT_COUNTS} a fit needs")
    chosen = max(fitted, key=lambda r: (r["year"] if r["year"] is not None else -1, r["counts"], r["n"], r["order"], r["accelerator_group"]))
    generation = (f"{chosen['architecture']}, {chosen['year']}" if chosen["year"] is not None
                  else chosen["architecture"] or "no datasheet year")
    said = (f"the newest accelerator generation measured at {MIN_DISTINCT_COUNTS} counts or more, enough to fit ({generation}: "
            f"{chosen['counts']} counts in {chosen['round']})")
    if most["accelerator_group"] != chosen["accelerator_group"]:
        said += f"; the most counts: {most_text}"
    return str(chosen["accelerator_group"]), said


BEST = "best"  # the default round: the one that measured the group best


def best_measured_round(rows: pl.DataFrame) -> str:
    """The round that measured a benchmark best: the most distinct accelerator counts in one comparable group (what a
    fit needs), then the most systems, then the newest. The newest round alone may know two counts where an older one
    knew eight (v5.1 and v4.1 Llama 2 LoRA on H100-SXM)."""
    ranked = (rows.group_by("round", "accelerator_group")
              .agg(pl.col("accelerators").n_unique().alias("counts"), pl.len().alias("n"))
              .with_columns(pl.col("round").map_elements(lambda r: round_order(r), return_dtype=pl.Int64).alias("order"))
              .sort(["counts", "n", "order"], descending=True))
    return str(ranked["round"][0])


def _normal_eq(column: str, wanted: str) -> pl.Expr:
    return pl.col(column).fill_null("").map_elements(normal_name, return_dtype=pl.String).eq(wanted)


@dataclass(frozen=True)
class Plan:
    selection: Selection
    planner: Planner
    recommendation: Recommendation
    steps: list[Step]  # each measured count, the doublings past the largest (predicted) and the count recommended
    backtest: dict[str, BacktestSummary] = field(default_factory=dict)  # per model, over the group's counts left out
    prediction: Step | None = None  # at the count the user named
    other_prediction: Step | None = None  # the same count by the two-part model, where it can be made
    coverage: dict[str, tuple[int, int]] = field(default_factory=dict)  # per model, over every backtest the warehouse holds

    @property
    def fit_note(self) -> str | None:
        """Why nothing is predicted, or None."""
        counts = len(self.planner.counts)
        return None if self.planner.model is not None else (
            f"{counts} distinct accelerator count{'s' if counts != 1 else ''} measured: at least 3 are needed to predict other counts")


def make_plan(selection: Selection, threshold: float = 0.5, deadline_min: float | None = None,
              max_accelerators: int | None = None, accelerators: int | None = None, global_batch: float | None = None,
              coverage: dict[str, tuple[int, int]] | None = None, calibration: Calibration | None = None) -> Plan:
    """The recommendation for the selected group, its measured and predicted counts, its backtest and, with
    `accelerators`, the answer at that count; `coverage`: the warehouse's backtest coverage per model, to print;
    `calibration`: the intervals' (load_calibration().with_backtest of the warehouse's backtest, which sets their level)."""
    ruleset = ruleset_name(selection.round)
    tested = (pl.DataFrame(backtest_group(selection.rows, ruleset, selection.benchmark, selection.round, calibration))
              if selection.rows.height else pl.DataFrame())
    p = planner(selection.rows, selection.accelerator_group, ruleset, selection.benchmark, selection.round, tested, calibration)
    recommendation = recommend(p, threshold, deadline_min, max_accelerators)
    counts = list(p.counts)
    if p.model is not None:
        counts += [p.counts[-1] * 2**k for k in range(1, CURVE_DOUBLINGS + 1)]
    if recommendation.accelerators not in counts:  # a count the deadline or the budget chose between or below the others
        counts = sorted([*counts, recommendation.accelerators])
    steps = [s for s in (p.step(c) for c in counts if max_accelerators is None or c <= max_accelerators) if s is not None]
    prediction = other = None
    if accelerators is not None:
        prediction, other = predict_at(selection, p, accelerators, global_batch)
    return Plan(selection, p, recommendation, steps, backtest_summary(tested) if tested.height else {}, prediction, other, coverage or {})


def predict_at(selection: Selection, p: Planner, accelerators: int, global_batch: float | None) -> tuple[Step, Step | None]:
    """The answer at a count: the measurement where it was measured, else the Amdahl model's prediction; beside it the
    two-part model's where the count was not measured. With `global_batch`, the two-part model's prediction for that
    batch alone (the only model that knows batches). PlanError when nothing can be said."""
    kept, _ = apart_series(selection.rows)
    two_part = group_model(kept, TWO_PART, ruleset_name(selection.round), selection.benchmark, selection.round,
                           None if p.model is None else p.model.calibration)
    if global_batch is not None and two_part is None:
        raise PlanError(f"--global-batch needs the samples and batch sizes of the group's logs (and 3 counts or more), which "
                        f"{selection.round} {selection.benchmark} on {selection.accelerator_group} does not have")

    def by_two_part() -> Step:
        assert two_part is not None
        return p.predicted_step(two_part.predict(float(accelerators), global_batch))

    if global_batch is not None:
        return by_two_part(), None
    found = p.step(accelerators)
    if found is None:
        raise PlanError(f"{len(p.counts)} accelerator count(s) measured for {selection.accelerator_group}: too few to predict "
                        f"{accelerators:,} (at least 3)")
    other = by_two_part() if two_part is not None and found.basis == PREDICTED else None
    return found, other
