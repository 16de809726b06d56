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
independent of N within the counts measured, and a count beyond them is refused.

The interval: every language-model benchmark is left out in turn and its scores predicted from the others
(`transfer_backtest`). The log ratios ln(measured / predicted utilisation), each benchmark weighing the same, give
the 5 % and 95 % quantiles that make the 90 % interval. In the backtest itself a benchmark's interval is learnt from
the others' backtests without it (nested), so the coverage it records is out of sample.

Outside the evidence nothing is predicted and the reason names the missing measurement: an accelerator with no
language model measured, a precision not measured on it, a model more than SIZE_REACH beyond the sizes measured on
it, a count more than SCALE_REACH beyond its counts, a sequence length more than SEQUENCE_REACH beyond, a mixture of
experts where none was measured, or weights and optimiser state that do not fit in the accelerators' memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import benchmark_work
from mlperf_scaling.tasks.metrics.calibration import LEVEL  # one stated interval for every answer

ASPECT_RATIO = 128.0  # d_model / layers of the measured models
SIZE_BANDWIDTH = 1.0  # in ln(active parameters): a benchmark e times larger or smaller weighs exp(-1/2)
SIZE_REACH = 10.0  # a model at most this factor beyond the largest or smallest size measured on the accelerator
SCALE_REACH = 16.0  # a count at most this factor beyond the counts measured on the accelerator (four doublings)
SEQUENCE_REACH = 4.0
BYTES_PER_PARAMETER = 16  # mixed-precision Adam: 16-bit weights and gradients, 32-bit master weights and two moments
LORA, LORA_BYTES_PER_PARAMETER = "LoRA fine-tuning", 2  # frozen 16-bit weights; the adapters' state is negligible
USABLE_MEMORY = 0.9  # of the datasheet's memory, the rest left to activations, buffers and the runtime

_EVIDENCE_COLUMNS = ["benchmark", "round", "submitter", "system", "accelerator_family", "accelerator_group", "accelerators", "parameters", "active_parameters",
                     "seq_len", "training", "moe", "precision", "precision_assumed", "peak_tflops", "accelerator_memory_gb", "time_to_train_min",
                     "model_flops_with_attention", "mfu_with_attention", "w_per_accelerator"]


def d_model(active_parameters: float) -> float:
    """The hidden size of a transformer of this many (active) parameters at the measured aspect ratio (12 L d^2 = P)."""
    return (ASPECT_RATIO * active_parameters / 12.0) ** (1.0 / 3.0)


def attention_share(active_parameters: float, seq_len: float) -> float:
    """Attention's FLOPs over the dense layers' (12 L d s over 6 P, with 12 L d^2 = P): s / (6 d)."""
    return seq_len / (6.0 * d_model(active_parameters))


def training_flops(active_parameters: float, tokens: float, seq_len: float) -> float:
    """A pretraining's model FLOPs, attention counted."""
    return 6.0 * active_parameters * tokens * (1.0 + attention_share(active_parameters, seq_len))


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
            "mfu_with_attention": row["mfu"] * (1 + share), "w_per_accelerator": row["w_per_accelerator"],
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
    precision: str | None = None  # None: the one measured on the accelerator
    accelerators: int | None = None
    bytes_per_parameter: float = BYTES_PER_PARAMETER  # 2 for LoRA: frozen 16-bit weights, no optimiser state

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
    """Utilisation predicted for a request, from the cells it leans on; `refused` names what is missing instead."""

    request: Request
    precision: str | None = None
    precision_assumed: bool = False  # no log of the runs leaned on says its precision: the round's and accelerator's usual
    peak_tflops: float | None = None
    mfu_with_attention: float | None = None
    cells: list[Cell] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


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
    return (f"{request.parameters:.3g} parameters need about {needed:,.0f} GB of weights and optimiser state ({request.bytes_per_parameter:g} bytes "
            f"each); {accelerators:,} {request.accelerator_group} hold {held:,.0f} GB ({USABLE_MEMORY:.0%} of {memory_gb:g} GB each): "
            f"at least {math.ceil(needed / (memory_gb * USABLE_MEMORY)):,} are needed")


