"""The MLPerf pace of a language model that is not a benchmark: the utilisation it can expect on an accelerator at a
count, from the language-model benchmarks measured on the same accelerator.

The pace has two parts (tasks/planning/overhead.py): the utilisation while computing, u_c, and the overhead every
optimiser step pays, tau(N). u_c is what transfers between models: a weighted geometric mean of the measured
benchmarks' u_c on that accelerator, each benchmark (all its scores, every round and count) weighted by how close its
size is: exp(-ln(P / P_b)^2 / 2) (one e-fold of parameters). It does not extrapolate a trend in size: with four
benchmarks, leaving one out made any fitted slope miss by more than the weighted average did. The overhead is the
accelerator generation's, and it is what makes the count matter: at N accelerators and a global batch of B tokens a
step's compute on each is W = FLOPs per token x B / N at the peak, and the utilisation is 1 / (1 / u_c + tau(N) / W).
So accelerator-hours grow with the count, and time never falls below steps x tau(N).

A precision not measured on the accelerator is planned from the one that was, its utilisation carried over by a
factor learnt from runs measured at both (tasks/planning/precision.py), whose spread is added to the interval. An
accelerator with a datasheet but no language model measured is planned from every accelerator measured (`pooled`).
Only what cannot be stated is refused: an accelerator without a datasheet, a precision its datasheet lacks.

How far a request lies from the evidence is said and widens the interval: its size, sequence length and kind (dense
or mixture of experts) as a factor `reach` (tasks/planning/reach.py), and its count beyond the largest measured on its
generation (`count_beyond`), each widened by what its backtest learnt (tasks/planning/pace_backtest.py,
tasks/planning/scale_backtest.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy.stats import norm

from mlperf_scaling.reference.lookup import AcceleratorSpec
from mlperf_scaling.tasks.planning.batch import pipeline_efficiency
from mlperf_scaling.tasks.planning.calibration import LEVEL
from mlperf_scaling.tasks.planning.datasheets import datasheet_groups, datasheet_of
from mlperf_scaling.tasks.planning.overhead import StepOverhead, fit_step_overhead, utilisation, with_compute_utilisation
from mlperf_scaling.tasks.planning.precision import BITS, PrecisionChange, PrecisionChanges, learn_precision_changes
from mlperf_scaling.tasks.planning.reach import beyond, distance_words
from mlperf_scaling.tasks.planning.work import LORA, PRECISION_COLUMN, PRETRAINING, Request, flops_per_token, human_count, size_weights

KIND_REACH = math.e  # a mixture of experts planned from dense models (or the reverse) is as far as a model e times larger
# Beyond the farthest reach the backtest saw, the log bounds widen by 1 + ln(reach / that), to at most twice: the
# backtest's errors did not grow with the reach (a guard, not a measurement), and without a bound a 100M model on an
# accelerator whose only language model is a 70B one was given an interval x24 wide
REACH_SCALE_MAX = 2.0
Z = float(norm.ppf(1 - (1 - LEVEL) / 2))  # a spread in sigmas at the stated level


@dataclass(frozen=True)
class Learnt:
    """What the pace learns from a set of evidence: the evidence with each score's utilisation while computing
    (`mfu_compute`), the step overhead, the changes between precisions, and between LoRA fine-tuning and pretraining."""

    evidence: pl.DataFrame
    overhead: StepOverhead
    changes: PrecisionChanges
    training_change: PrecisionChange | None  # LoRA fine-tuning to pretraining; None where no accelerator measured both


def learn(evidence: pl.DataFrame, production: pl.DataFrame | None = None) -> Learnt:
    """The pace's parts from the language-model evidence (and the public runs trained at two precisions, where given)."""
    overhead = fit_step_overhead(evidence)
    compute = with_compute_utilisation(evidence, overhead)
    return Learnt(compute, overhead, learn_precision_changes(compute, production), learn_training_change(compute))


