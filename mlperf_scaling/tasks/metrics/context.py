"""Configuration, hardware and power beside every scored result: the `result_context` table.

Per score: the system's typed covariates (systems), the run configuration (scores), the accelerator's datasheet
(reference/accelerator_specs.tsv), the training work in samples and tokens (reference/benchmark_work.tsv), model
FLOPs utilisation where the model's FLOPs are known, and, where power was measured, the score's power profile and its
energy scaling against the smallest measured system of the same accelerator.

MFU = model FLOPs of the training / (time to train x accelerators x peak dense FLOP/s): the model's FLOPs, not the
hardware's (PaLM, appendix B), against the peak at the lowest precision the run logged (v6.0 on) where the datasheet
has it. A run that logs none is measured against FP8 where it is an LLM on an accelerator with FP8 (MLPerf's LLM
submissions on Hopper and later train in FP8 or below: against BF16 some pass 1, e.g. v5.1 Llama 3.1 405B on GB300 at
1.32), else against BF16, and `peak_precision` says "assumed". `mfu_16bit` is always against the 16-bit peak (BF16, or
FP16 on a chip without BF16 such as the V100), the common yardstick across rounds. Energy scaling splits exactly: E_ref / E = time efficiency x power ratio, with time
efficiency (T_ref N_ref) / (T N) and power ratio (P_ref / N_ref) / (P / N), P the mean power of the run (energy / time).
"""

from __future__ import annotations

import functools

import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.result_context import ResultContextSchema
from mlperf_scaling.reference.lookup import accelerator_spec, benchmark_work, canonical_benchmark
from mlperf_scaling.tasks.metrics.accelerators import accelerator_families

_SYSTEM_COLUMNS = ["interconnect_kind", "interconnect_gb_s", "scale_up_domain", "network_kind", "network_gbit_s_per_node",
                   "accelerator_memory_gb", "cooling", "cuda_version"]
_CONFIGURATION_COLUMNS = ["tensor_parallelism", "pipeline_parallelism", "context_parallelism", "expert_parallelism",
                          "data_parallelism", "micro_batch_size", "precision_linear"]
# the rules' precision names -> the datasheet's columns
_PEAK_COLUMN = {"fp32": "fp32", "tf32": "tf32", "bfloat16": "bf16", "fp16": "fp16", "fp8": "fp8", "nvfp4": "fp4", "mxfp4": "fp4"}


def _hardware(family: str | None, form_factor: str | None, memory: float | None, precision: str | None, is_llm: bool) -> dict:
    spec = accelerator_spec(family, form_factor, memory)
    if spec is None:
        return {"accelerator_year": None, "peak_16bit_tflops": None, "peak_tflops": None, "peak_precision": None,
                "memory_bandwidth_tb_s": None, "tdp_w": None, "spec_source": None}
    column = _PEAK_COLUMN.get(precision or "")
    bf16 = spec.peak_tflops.get("bf16") or spec.peak_tflops.get("fp16")  # a chip without BF16 (V100) trains in FP16
    peak: float | None
    if column and spec.peak_tflops.get(column):
        peak, named = spec.peak_tflops[column], column
    elif is_llm and spec.peak_tflops.get("fp8"):
        peak, named = spec.peak_tflops["fp8"], "fp8 (assumed)"
    else:
        peak = bf16
        named = "bf16" if column == "bf16" else "bf16 (assumed)" if precision is None else f"bf16 (no {column or precision} peak listed)"
    return {"accelerator_year": spec.year, "peak_16bit_tflops": bf16, "peak_tflops": peak, "peak_precision": named if peak else None,
            "memory_bandwidth_tb_s": spec.memory_bandwidth_tb_s, "tdp_w": spec.tdp_w, "spec_source": spec.source}


@functools.cache
def _work(benchmark: str, round_name: str):
    return benchmark_work(benchmark, round_name)


# a logged convergence point below this share of its round's median for the benchmark is in another unit (v2.1 BERT:
# three submitters log epoch_num as epochs, 1.0, where the others log samples, 2.6 million)
OTHER_UNIT = 0.01


def _training_work(benchmark: str, round_name: str, samples: float | None, epochs: float | None, typical: float | None) -> dict:
    """Samples, tokens and model FLOPs of the training, from the logged convergence point."""
    work = _work(benchmark, round_name)
    empty = {"samples_trained": None, "tokens_trained": None, "model_flops": None, "work_source": None}
    if work is None:
        return empty
    logged = samples if samples is not None else epochs
    if logged is None or (typical and logged < OTHER_UNIT * typical):
        return empty
    if work.unit == "epochs":
        trained = logged * work.samples_per_epoch if work.samples_per_epoch else None
    elif work.unit == "tokens":
        trained = logged / work.tokens_per_sample if work.tokens_per_sample else None
    else:
        trained = logged
    tokens = trained * work.tokens_per_sample if trained is not None and work.tokens_per_sample else None
    flops = (tokens * work.flops_per_token if tokens is not None and work.flops_per_token
             else trained * work.flops_per_sample if trained is not None and work.flops_per_sample else None)
    return {"samples_trained": trained, "tokens_trained": tokens, "model_flops": flops, "work_source": work.source}


def _power(energy: pl.DataFrame) -> pl.DataFrame:
    """A score's power profile from its measured runs: the highest peak, the median of the rest."""
    return energy.group_by(["round", "submitter", "system", "benchmark"]).agg(
        pl.len().alias("n_power_runs"),
        pl.col("measurement").drop_nulls().first().alias("measurement"),
        pl.col("peak_w").max().alias("peak_w"),
        pl.col("mean_w").median().alias("mean_w"),
        pl.col("peak_to_average").median().alias("peak_to_average"),
        pl.col("node_imbalance").median().alias("node_imbalance"),
        pl.col("eval_time_share").median().alias("eval_time_share"),
        pl.col("switch_share").median().alias("switch_share"),
        pl.col("sampling_rule_met").all().alias("sampling_rule_met"),
    )


