"""Planning a language model that is not a benchmark, from the language-model benchmarks measured on the same
accelerator, with an interval learnt by leaving whole benchmarks out.

The quantity transferred is model FLOPs utilisation with attention counted (`mfu_with_attention`): the model's
training FLOPs per token, 6 x active parameters for pretraining (4 x for LoRA, whose frozen weights get no gradient)
plus attention, 12 x layers x d_model x sequence length (PaLM, appendix B), over time x accelerators x the datasheet's
peak at the precision the runs used. A user gives parameters, not layers, so d_model comes from the parameters at the
measured models' aspect ratio (d_model / layers about 128: GPT-3 175B 12288 / 96, Llama 3.1 8B 4096 / 32, 405B
16384 / 126), which puts attention at sequence length / (6 d_model) of the dense FLOPs: 4 % for GPT-3 at 2,048
tokens, 32 % for Llama 3.1 8B at 8,192. Counting it is what lets utilisation transfer between sequence lengths.

The prediction for a model of P active parameters on an accelerator is a weighted geometric mean of the measured
benchmarks' utilisation on that accelerator, each benchmark (all its scores, every round and count) weighted by how
close its size is: exp(-ln(P / P_b)^2 / 2) (one e-fold of parameters). It does not extrapolate a trend in size or in
accelerator count: with four benchmarks, leaving one out made any fitted slope miss by more than the flat average did
(the backtest below). Within a benchmark MLPerf's larger systems train the same tokens at a smaller batch per
accelerator (strong scaling), which is not what a model trained on 10^12 tokens does; so utilisation is taken as
independent of N, and a count beyond the measured ones widens the interval (below).

The interval: every language-model benchmark is left out in turn and its scores predicted from the others
(`transfer_backtest`). The log ratios ln(measured / predicted utilisation), each benchmark weighing the same, give
the 5 % and 95 % quantiles that make the 90 % interval. In the backtest itself a benchmark's interval is learnt from
the others' backtests without it (nested), so the coverage it records is out of sample.

Beyond the evidence the answer widens instead of refusing. How far a request lies from what was measured on its
accelerator (its size, its sequence length, its count, a mixture of experts predicted from dense models) is a factor
`reach` (1 within), and the backtest records each case's. On the shipped rounds the errors did not grow with it: the
cases more than five times beyond the evidence (a held-out benchmark's size or counts against the others') erred a
third as much as the ones within. So the interval is the backtest's within the farthest reach it saw, and only beyond
that are its log bounds multiplied by 1 + ln(reach / the farthest seen), as the benchmark planner's are beyond its
measured counts (tasks/metrics/calibration.py). A precision not measured on the accelerator is planned from the one that was, its utilisation
carried over by a factor learnt from runs measured at both (tasks/metrics/precision_change.py), whose spread is added
to the interval. An accelerator with a datasheet but no language model measured is planned from every accelerator
measured (`pooled`), with the interval a second backtest learns by leaving each accelerator out in turn. Only what
cannot be stated is refused: an accelerator without a datasheet, a precision its datasheet lacks, weights and optimiser
state that do not fit in the accelerators' memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl
from scipy.stats import norm

from mlperf_scaling.reference.lookup import AcceleratorSpec, accelerator_spec, accelerator_specs, benchmark_work, classify_accelerator
from mlperf_scaling.tasks.metrics.accelerators import group_name
from mlperf_scaling.tasks.metrics.calibration import LEVEL  # one stated interval for every answer
from mlperf_scaling.tasks.metrics.precision_change import BITS, PrecisionChange, PrecisionChanges, learn_precision_changes

ASPECT_RATIO = 128.0  # d_model / layers of the measured models
SIZE_BANDWIDTH = 1.0  # in ln(active parameters): a benchmark e times larger or smaller weighs exp(-1/2)
KIND_REACH = math.e  # a mixture of experts planned from dense models (or the reverse) is as far as a model e times larger
BYTES_PER_PARAMETER = 16  # mixed-precision Adam: 16-bit weights and gradients, 32-bit master weights and two moments
LORA, LORA_BYTES_PER_PARAMETER = "LoRA fine-tuning", 2  # frozen 16-bit weights; the adapters' state is negligible
USABLE_MEMORY = 0.9  # of the datasheet's memory, the rest left to activations, buffers and the runtime
_Z = float(norm.ppf(1 - (1 - LEVEL) / 2))  # a spread in sigmas at the stated level
# the precisions a request may name -> the datasheet's columns
PRECISION_COLUMN = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp8": "fp8", "int8": "int8", "fp6": "fp6",
                    "mxfp6": "fp6", "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4"}

_EVIDENCE_COLUMNS = ["benchmark", "round", "submitter", "system", "accelerator_family", "accelerator_group", "accelerators", "parameters", "active_parameters",
                     "seq_len", "training", "moe", "precision", "precision_assumed", "peak_tflops", "accelerator_memory_gb", "time_to_train_min",
                     "model_flops_with_attention", "mfu_with_attention", "w_per_accelerator"]


def human_count(value: float) -> str:
    """70e9 as 70B, 1e12 as 1T, 8192 as 8.19K: parameters, tokens and lengths as people say them."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def d_model(active_parameters: float) -> float:
    """The hidden size of a transformer of this many (active) parameters at the measured aspect ratio (12 L d^2 = P)."""
    return (ASPECT_RATIO * active_parameters / 12.0) ** (1.0 / 3.0)