def learn_training_change(compute: pl.DataFrame) -> PrecisionChange | None:
    """How much busier a pretraining keeps an accelerator than a LoRA fine-tuning of frozen weights does: per accelerator
    and precision measured at both, the ratio of their geometric mean utilisations while computing; their mean and
    spread in logarithms (a spread of half the one case where there is one)."""
    per = (compute.group_by("accelerator_group", "precision", "training").agg(pl.col("mfu_compute").log().mean().alias("log_mfu"))
           .pivot(on="training", index=["accelerator_group", "precision"], values="log_mfu"))
    if LORA not in per.columns or PRETRAINING not in per.columns:
        return None
    ratios = per.filter(pl.col(LORA).is_not_null() & pl.col(PRETRAINING).is_not_null()).select(pl.col(PRETRAINING) - pl.col(LORA))
    values = ratios.to_series().to_numpy()
    if len(values) == 0:
        return None
    spread = float(np.std(values, ddof=1)) if len(values) > 1 else abs(float(values[0])) / 2
    return PrecisionChange(LORA, PRETRAINING, math.exp(float(values.mean())), max(spread, 0.05),
                           f"{len(values)} accelerator(s) and precision(s) measured at both")


@dataclass(frozen=True)
class Cell:
    """One benchmark's measurements on the accelerator, as the prediction leans on them."""

    benchmark: str
    active_parameters: float
    seq_len: float
    scores: int
    rounds: str
    accelerators_low: int
    accelerators_high: int
    mfu_compute: float  # the geometric mean of its scores' utilisation while computing
    weight: float  # its share of the prediction


@dataclass(frozen=True)
class CountBounds:
    """The count's part of the interval: log bounds per unit of ln(N / the largest count measured), learnt by hiding the
    largest counts (scale_backtest)."""

    z_low: float
    z_high: float
    cases: int


@dataclass(frozen=True)
class Calibrated:
    """The stated interval's log bounds, and the farthest reach its backtest saw: within it the errors did not grow with
    the distance, so only a request beyond it is widened."""

    low: float
    high: float
    reach_seen: float