def smallest_that_fits(request: Request, memory_gb: float | None) -> int:
    """The fewest accelerators whose memory holds the weights and optimiser state (1 where memory is unknown)."""
    if memory_gb is None:
        return 1
    return max(1, math.ceil(request.parameters * request.bytes_per_parameter / 1e9 / (memory_gb * USABLE_MEMORY)))


def transfer(evidence: pl.DataFrame, request: Request, reach: bool = True) -> Transfer:
    """The utilisation a request can expect on its accelerator, or the measurements it lacks. `reach=False` predicts
    however far the request is from the sizes, counts and sequence lengths measured (the calibration's pool)."""
    on = evidence.filter(pl.col("accelerator_group") == request.accelerator_group)
    group = request.accelerator_group
    if on.is_empty():
        measured = sorted(evidence["accelerator_group"].unique().to_list())
        return Transfer(request, refused=[f"no language model measured on {group} (measured on: {', '.join(measured)})"])
    precisions = on["precision"].drop_nulls()
    precision = request.precision or (precisions.mode().sort()[0] if precisions.len() else None)
    on = on.filter(pl.col("precision") == precision)
    if on.is_empty():
        return Transfer(request, refused=[f"no language model measured on {group} at {request.precision} "
                                          f"(measured at {', '.join(sorted(precisions.unique().to_list()))})"])
    refused: list[str] = []
    same_kind = on.filter(pl.col("moe") == request.moe)
    if same_kind.is_empty():
        kind = "mixture-of-experts" if request.moe else "dense"
        refused.append(f"no {kind} language model measured on {group}: its utilisation is not the other kind's")
        same_kind = on
    sizes = same_kind["active_parameters"].to_numpy()
    if reach and _reach(request.active_parameters, sizes.min(), sizes.max()) > SIZE_REACH:
        refused.append(f"no model within {SIZE_REACH:g}x of {request.active_parameters:.3g} active parameters measured on {group} "
                       f"(measured: {sizes.min():.3g} to {sizes.max():.3g})")
    seqs = same_kind["seq_len"].to_numpy()
    if reach and _reach(request.seq_len, seqs.min(), seqs.max()) > SEQUENCE_REACH:
        refused.append(f"no sequence length within {SEQUENCE_REACH:g}x of {request.seq_len:,.0f} measured on {group} "
                       f"(measured: {seqs.min():,.0f} to {seqs.max():,.0f} tokens)")
    counts = same_kind["accelerators"].to_numpy()
    memory_gb = median_memory_gb(same_kind)
    if request.accelerators is not None and reach:
        if _reach(request.accelerators, counts.min(), counts.max()) > SCALE_REACH:
            refused.append(f"no language model measured on {group} within {SCALE_REACH:g}x of {request.accelerators:,} accelerators "
                           f"(measured: {counts.min():,} to {counts.max():,})")
        if too_small := _fits_in_memory(request, request.accelerators, memory_gb):
            refused.append(too_small)
    cells = _cells(same_kind, request.active_parameters)
    mfu = math.exp(sum(c.weight * math.log(c.mfu_with_attention) for c in cells))
    peak = float(np.median(same_kind["peak_tflops"].to_numpy()))
    return Transfer(request, precision, bool(same_kind["precision_assumed"].all()), peak, None if refused else mfu, cells, refused)


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
    return "; ".join(f"{c.benchmark} {c.weight * 100:.0f} % ({c.scores} scores, {c.rounds}, {c.accelerators_low:,}-{c.accelerators_high:,} "
                     f"accelerators, MFU {c.mfu_with_attention:.3f})" for c in sorted(cells, key=lambda c: -c.weight))


def _request_of(row: dict, accelerators: bool = True) -> Request:
    return Request(row["active_parameters"], row["parameters"], row["seq_len"], row["accelerator_group"], row["precision"],
                   row["accelerators"] if accelerators else None, LORA_BYTES_PER_PARAMETER if row["training"] == LORA else BYTES_PER_PARAMETER)


def _weights(benchmarks: pl.Series) -> np.ndarray:
    """Every benchmark weighs the same, however many scores it has."""
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