def attention_share(active_parameters: float, seq_len: float) -> float:
    """Attention's FLOPs over the dense layers' (12 L d s over 6 P, with 12 L d^2 = P): s / (6 d)."""
    return seq_len / (6.0 * d_model(active_parameters))


def training_flops(active_parameters: float, tokens: float, seq_len: float) -> float:
    """A pretraining's model FLOPs, attention counted."""
    return 6.0 * active_parameters * tokens * (1.0 + attention_share(active_parameters, seq_len))


def datasheet_of_group(group: str) -> AcceleratorSpec | None:
    """The datasheet row of a comparable group (H100-SXM, TPU v4): its first row with peaks, a row kept for the parts
    whose name says so (H100 NVL) only where the group has no other."""
    rows = [spec for spec in accelerator_specs() if group_name(spec.family, spec.form_factor, spec.family) == group and spec.peak_tflops]
    return next((spec for spec in rows if not spec.name_pattern), rows[0] if rows else None)


def datasheet_of(request: Request) -> AcceleratorSpec | None:
    """The datasheet of the part asked for: the row its published name picks where it names one (A100-SXM4-80GB is the
    80 GB row, H100 NVL its own), else its group's."""
    if request.accelerator_name:
        known = classify_accelerator(request.accelerator_name)
        if known.family is not None and group_name(known.family, known.form_factor, request.accelerator_name) == request.accelerator_group:
            spec = accelerator_spec(known.family, known.form_factor, known.memory_gb, request.accelerator_name)
            if spec is not None and spec.peak_tflops:
                return spec
    return datasheet_of_group(request.accelerator_group)


def datasheet_groups() -> list[str]:
    """Every comparable group with a datasheet that states a peak."""
    return sorted({group_name(spec.family, spec.form_factor, spec.family) for spec in accelerator_specs() if spec.peak_tflops})