@dataclass(frozen=True)
class Pace:
    """The utilisation predicted for a request, from the cells it leans on; `refused` names what cannot be stated."""

    request: Request
    precision: str | None = None  # the datasheet column planned at
    precision_assumed: bool = False  # the request named no precision: 16 bits, the usual one
    peak_tflops: float | None = None
    mfu_compute: float | None = None  # while computing: the step's overhead comes on top, at a count
    cells: list[Cell] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    pooled: bool = False  # no language model measured on the accelerator: its generation's, or every accelerator's, pooled
    change: PrecisionChange | None = None  # the precision asked for was not measured: carried from the one that was
    reach: float = 1.0  # how far beyond the evidence in size, sequence length and kind, as a factor (1 within)
    far: list[str] = field(default_factory=list)  # what lies beyond it, said
    architecture: str | None = None
    overhead: StepOverhead | None = None
    largest_measured: int | None = None  # the largest count measured on the generation (on any, where pooled)
    training_change: PrecisionChange | None = None  # the other kind of training measured, not the request's: carried
    memory_gb: float | None = None  # one accelerator's, from its datasheet: the model-parallel degree that holds the model
    n_scores: int = 0  # the MLPerf scores the pace rests on
    n_precision_assumed: int = 0  # of them, those whose precision no log, config or statement gives: assumed
    peak_single_source: bool = False  # the peak planned against rests on one unverified source (accelerator_specs.tsv)

    def step_compute_s(self, batch_tokens: float, accelerators: int) -> float:
        """One step's FLOPs on one accelerator, at the peak, in seconds."""
        assert self.peak_tflops is not None
        r = self.request
        return flops_per_token(r.active_parameters, r.seq_len, r.lora) * batch_tokens / accelerators / (self.peak_tflops * 1e12)

    def overhead_s(self, accelerators: int) -> float:
        return self.overhead.seconds(self.architecture, accelerators) if self.overhead is not None else 0.0

    def pipeline(self, accelerators: int, batch_tokens: float) -> float:
        """The share of a step its pipeline computes at a count and batch."""
        r = self.request
        return pipeline_efficiency(r.active_parameters, r.lora, self.memory_gb, r.seq_len, batch_tokens, accelerators)

    def mfu_at(self, accelerators: int, batch_tokens: float) -> float:
        """The utilisation of whole steps at a count and batch, attention counted."""
        assert self.mfu_compute is not None
        return utilisation(self.mfu_compute, self.step_compute_s(batch_tokens, accelerators), self.overhead_s(accelerators),
                           self.pipeline(accelerators, batch_tokens))

    def count_beyond(self, accelerators: int) -> float:
        """How far a count lies beyond the largest measured on the generation (1 within or below)."""
        return max(accelerators / self.largest_measured, 1.0) if self.largest_measured else 1.0

    def count_words(self, accelerators: int) -> str | None:
        d = self.count_beyond(accelerators)
        if d <= 1:
            return None
        where = f"on {self.architecture}" if not self.pooled else "on any accelerator"
        return distance_words(d, f"{accelerators:,} accelerators", f"the largest count measured {where} ({self.largest_measured:,})")

    def reach_scale(self, bounds: Calibrated) -> float:
        """How many times as wide the calibrated log bounds are for this reach: 1 within the backtest's farthest case."""
        return min(1.0 + math.log(max(self.reach / bounds.reach_seen, 1.0)), REACH_SCALE_MAX)

    def widened(self, bounds: Calibrated, count: CountBounds | None = None, accelerators: int | None = None) -> tuple[float, float]:
        """A log interval's bounds, widened where the request lies farther from the evidence than any backtested case did,
        by a precision change's spread, and by a count beyond the largest measured."""
        scale = self.reach_scale(bounds)
        low, high = bounds.low * scale, bounds.high * scale
        extras = []
        for change in (self.change, self.training_change):
            if change is not None and change.log_sd > 0:
                extras.append((Z * change.log_sd, Z * change.log_sd))
        if count is not None and accelerators is not None and (d := self.count_beyond(accelerators)) > 1:
            extras.append((max(-count.z_low, 0.0) * math.log(d), max(count.z_high, 0.0) * math.log(d)))
        for down, up in extras:
            low, high = -math.hypot(min(low, 0.0), down), math.hypot(max(high, 0.0), up)
        return low, high


def _nearest_measured(target: str, measured: list[str]) -> str:
    """The measured precision closest in bits to the one asked for; between two as close, the wider."""
    return min(measured, key=lambda p: (abs(math.log2(BITS[p] / BITS[target])), -BITS[p]))


def _peak_or(spec: AcceleratorSpec, column: str) -> float:
    """A datasheet peak; the class's other column where the chip lists only one (int8 for fp8 on a TPU)."""
    twins = {"fp8": "int8", "int8": "fp8", "bf16": "fp16", "fp16": "bf16"}
    return spec.peak_tflops.get(column) or spec.peak_tflops[twins[column]]


