"""The evidence the model planner learns from: the language-model benchmarks' scores (reference/benchmark_work.tsv
says which, and their sizes) whose utilisation is known, one row each, with utilisation recounted with attention and
the work of one optimiser step on each accelerator (its global batch over its count, at the peak)."""

from __future__ import annotations

import polars as pl

from mlperf_scaling.reference.lookup import BenchmarkWork, benchmark_work
from mlperf_scaling.tasks.planning.batch import pipeline_efficiency
from mlperf_scaling.tasks.planning.datasheets import datasheet_of_group
from mlperf_scaling.tasks.planning.work import LORA, attention_share

_SCHEMA = {
    "benchmark": pl.String, "round": pl.String, "submitter": pl.String, "system": pl.String, "accelerator_family": pl.String,
    "accelerator_group": pl.String, "architecture": pl.String, "accelerators": pl.Int64, "parameters": pl.Float64,
    "active_parameters": pl.Float64, "seq_len": pl.Float64, "training": pl.String, "moe": pl.Boolean, "precision": pl.String,
    "precision_assumed": pl.Boolean, "peak_tflops": pl.Float64, "accelerator_memory_gb": pl.Float64, "time_to_train_min": pl.Float64,
    "global_batch_tokens": pl.Float64, "step_compute_s": pl.Float64, "pipeline_efficiency": pl.Float64, "model_flops_with_attention": pl.Float64,
    "mfu_with_attention": pl.Float64, "w_per_accelerator": pl.Float64,
}


def benchmark_attention_share(work: BenchmarkWork) -> float:
    """Attention's FLOPs over the dense layers' for a benchmark's model: counted on its own architecture where the table
    gives it (grouped-query, multi-head latent and sliding-window attention, and LoRA's 4 x parameters, each as they
    are), else at the measured models' aspect ratio."""
    assert work.active_parameters is not None and work.tokens_per_sample is not None
    attention = work.attention_flops_per_token(work.tokens_per_sample)
    if attention is None:
        return attention_share(work.active_parameters, work.tokens_per_sample)
    return attention / ((4.0 if work.training == LORA else 6.0) * work.active_parameters)


def _nominal(peak_precision: str | None) -> str | None:
    """A run at two precisions ("fp4+fp8": NVIDIA's FP4 LoRA recipe, healed at FP8) is planned as its first."""
    return peak_precision.split("+", 1)[0] if peak_precision else None


def _at_nominal_peak(row: dict, group: str) -> tuple[float | None, float]:
    """The peak and utilisation a score is planned at: a run at two precisions ("fp4+fp8") against its first
    precision's peak, what its recipe delivered of it (its MFU is against the step-weighted peak of both, which an FP4
    request is not planned at)."""
    if not row["peak_precision"] or "+" not in row["peak_precision"]:
        return row["peak_tflops"], row["mfu"]
    spec = datasheet_of_group(group)
    nominal = spec.peak_tflops.get(_nominal(row["peak_precision"]) or "") if spec is not None else None
    if not nominal or not row["peak_tflops"]:
        return row["peak_tflops"], row["mfu"]
    return nominal, row["mfu"] * row["peak_tflops"] / nominal


def language_model_evidence(context: pl.DataFrame) -> pl.DataFrame:
    """One row per language-model score with a known utilisation (result_context's rows): its size, sequence length,
    precision, utilisation with attention counted (`mfu_with_attention`, at most 1), `step_compute_s`, one step's
    FLOPs on one accelerator at its peak (None where the global batch was not logged), and `pipeline_efficiency`, the share
    of a step its pipeline computes at that count and batch (tasks/planning/batch.py; 1 where the batch is unknown)."""
    rows = []
    specs: dict[str, tuple[str | None, float | None]] = {}  # group -> (architecture, memory)
    for row in context.filter(pl.col("mfu").is_not_null() & pl.col("model_flops").is_not_null()).iter_rows(named=True):
        work = benchmark_work(row["benchmark_canonical"], row["round"])
        if work is None or work.training is None or not work.active_parameters or not work.tokens_per_sample:
            continue
        group = row["accelerator_group"]
        if group not in specs:
            spec = datasheet_of_group(group)
            specs[group] = (spec.architecture, spec.memory_gb) if spec is not None else (None, None)
        share = benchmark_attention_share(work)
        peak, mfu = _at_nominal_peak(row, group)
        batch_tokens = row["global_batch_size"] * work.tokens_per_sample if row.get("global_batch_size") else None
        per_token = (4.0 if work.training == LORA else 6.0) * work.active_parameters * (1.0 + share)
        step = (per_token * batch_tokens / row["accelerators"] / (peak * 1e12)
                if batch_tokens and row["accelerators"] and peak else None)
        pipeline = (pipeline_efficiency(work.active_parameters, work.training == LORA, specs[group][1], work.tokens_per_sample, batch_tokens,
                                        row["accelerators"]) if batch_tokens and row["accelerators"] else 1.0)
        rows.append({
            "benchmark": row["benchmark_canonical"], "round": row["round"], "submitter": row["submitter"], "system": row["system"],
            "accelerator_family": row["accelerator_family"], "accelerator_group": group, "architecture": specs[group][0],
            "accelerators": row["accelerators"], "parameters": work.parameters,
            "active_parameters": work.active_parameters, "seq_len": work.tokens_per_sample, "training": work.training,
            "moe": bool(work.parameters and work.parameters > work.active_parameters), "precision": _nominal(row["peak_precision"]),
            "precision_assumed": row["precision_source"] == "assumed",
            "peak_tflops": peak, "accelerator_memory_gb": row["accelerator_memory_gb"],
            "time_to_train_min": row["time_to_train_min"], "global_batch_tokens": batch_tokens, "step_compute_s": step,
            "pipeline_efficiency": pipeline,
            "model_flops_with_attention": row["model_flops"] * (1 + share),
            # attention counted the dense way (no causal halving) can pass the peak on a run near it: a utilisation stops at 1
            "mfu_with_attention": min(mfu * (1 + share), 1.0), "w_per_accelerator": row["w_per_accelerator"],
        })
    return pl.DataFrame(rows, schema=_SCHEMA)