def language_model_evidence(context: pl.DataFrame) -> pl.DataFrame:
    """The scores of the language-model benchmarks (reference/benchmark_work.tsv says which, and their sizes) whose
    utilisation is known, one row each, with utilisation recounted with attention."""
    rows = []
    for row in context.filter(pl.col("mfu").is_not_null() & pl.col("model_flops").is_not_null()).iter_rows(named=True):
        work = benchmark_work(row["benchmark_canonical"], row["round"])
        if work is None or work.training is None or not work.active_parameters or not work.tokens_per_sample:
            continue
        share = attention_share(work.active_parameters, work.tokens_per_sample)
        rows.append({
            "benchmark": row["benchmark_canonical"], "round": row["round"], "submitter": row["submitter"], "system": row["system"],
            "accelerator_family": row["accelerator_family"], "accelerator_group": row["accelerator_group"],
            "accelerators": row["accelerators"], "parameters": work.parameters,
            "active_parameters": work.active_parameters, "seq_len": work.tokens_per_sample, "training": work.training,
            "moe": bool(work.parameters and work.parameters > work.active_parameters), "precision": row["peak_precision"],
            "precision_assumed": row["precision_source"] == "assumed",
            "peak_tflops": row["peak_tflops"], "accelerator_memory_gb": row["accelerator_memory_gb"],
            "time_to_train_min": row["time_to_train_min"], "model_flops_with_attention": row["model_flops"] * (1 + share),
            # attention counted the dense way (no causal halving) can pass the peak on a run near it: a utilisation stops at 1
            "mfu_with_attention": min(row["mfu"] * (1 + share), 1.0), "w_per_accelerator": row["w_per_accelerator"],
        })
    schema = {"accelerators": pl.Int64, "parameters": pl.Float64, "active_parameters": pl.Float64, "seq_len": pl.Float64, "moe": pl.Boolean, "precision_assumed": pl.Boolean,
              "peak_tflops": pl.Float64, "accelerator_memory_gb": pl.Float64, "time_to_train_min": pl.Float64,
              "model_flops_with_attention": pl.Float64, "mfu_with_attention": pl.Float64, "w_per_accelerator": pl.Float64}
    return pl.DataFrame(rows, schema={name: schema.get(name, pl.String) for name in _EVIDENCE_COLUMNS})


@dataclass(frozen=True)
class Request:
    """A model to plan: its size, its sequence length, the accelerator; `accelerators` None where not chosen yet."""

    active_parameters: float
    parameters: float
    seq_len: float
    accelerator_group: str
    precision: str | None = None  # None: 16-bit mixed precision, the usual one of production runs
    accelerators: int | None = None
    bytes_per_parameter: float = BYTES_PER_PARAMETER  # 2 for LoRA: frozen 16-bit weights, no optimiser state
    accelerator_name: str | None = None  # the published name asked for, where it names a part of the group (A100-SXM4-80GB)

    @property
    def moe(self) -> bool:
        return self.parameters > self.active_parameters


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
    mfu_with_attention: float  # the geometric mean of its scores
    weight: float  # its share of the prediction


@dataclass(frozen=True)
class Transfer:
    """Utilisation predicted for a request, from the cells it leans on; `refused` names what cannot be stated instead."""

    request: Request
    precision: str | None = None  # the datasheet column planned at
    precision_assumed: bool = False  # the request named no precision: 16 bits, the usual one
    peak_tflops: float | None = None
    mfu_with_attention: float | None = None
    cells: list[Cell] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    pooled: bool = False  # no language model measured on the accelerator: every accelerator measured, pooled
    change: PrecisionChange | None = None  # the precision asked for was not measured: carried from the one that was
    reach: float = 1.0  # how far beyond the evidence, as a factor (1 within)
    far: list[str] = field(default_factory=list)  # what lies beyond it, said

    def widened(self, bounds: Calibrated) -> tuple[float, float]:
        """A log interval's bounds, widened where the request lies farther from the evidence than any backtested case did,
        and by a precision change's spread."""
        scale = 1.0 + math.log(max(self.reach / bounds.reach_seen, 1.0))
        low, high = bounds.low * scale, bounds.high * scale
        if self.change is not None and self.change.log_sd > 0:
            extra = _Z * self.change.log_sd
            low, high = -math.hypot(min(low, 0.0), extra), math.hypot(max(high, 0.0), extra)
        return low, high


def _reach(value: float, low: float, high: float) -> float:
    """How far beyond [low, high] a value lies, as a factor (1 inside)."""
    return max(float(low) / value, value / float(high), 1.0)


def median_memory_gb(rows: pl.DataFrame) -> float | None:
    """The accelerators' memory as their systems describe it; None where none says."""
    memory = rows["accelerator_memory_gb"].drop_nulls().to_numpy()
    return float(np.median(memory)) if len(memory) else None


def _fits_in_memory(request: Request, accelerators: int, memory_gb: float | None) -> str | None:
    if memory_gb is None:
        return None
    needed = request.parameters * request.bytes_per_parameter / 1e9
    held = accelerators * memory_gb * USABLE_MEMORY
    if needed <= held:
        return None
    return (f"{human_count(request.parameters)} parameters need about {needed:,.0f} GB of weights and optimiser state "
            f"({request.bytes_per_parameter:g} bytes each); {accelerators:,} {request.accelerator_group} hold {held:,.0f} GB "
            f"({USABLE_MEMORY:.0%} of {memory_gb:g} GB each): at least {math.ceil(needed / (memory_gb * USABLE_MEMORY)):,} are needed")