def pace(learnt: Learnt, request: Request) -> Pace:
    """The utilisation a request can expect on its accelerator, how far it lies from the evidence, or what cannot be
    stated. `learnt.evidence` carries `mfu_compute` (learn())."""
    evidence, changes = learnt.evidence, learnt.changes
    group = request.accelerator_group
    spec = datasheet_of(request)
    if spec is None:
        return Pace(request, refused=[f"no datasheet for {group} (reference/accelerator_specs.tsv lists: {', '.join(datasheet_groups())})"])
    if evidence.is_empty():
        return Pace(request, refused=["no language model with a known utilisation in the warehouse: run `mlperf-scaling run` first"])
    on = evidence.filter(pl.col("accelerator_group") == group)
    pooled = on.is_empty()
    far: list[str] = []
    rows = on
    if pooled:
        # its generation's accelerators where one was measured (a GH200 is an H100's chip), else every accelerator
        kin = evidence.filter(pl.col("architecture") == spec.architecture)
        rows, whose = (kin, f"its generation's, {spec.architecture}") if not kin.is_empty() else (evidence, "every accelerator measured")
        far.append(f"no language model measured on {group}: planned from {whose} ({', '.join(sorted(rows['accelerator_group'].unique().to_list()))})")
    measured = sorted(p for p in rows["precision"].drop_nulls().unique().to_list() if p in BITS)
    # a request that names no precision is planned at 16 bits, as most public production runs train (the benchmark
    # submissions' FP8 and FP4 are a choice the request makes with --precision)
    assumed = request.precision is None
    target = PRECISION_COLUMN[request.precision] if request.precision is not None else ("bf16" if "bf16" in spec.peak_tflops else "fp16")
    peak = spec.peak_tflops.get(target)
    if peak is None:
        return Pace(request, target, refused=[f"{spec.family}'s datasheet lists no {target} peak (it lists {', '.join(sorted(spec.peak_tflops))})"])
    change = None
    if pooled:
        # every accelerator's scores, each carried to the precision asked for: the most evidence there is
        at, change = carried_to(rows, target, spec, changes)
    else:
        # the precisions measured on the request's kind of training first: H100's one BF16 LoRA (Juniper's Hugging Face
        # and DeepSpeed) is no better evidence for a BF16 pretraining than its FP8 pretrainings carried to BF16
        kind_measured = sorted(p for p in rows.filter(pl.col("training") == (LORA if request.lora else PRETRAINING))["precision"]
                               .drop_nulls().unique().to_list() if p in BITS)
        pool = kind_measured or measured
        source = target if target in pool else _nearest_measured(target, pool)
        if source != target:
            change = changes.between(source, target, {source: _peak_or(spec, source), target: peak})
        at = rows.filter(pl.col("precision") == source)
    same_kind, reach, kind_change = _same_kind(at, request, far, learnt.training_change)
    sizes, seqs = same_kind["active_parameters"].to_numpy(), same_kind["seq_len"].to_numpy()
    for what, value, low, high in (("active parameters", request.active_parameters, sizes.min(), sizes.max()),
                                   ("sequence length", request.seq_len, seqs.min(), seqs.max())):
        ratio = beyond(value, low, high)
        if ratio > 1:
            span = human_count(low) if low == high else f"{human_count(low)} to {human_count(high)}"
            far.append(distance_words(ratio, f"{what} {human_count(value)}", f"those measured ({span})"))
        reach = max(reach, ratio)
    cells = _cells(same_kind, request.active_parameters)
    carried = change.factor if change is not None and not pooled else 1.0  # pooled scores were carried one by one
    mfu = min(math.exp(sum(c.weight * math.log(c.mfu_compute) for c in cells)) * carried, 1.0)  # the kind's change is in the cells
    generation = rows if pooled else evidence.filter(pl.col("architecture") == spec.architecture)
    return Pace(request, target, assumed, peak, mfu, cells, [], pooled, change, reach, far, spec.architecture, learnt.overhead,
                int(generation["accelerators"].max()), kind_change, spec.memory_gb,  # type: ignore[arg-type]
                same_kind.height, int(same_kind["precision_assumed"].sum()), spec.peak_from_single_source(target))