def calibration(backtest: pl.DataFrame) -> tuple[float, float] | None:
    """The interval's ends learnt from a backtest's predicted cases; None where it has none."""
    cases = backtest.filter(pl.col("log_ratio").is_not_null())
    if cases.is_empty():
        return None
    return interval_bounds(cases["log_ratio"].to_numpy(), _weights(cases["held_out"]))


_BACKTEST_SCHEMA = {
    "held_out": pl.String, "round": pl.String, "submitter": pl.String, "system": pl.String, "accelerator_group": pl.String,
    "accelerators": pl.Int64, "active_parameters": pl.Float64, "seq_len": pl.Float64, "precision": pl.String,
    "measured_time_min": pl.Float64, "measured_mfu_with_attention": pl.Float64, "predicted_mfu_with_attention": pl.Float64,
    "log_ratio": pl.Float64, "predicted_time_min": pl.Float64, "predicted_time_min_low": pl.Float64, "predicted_time_min_high": pl.Float64,
    "leaned_on": pl.String, "refused": pl.String,
}


def _leave_each_out(evidence: pl.DataFrame, nested: bool, reach: bool = True) -> pl.DataFrame:
    rows = []
    for held_out in sorted(evidence["benchmark"].unique().to_list()):
        others = evidence.filter(pl.col("benchmark") != held_out)
        bounds = calibration(_leave_each_out(others, nested=False, reach=False)) if nested else None
        for row in evidence.filter(pl.col("benchmark") == held_out).iter_rows(named=True):
            found = transfer(others, _request_of(row), reach)
            predicted = found.mfu_with_attention
            case = dict.fromkeys(_BACKTEST_SCHEMA) | {
                "held_out": held_out, "round": row["round"], "submitter": row["submitter"], "system": row["system"],
                "accelerator_group": row["accelerator_group"], "accelerators": row["accelerators"],
                "active_parameters": row["active_parameters"], "seq_len": row["seq_len"], "precision": row["precision"],
                "measured_time_min": row["time_to_train_min"], "measured_mfu_with_attention": row["mfu_with_attention"],
                "predicted_mfu_with_attention": predicted, "leaned_on": leaned_on_text(found.cells) or None,
                "refused": "; ".join(found.refused) or None,
            }
            if predicted is not None:
                ratio = row["mfu_with_attention"] / predicted
                predicted_time = row["time_to_train_min"] * ratio
                case.update(log_ratio=math.log(ratio), predicted_time_min=predicted_time)
                if bounds is not None:
                    low, high = time_bounds(predicted_time, bounds)
                    case.update(predicted_time_min_low=low, predicted_time_min_high=high)
            rows.append(case)
    return pl.DataFrame(rows, schema=_BACKTEST_SCHEMA)


def calibration_pool(evidence: pl.DataFrame) -> pl.DataFrame:
    """Every language-model score predicted with its benchmark left out, however far from the others: the errors the
    interval is learnt from. Leaving a benchmark out leaves the others' sizes far apart, and the errors did not grow
    with the distance in size (correlation -0.13 on the shipped rounds), so the reach limits would only thin the pool."""
    return _leave_each_out(evidence, nested=False, reach=False)


def transfer_backtest(evidence: pl.DataFrame) -> pl.DataFrame:
    """Every language-model score predicted with its benchmark left out, its 90 % interval learnt without it too."""
    return _leave_each_out(evidence, nested=True).with_columns(
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

    @property
    def coverage(self) -> float | None:
        return self.covered / self.with_interval if self.with_interval else None


def _median_abs(values: pl.Series) -> float:
    return float(np.median(np.abs(values.to_numpy())))


def backtest_figures(backtest: pl.DataFrame) -> BacktestFigures:
    predicted = backtest.filter(pl.col("predicted_time_min").is_not_null())
    per = {}
    for (held_out,), rows in predicted.group_by("held_out"):
        with_interval = rows.filter(pl.col("covered").is_not_null())
        per[str(held_out)] = (rows.height, _median_abs(rows["error_pct"]), int(with_interval["covered"].sum()), with_interval.height)
    with_interval = predicted.filter(pl.col("covered").is_not_null())
    return BacktestFigures(predicted.height, backtest.height - predicted.height, _median_abs(predicted["error_pct"]) if predicted.height else None,
                           int(with_interval["covered"].sum()), with_interval.height, dict(sorted(per.items())))