def smallest_that_fits(request: Request, memory_gb: float | None) -> int:
    """The fewest accelerators whose memory holds the weights and optimiser state (1 where memory is unknown)."""
    if memory_gb is None:
        return 1
    return max(1, math.ceil(request.parameters * request.bytes_per_parameter / 1e9 / (memory_gb * USABLE_MEMORY)))


def memory_of(request: Request, evidence: pl.DataFrame) -> float | None:
    """The memory of one accelerator: its datasheet's, else as its measured systems describe it."""
    spec = datasheet_of(request)
    if spec is not None and spec.memory_gb is not None:
        return spec.memory_gb
    return median_memory_gb(evidence.filter(pl.col("accelerator_group") == request.accelerator_group))


def _nearest_measured(target: str, measured: list[str]) -> str:
    """The measured precision closest in bits to the one asked for; between two as close, the wider."""
    return min(measured, key=lambda p: (abs(math.log2(BITS[p] / BITS[target])), -BITS[p]))


def transfer(evidence: pl.DataFrame, request: Request, changes: PrecisionChanges | None = None) -> Transfer:
    """The utilisation a request can expect on its accelerator, how far it lies from the evidence, or what cannot be
    stated."""
    group = request.accelerator_group
    spec = datasheet_of(request)
    if spec is None:
        return Transfer(request, refused=[f"no datasheet for {group} (reference/accelerator_specs.tsv lists: {', '.join(datasheet_groups())})"])
    if evidence.is_empty():
        return Transfer(request, refused=["no language model with a known utilisation in the warehouse: run `mlperf-scaling run` first"])
    on = evidence.filter(pl.col("accelerator_group") == group)
    pooled = on.is_empty()
    rows = evidence if pooled else on
    far: list[str] = []
    if pooled:
        far.append(f"no language model measured on {group}: planned from every accelerator measured ({', '.join(sorted(evidence['accelerator_group'].unique().to_list()))})")
    measured = sorted(p for p in rows["precision"].drop_nulls().unique().to_list() if p in BITS)
    # a request that names no precision is planned at 16 bits, as most public production runs train (the benchmark
    # submissions' FP8 and FP4 are a choice the request makes with --precision)
    assumed = request.precision is None
    target = PRECISION_COLUMN[request.precision] if request.precision is not None else ("bf16" if "bf16" in spec.peak_tflops else "fp16")
    peak = spec.peak_tflops.get(target)
    if peak is None:
        return Transfer(request, target, refused=[f"{spec.family}'s datasheet lists no {target} peak (it lists {', '.join(sorted(spec.peak_tflops))})"])
    change = None
    changes = changes or learn_precision_changes(evidence)
    if pooled:
        # every accelerator's scores, each carried to the precision asked for: the most evidence there is
        at, change = carried_to(rows, target, spec, changes)
    else:
        source = target if target in measured else _nearest_measured(target, measured)
        if source != target:
            change = changes.between(source, target, {source: _peak_or(spec, source), target: peak})
        at = rows.filter(pl.col("precision") == source)
    same_kind = at.filter(pl.col("moe") == request.moe)
    reach = 1.0
    if same_kind.is_empty():
        kind = "mixture-of-experts" if request.moe else "dense"
        far.append(f"no {kind} language model measured: planned from the other kind")
        same_kind, reach = at, KIND_REACH
    sizes, seqs = same_kind["active_parameters"].to_numpy(), same_kind["seq_len"].to_numpy()
    for what, value, low, high in (("active parameters", request.active_parameters, sizes.min(), sizes.max()),
                                   ("sequence length", request.seq_len, seqs.min(), seqs.max())):
        beyond = _reach(value, low, high)
        if beyond > 1:
            span = human_count(low) if low == high else f"{human_count(low)} to {human_count(high)}"
            far.append(f"{what} {human_count(value)} is x{beyond:.1f} beyond those measured ({span})")
        reach = max(reach, beyond)
    refused: list[str] = []
    if request.accelerators is not None:
        counts = same_kind["accelerators"].to_numpy()
        beyond = _reach(request.accelerators, counts.min(), counts.max())
        if beyond > 1:
            far.append(f"{request.accelerators:,} accelerators is x{beyond:.1f} beyond the counts measured ({counts.min():,} to {counts.max():,})")
        reach = max(reach, beyond)
        if too_small := _fits_in_memory(request, request.accelerators, memory_of(request, evidence)):
            refused.append(too_small)
    cells = _cells(same_kind, request.active_parameters)
    carried = change.factor if change is not None and not pooled else 1.0  # pooled scores were carried one by one
    mfu = math.exp(sum(c.weight * math.log(c.mfu_with_attention) for c in cells)) * carried
    return Transfer(request, target, assumed, peak, None if refused else mfu, cells, refused, pooled, change, reach, far)


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
        pl.col("mfu_with_attention") * pl.col("precision").replace_strict(factors, return_dtype=pl.Float64))
    if not applied:
        return carried, None
    _, common = max(applied, key=lambda item: item[0])
    widest = max(change.log_sd for _, change in applied)
    return carried, PrecisionChange(common.source, target, common.factor, widest,
                                    common.basis + ("; the other precisions carried likewise" if len(applied) > 1 else ""))