def _same_kind(rows: pl.DataFrame, request: Request, far: list[str], training_change: PrecisionChange | None
               ) -> tuple[pl.DataFrame, float, PrecisionChange | None]:
    """The scores of the request's kind: a pretraining (or LoRA fine-tuning), dense (or a mixture of experts). LoRA's
    frozen weights keep an accelerator less busy than a pretraining does (MLPerf's Llama 2 70B LoRA computes at about
    half the utilisation of its pretrainings on the same accelerators): where the accelerator measured only the other
    kind of training, its scores are carried by the change learnt where both were measured (its spread widens the
    interval). Where it measured no mixture of experts (or no dense model), the other, at a reach of KIND_REACH."""
    training = LORA if request.lora else PRETRAINING
    reach, applied = 1.0, None
    chosen = rows.filter(pl.col("training") == training)
    if chosen.is_empty():
        chosen = rows
        if training_change is not None:
            applied = training_change if training == PRETRAINING else PrecisionChange(
                PRETRAINING, LORA, 1 / training_change.factor, training_change.log_sd, training_change.basis)
            chosen = rows.with_columns(pl.col("mfu_compute") * applied.factor)  # said as the change it is, not as a reach
        else:
            far.append(f"no {training} measured on it: planned from the other kind")
            reach *= KIND_REACH
    kind = chosen.filter(pl.col("moe") == request.moe)
    if kind.is_empty():
        far.append(f"no {'mixture-of-experts' if request.moe else 'dense'} language model measured on it: planned from the other kind")
        reach *= KIND_REACH
    else:
        chosen = kind
    return chosen, reach, applied


def carried_to(rows: pl.DataFrame, target: str, spec: AcceleratorSpec, changes: PrecisionChanges) -> tuple[pl.DataFrame, PrecisionChange | None]:
    """Scores measured at several precisions, their utilisation carried to `target`; the change of the most common
    source precision, to say (its spread is the widest of those applied)."""
    counts = rows.filter(pl.col("precision").is_in(list(BITS)))["precision"].value_counts()
    applied: list[tuple[int, PrecisionChange]] = []
    factors = {}
    for source, n in zip(counts["precision"].to_list(), counts["count"].to_list(), strict=True):
        if BITS[source] == BITS[target]:
            factors[source] = 1.0
            continue
        # a score measured at a precision the target chip lacks: that class of bits at the usual rate (half the bits, twice the FLOP/s)
        peaks = {source: spec.peak_tflops.get(source) or spec.peak_tflops[target] * BITS[target] / BITS[source], target: spec.peak_tflops[target]}
        change = changes.between(source, target, peaks)
        factors[source] = change.factor
        applied.append((n, change))
    carried = rows.filter(pl.col("precision").is_in(list(factors))).with_columns(
        pl.col("mfu_compute") * pl.col("precision").replace_strict(factors, return_dtype=pl.Float64))
    if not applied:
        return carried, None
    _, common = max(applied, key=lambda item: item[0])
    widest = max(change.log_sd for _, change in applied)
    return carried, PrecisionChange(common.source, target, common.factor, widest,
                                    common.basis + ("; the other precisions carried likewise" if len(applied) > 1 else ""))


def _cells(rows: pl.DataFrame, active_parameters: float) -> list[Cell]:
    per = rows.group_by("benchmark").agg(
        pl.col("active_parameters").first(), pl.col("seq_len").first(), pl.len().alias("scores"),
        pl.col("round").unique().sort().str.join(", ").alias("rounds"),
        pl.col("accelerators").min().alias("low"), pl.col("accelerators").max().alias("high"),
        pl.col("mfu_compute").log().mean().exp().alias("mfu"),
    ).sort("benchmark")
    weights = size_weights(per["active_parameters"].to_numpy(), active_parameters)
    weights = weights / weights.sum()
    return [Cell(r["benchmark"], r["active_parameters"], r["seq_len"], r["scores"], r["rounds"], r["low"], r["high"], r["mfu"], float(w))
            for r, w in zip(per.iter_rows(named=True), weights, strict=True)]


def leaned_on_text(cells: list[Cell]) -> str:
    return "; ".join(f"{c.benchmark} weight {c.weight * 100:.0f} % ({c.scores} score{'s' if c.scores != 1 else ''}, {c.rounds}, "
                     f"{c.accelerators_low:,}-{c.accelerators_high:,} accelerators, MFU while computing {c.mfu_compute:.3f})"
                     for c in sorted(cells, key=lambda c: -c.weight))