def result_context(scores: pl.DataFrame, systems: pl.DataFrame, energy: pl.DataFrame, efficiency: pl.DataFrame) -> pl.DataFrame:
    """One row per scored result of a round, with what explains how it scales."""
    scored = scores.filter(pl.col("time_to_train_min").is_not_null())
    families = accelerator_families(scored["accelerator_model_name"].drop_nulls().unique().to_list())
    frame = (
        scored.select("round", "submitter", "system", "benchmark", "benchmark_canonical", "accelerator_model_name", "accelerators",
                      "number_of_nodes", "time_to_train_min", "energy_j", "samples_to_converge", "epochs_to_converge",
                      *_CONFIGURATION_COLUMNS)
        .join(families.select("accelerator_model_name", "accelerator_family", "accelerator_form_factor", "accelerator_group"),
              on="accelerator_model_name", how="left")
        .join(systems.select("round", "submitter", "system", *_SYSTEM_COLUMNS), on=["round", "submitter", "system"], how="left")
        .join(efficiency.select("round", "submitter", "system", "benchmark", "efficiency"), on=["round", "submitter", "system", "benchmark"],
              how="left")
        .join(_power(energy), on=["round", "submitter", "system", "benchmark"], how="left")
        .with_columns(pl.coalesce("samples_to_converge", "epochs_to_converge").median().over("round", "benchmark").alias("typical_logged"))
    )
    rows = []
    for row in frame.iter_rows(named=True):
        accelerators = row["accelerators"]
        nodes = row["number_of_nodes"]
        hardware = _hardware(row["accelerator_family"], row["accelerator_form_factor"], row["accelerator_memory_gb"], row["precision_linear"],
                             canonical_benchmark(row["benchmark_canonical"]).task.startswith("LLM"))
        work = _training_work(row["benchmark_canonical"], row["round"], row["samples_to_converge"], row["epochs_to_converge"], row["typical_logged"])
        seconds = row["time_to_train_min"] * 60
        achieved = (work["model_flops"] / (seconds * accelerators) / 1e12) if work["model_flops"] and accelerators else None
        per_node = row["network_gbit_s_per_node"]
        row.update(hardware)
        row.update(work)
        row.update({
            "network_gbit_s_per_accelerator": per_node * nodes / accelerators if per_node and nodes and accelerators else None,
            "achieved_tflops_per_accelerator": achieved,
            "mfu": achieved / hardware["peak_tflops"] if achieved and hardware["peak_tflops"] else None,
            "mfu_16bit": achieved / hardware["peak_16bit_tflops"] if achieved and hardware["peak_16bit_tflops"] else None,
            "w_per_accelerator": row["mean_w"] / accelerators if row["mean_w"] is not None and accelerators else None,
            "j_per_sample": row["energy_j"] / work["samples_trained"] if row["energy_j"] and work["samples_trained"] else None,
            "j_per_token": row["energy_j"] / work["tokens_trained"] if row["energy_j"] and work["tokens_trained"] else None,
        })
        rows.append(row)
    return _energy_scaling(rows)


def _energy_scaling(rows: list[dict]) -> pl.DataFrame:
    """Energy scaling within (benchmark, accelerator group, where power was read), against the fewest accelerators."""
    schema = frame_schema(ResultContextSchema)
    out = []
    for row in rows:
        row.update({"energy_reference_accelerators": None, "energy_scaling_efficiency": None, "time_efficiency": None, "power_ratio": None})
        out.append(row)
    measured = [r for r in out if r["energy_j"] and r["accelerators"]]
    groups: dict[tuple, list[dict]] = {}
    for row in measured:
        groups.setdefault((row["benchmark"], row["accelerator_group"], row["measurement"]), []).append(row)
    for members in groups.values():
        reference = min(members, key=lambda r: (r["accelerators"], r["time_to_train_min"]))
        t_ref, n_ref, e_ref = reference["time_to_train_min"], reference["accelerators"], reference["energy_j"]
        for row in members:
            t, n, e = row["time_to_train_min"], row["accelerators"], row["energy_j"]
            time_efficiency = (t_ref * n_ref) / (t * n)
            power_ratio = ((e_ref / t_ref) / n_ref) / ((e / t) / n)
            row.update({"energy_reference_accelerators": n_ref, "energy_scaling_efficiency": e_ref / e,
                        "time_efficiency": time_efficiency, "power_ratio": power_ratio})
    return pl.DataFrame([{name: row[name] for name in schema} for row in out], schema=schema)


def generations_at_matched_n(context: pl.DataFrame) -> pl.DataFrame:
    """The best time of each accelerator family at each (round, benchmark, accelerator count) where two or more families
    were measured: generations compared at matched N."""
    best = (context.filter(pl.col("accelerator_family").is_not_null())
            .group_by("round", "benchmark", "accelerators", "accelerator_family")
            .agg(pl.col("time_to_train_min").min().alias("best_time_min"), pl.col("accelerator_year").first(),
                 pl.col("mfu").max().alias("best_mfu")))
    shared = best.group_by("round", "benchmark", "accelerators").agg(pl.len().alias("families")).filter(pl.col("families") >= 2)
    return best.join(shared, on=["round", "benchmark", "accelerators"]).sort("round", "benchmark", "accelerators", "best_time_min")