def _peak_or(spec: AcceleratorSpec, column: str) -> float:
    """A datasheet peak; the class's other column where the chip lists only one (int8 for fp8 on a TPU)."""
    twins = {"fp8": "int8", "int8": "fp8", "bf16": "fp16", "fp16": "bf16"}
    return spec.peak_tflops.get(column) or spec.peak_tflops[twins[column]]


def _cells(rows: pl.DataFrame, active_parameters: float) -> list[Cell]:
    per = rows.group_by("benchmark").agg(
        pl.col("active_parameters").first(), pl.col("seq_len").first(), pl.len().alias("scores"),
        pl.col("round").unique().sort().str.join(", ").alias("rounds"),
        pl.col("accelerators").min().alias("low"), pl.col("accelerators").max().alias("high"),
        pl.col("mfu_with_attention").log().mean().exp().alias("mfu"),
    ).sort("benchmark")
    distance = np.log(per["active_parameters"].to_numpy() / active_parameters) / SIZE_BANDWIDTH
    weights = np.exp(-(distance**2) / 2)
    weights = weights / weights.sum()
    return [Cell(r["benchmark"], r["active_parameters"], r["seq_len"], r["scores"], r["rounds"], r["low"], r["high"], r["mfu"], float(w))
            for r, w in zip(per.iter_rows(named=True), weights, strict=True)]


def leaned_on_text(cells: list[Cell]) -> str:
    return "; ".join(f"{c.benchmark} {c.weight * 100:.0f} % ({c.scores} score{'s' if c.scores != 1 else ''}, {c.rounds}, "
                     f"{c.accelerators_low:,}-{c.accelerators_high:,} accelerators, MFU {c.mfu_with_attention:.3f})"
                     for c in sorted(cells, key=lambda c: -c.weight))


def _request_of(row: dict, accelerators: bool = True) -> Request:
    return Request(row["active_parameters"], row["parameters"], row["seq_len"], row["accelerator_group"], row["precision"],
                   row["accelerators"] if accelerators else None, LORA_BYTES_PER_PARAMETER if row["training"] == LORA else BYTES_PER_PARAMETER)


def _weights(benchmarks: pl.Series) -> np.ndarray:
    """Every benchmark (or accelerator) weighs the same, however many scores it has."""
    counts = benchmarks.value_counts()
    per = dict(zip(counts[benchmarks.name], counts["count"], strict=True))
    return np.array([1.0 / per[b] for b in benchmarks])


def interval_bounds(log_ratios: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """The weighted 5 % and 95 % quantiles of ln(measured / predicted utilisation): the stated interval's ends."""
    order = np.argsort(log_ratios)
    ordered, cumulative = log_ratios[order], np.cumsum(weights[order]) / weights.sum()
    tail = (1 - LEVEL) / 2
    last = len(ordered) - 1
    low = ordered[min(int(np.searchsorted(cumulative, tail)), last)]
    high = ordered[min(int(np.searchsorted(cumulative, 1 - tail)), last)]
    return float(low), float(high)


def time_bounds(predicted: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """A predicted time's interval: time goes as 1 / utilisation, so the measured time is predicted x exp(-log ratio),
    and the log ratio's high end is the time's low end."""
    return predicted * math.exp(-bounds[1]), predicted * math.exp(-bounds[0])


@dataclass(frozen=True)
class Calibrated:
    """The stated interval's log bounds, and the farthest reach its backtest saw: within it the errors did not grow with
    the distance (on the shipped rounds the median error of the cases more than five times beyond the evidence was a third
    of the others'), so only a request beyond it is widened."""

    low: float
    high: float
    reach_seen: float


def calibration(backtest: pl.DataFrame, left_out: str = "benchmark") -> Calibrated | None:
    """The interval's ends learnt from a backtest's predicted cases (those of one way of leaving out); None where it has
    none."""
    cases = backtest.filter(pl.col("log_ratio").is_not_null() & (pl.col("left_out") == left_out))
    if cases.is_empty():
        return None
    low, high = interval_bounds(cases["log_ratio"].to_numpy(), _weights(cases["held_out"]))
    return Calibrated(low, high, float(cases["reach"].max()))  # type: ignore[arg-type]


_BACKTEST_SCHEMA = {
    "left_out": pl.String, "held_out": pl.String, "benchmark": pl.String, "round": pl.String, "submitter": pl.String, "system": pl.String, "accelerator_group": pl.String,
    "accelerators": pl.Int64, "active_parameters": pl.Float64, "seq_len": pl.Float64, "precision": pl.String,
    "measured_time_min": pl.Float64, "measured_mfu_with_attention": pl.Float64, "predicted_mfu_with_attention": pl.Float64,
    "log_ratio": pl.Float64, "reach": pl.Float64, "precision_change": pl.String, "predicted_time_min": pl.Float64,
    "predicted_time_min_low": pl.Float64, "predicted_time_min_high": pl.Float64, "leaned_on": pl.String, "refused": pl.String,
}
BENCHMARK, ACCELERATOR = "benchmark", "accelerator"  # what a backtest case leaves out: its benchmark, or its accelerator


def _leave_each_out(evidence: pl.DataFrame, nested: bool, by: str = BENCHMARK, pool: pl.DataFrame | None = None) -> pl.DataFrame:
    """Every score predicted with its benchmark (or its accelerator) left out. Nested: each case's interval learnt without
    its group too: for a held-out benchmark from the other benchmarks' own backtest; for a held-out accelerator from the
    errors of the other accelerators in `pool` (each predicted without itself, as a jackknife: leaving two out at every
    level would cost the main job seconds for the same figures)."""
    column = "benchmark" if by == BENCHMARK else "accelerator_group"
    rows = []
    for held_out in sorted(evidence[column].unique().to_list()):
        others = evidence.filter(pl.col(column) != held_out)
        changes = learn_precision_changes(others)  # the factor between precisions learnt without the held-out group too
        pools: dict[str, pl.DataFrame] = {}  # the fold's calibration pools, made when a case needs one
        for row in evidence.filter(pl.col(column) == held_out).iter_rows(named=True):
            found = transfer(others, _request_of(row), changes)
            predicted = found.mfu_with_attention
            bounds = None
            if nested and predicted is not None:
                way = ACCELERATOR if found.pooled else BENCHMARK
                if way not in pools:
                    jackknife = way == ACCELERATOR and by == ACCELERATOR and pool is not None
                    pools[way] = pool.filter(pl.col("held_out") != held_out) if jackknife else _leave_each_out(others, nested=False, by=way)  # type: ignore[union-attr]
                bounds = calibration(pools[way], way)
            case = dict.fromkeys(_BACKTEST_SCHEMA) | {
                "left_out": by, "held_out": held_out, "benchmark": row["benchmark"], "round": row["round"], "submitter": row["submitter"], "system": row["system"],
                "accelerator_group": row["accelerator_group"], "accelerators": row["accelerators"],
                "active_parameters": row["active_parameters"], "seq_len": row["seq_len"], "precision": row["precision"],
                "measured_time_min": row["time_to_train_min"], "measured_mfu_with_attention": row["mfu_with_attention"],
                "predicted_mfu_with_attention": predicted, "leaned_on": leaned_on_text(found.cells) or None,
                "refused": "; ".join(found.refused) or None, "reach": found.reach,
                "precision_change": found.change.text if found.change else None,
            }
            if predicted is not None:
                ratio = row["mfu_with_attention"] / predicted
                predicted_time = row["time_to_train_min"] * ratio
                case.update(log_ratio=math.log(ratio), predicted_time_min=predicted_time)
                if bounds is not None:
                    low, high = time_bounds(predicted_time, found.widened(bounds))
                    case.update(predicted_time_min_low=low, predicted_time_min_high=high)
            rows.append(case)
    return pl.DataFrame(rows, schema=_BACKTEST_SCHEMA)


def calibration_pool(evidence: pl.DataFrame) -> pl.DataFrame:
    """Every language-model score predicted with its benchmark left out, and with its accelerator left out: the errors
    the interval is learnt from (calibration(pool) for a measured accelerator, calibration(pool, ACCELERATOR) for one
    planned from the others)."""
    return pl.concat([_leave_each_out(evidence, nested=False), _leave_each_out(evidence, nested=False, by=ACCELERATOR)])


def backtest_part(evidence: pl.DataFrame, by: str) -> pl.DataFrame:
    """One way of leaving out (BENCHMARK or ACCELERATOR), nested: the two are independent, so they can run on two cores."""
    pool = _leave_each_out(evidence, nested=False, by=ACCELERATOR) if by == ACCELERATOR else None
    return _leave_each_out(evidence, nested=True, by=by, pool=pool)


def transfer_backtest(evidence: pl.DataFrame, parts: list[pl.DataFrame] | None = None) -> pl.DataFrame:
    """Every language-model score predicted with its benchmark left out, and again with its accelerator left out, its 90 %
    interval learnt without it too (nested). `parts`: the two halves as backtest_part made them, elsewhere."""
    both = pl.concat(parts if parts is not None else [backtest_part(evidence, by) for by in (BENCHMARK, ACCELERATOR)])
    return both.with_columns(
        (100 * (pl.col("predicted_time_min") / pl.col("measured_time_min") - 1)).alias("error_pct"),
        pl.col("measured_time_min").is_between(pl.col("predicted_time_min_low"), pl.col("predicted_time_min_high")).alias("covered"),
    )


@dataclass(frozen=True)
class BacktestFigures:
    """What the cross-benchmark backtest says, printed beside every answer."""

    cases: int
    refused: int
    median_abs_error_pct: float | None
    covered: int
    with_interval: int
    per_benchmark: dict[str, tuple[int, float, int, int]]  # benchmark -> (cases, median |error| %, covered, with interval)
    beyond: tuple[int, int] = (0, 0)  # cases beyond the evidence (reach > 1): (covered, with interval)

    @property
    def coverage(self) -> float | None:
        return self.covered / self.with_interval if self.with_interval else None


def _median_abs(values: pl.Series) -> float:
    return float(np.median(np.abs(values.to_numpy())))


def backtest_figures(backtest: pl.DataFrame, left_out: str = BENCHMARK) -> BacktestFigures:
    backtest = backtest.filter(pl.col("left_out") == left_out)
    predicted = backtest.filter(pl.col("predicted_time_min").is_not_null())
    per = {}
    for (held_out,), rows in predicted.group_by("held_out"):
        with_interval = rows.filter(pl.col("covered").is_not_null())
        per[str(held_out)] = (rows.height, _median_abs(rows["error_pct"]), int(with_interval["covered"].sum()), with_interval.height)
    with_interval = predicted.filter(pl.col("covered").is_not_null())
    far = with_interval.filter(pl.col("reach") > 1)
    return BacktestFigures(predicted.height, backtest.height - predicted.height, _median_abs(predicted["error_pct"]) if predicted.height else None,
                           int(with_interval["covered"].sum()), with_interval.height, dict(sorted(per.items())),
                           (int(far["covered"].sum()), far.height))
