"""Configuration, hardware and power beside every scored result: the `result_context` table.

Per score: the system's typed covariates (systems), the run configuration (scores), the accelerator's datasheet
(reference/accelerator_specs.tsv), the training work in samples and tokens (reference/benchmark_work.tsv), model
FLOPs utilisation where the model's FLOPs are known, and, where power was measured, the score's power profile and its
energy scaling against the smallest measured system of the same accelerator.

MFU = model FLOPs of the training / (time to train x accelerators x peak dense FLOP/s): the model's FLOPs, not the
hardware's (PaLM, appendix B), against the datasheet's peak at the precision the run trained at. That precision comes
from the first source that says it (`precision_source`): the log (every spelling of its key), the config file the
submitter published for the result (tasks/score/configured.py), the configuration's name, the submitter's own published
statement for the round (reference/precision_statements.tsv: NVIDIA's v5.1 NVFP4,
Google's INT8 runs), and only then an assumption, labelled. An MFU is never above 1: where the achieved FLOP/s pass the
peak of the stated precision, the precision or the work count is wrong, and `mfu_note` says so instead of a number.
A peak that only one unverified source supports (accelerator_specs.tsv, single_source_peaks: the first-generation Gaudi's
60 TFLOP/s BF16, from one copy of one Intel deck) is flagged (`peak_single_source`), and every MFU against it is marked
SINGLE_SOURCE_PEAK wherever it is shown. `achieved_over_16bit_peak` is the achieved FLOP/s over the 16-bit peak (BF16, or FP16 on a chip without BF16 such as
the V100): a yardstick across rounds and precisions, not a utilisation (above 1 where the run trained below 16 bits).
Energy scaling splits exactly: E_ref / E = time efficiency x power ratio, with time
efficiency (T_ref N_ref) / (T N) and power ratio (P_ref / N_ref) / (P / N), P the mean power of the run (energy / time).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.result_context import ResultContextSchema
from mlperf_scaling.reference.lookup import GPU_VENDORS, AcceleratorSpec, accelerator_spec, benchmark_work, canonical_benchmark, precision_statement
from mlperf_scaling.tasks.metrics.accelerators import with_accelerator_classes

_SYSTEM_COLUMNS = ["interconnect_kind", "interconnect_gb_s", "scale_up_domain", "network_kind", "network_gbit_s_per_node",
                   "accelerator_memory_gb", "cooling", "cuda_version"]
_CONFIGURATION_COLUMNS = ["tensor_parallelism", "pipeline_parallelism", "context_parallelism", "expert_parallelism",
                          "data_parallelism", "micro_batch_size", "global_batch_size", "precision_linear", "precision_source",
                          "precision_evidence", "precision_switch_step", "precision_after_switch", "implementation_config",
                          "configuration_evidence", "round_precision", "round_precision_evidence"]
SINGLE_SOURCE_PEAK = "peak from a single unverified source"  # how an MFU against such a peak is marked, wherever shown
# the rules' precision names -> the datasheet's columns
_PEAK_COLUMN = {"fp32": "fp32", "tf32": "tf32", "bfloat16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp8": "fp8", "mxfp6": "fp6",
                "nvfp4": "fp4", "mxfp4": "fp4", "fp4": "fp4", "int8": "int8"}


@dataclass(frozen=True)
class RunPrecision:
    """The precision a result trained at and where that is known from, in the order of trust."""

    precision: str | None
    source: str | None  # log, config file, config name, submitter's statement, assumed
    evidence: str | None  # the log key, the config file's line, the config name, the statement's quote and address, or why it is assumed


# benchmarks whose reference trains in 32 bits unless a config turns mixed precision on: MiniGo's TensorFlow, whose
# configs turn FP16 on with TF_ENABLE_AUTO_MIXED_PRECISION_GRAPH_REWRITE=1 (NVIDIA's multi-node ones, training_results_v2.0
# config_DGXA100_multi.sh: "## Turn on FP16 training via AMP"); otherwise TensorFlow's default on a GPU, TF32 on Ampere and later
THIRTY_TWO_BIT_BY_DEFAULT = {"minigo": "MiniGo's TensorFlow trains in 32 bits unless its config turns AMP on (TF32 where the chip has it)"}


def run_precision(logged: str | None, logged_from: str | None, round_name: str, submitter: str, system: str, benchmark: str,
                  family: str | None, spec: AcceleratorSpec | None, is_llm: bool, evidence: str | None = None,
                  round_configs: tuple[str | None, str | None] = (None, None)) -> RunPrecision:
    """The log (any spelling of its key, or the configuration it prints), the config file (scores), the configuration's
    name (in the log, or the one the submitter's results repository names for the system), the submitter's published
    statement, and only then an assumption, labelled: an LLM on an accelerator with FP8 trained at FP8 (every LLM
    submission on Hopper and later whose configuration could be read did, but NVIDIA's NVFP4 and Google's INT8 ones),
    else at 16 bits."""
    if logged is not None:
        where = logged_from or ""
        kind = "config file" if where.startswith("config file") else "config name" if where.startswith("config name") else "log"
        return RunPrecision(logged, kind, evidence or logged_from)
    said = precision_statement(round_name, submitter, system, benchmark, family)
    if said is not None:
        kind = "config name" if said.kind == "configuration" else "submitter's statement"
        return RunPrecision(said.precision, kind, f"{said.quote} ({said.source}, {said.published})")
    if round_configs[0] is not None:
        return RunPrecision(round_configs[0], "round's configs", f"no config of the submitter's fits; {round_configs[1]}")
    if spec is None:
        return RunPrecision(None, None, None)
    if is_llm and spec.peak_tflops.get("fp8"):
        return RunPrecision("fp8", "assumed", "the log, the configuration and the submitter say nothing; an LLM on an accelerator with FP8")
    if benchmark in THIRTY_TWO_BIT_BY_DEFAULT and spec.architecture.startswith(GPU_VENDORS):  # a TPU's matrix units run BF16
        return RunPrecision("tf32" if spec.peak_tflops.get("tf32") else "fp32", "assumed",
                            f"the log, the configuration and the submitter say nothing; {THIRTY_TWO_BIT_BY_DEFAULT[benchmark]}")
    peaks = spec.peak_tflops
    # MLPerf's GPU implementations of the vision, speech and recommendation models run PyTorch or MXNet AMP, HugeCTR's mixed
    # precision: FP16, where the chip runs it at the full 16-bit rate; the language models, Megatron's and NeMo's, BF16;
    # TPUs and Gaudis BF16 (their FP16 is slower or absent)
    fp16_first = not is_llm and bool(peaks.get("fp16")) and peaks.get("fp16", 0) >= peaks.get("bf16", 0)
    sixteen = "fp16" if fp16_first or not peaks.get("bf16") else "bfloat16"
    return RunPrecision(sixteen, "assumed", "the log, the configuration and the submitter say nothing; 16-bit mixed precision, the default")


@dataclass(frozen=True)
class Phases:
    """A run that switches precision at a step: how many of its steps ran at each."""

    first: str
    then: str
    switch_step: int
    steps: float | None  # the steps trained (samples / global batch); None where unknown

    @property
    def split(self) -> tuple[float, float] | None:
        if self.steps is None:
            return None
        before = min(self.steps, self.switch_step)
        return before, max(self.steps - before, 0.0)

    def words(self) -> str:
        if self.steps is None:
            return f"{self.first} to step {self.switch_step:,}, then {self.then}; the steps trained are not known, so the peak is {self.first}'s, a bound"
        if self.steps <= self.switch_step:
            return f"{self.first} throughout: converged at step {self.steps:,.0f}, before the switch to {self.then} at step {self.switch_step:,}"
        return f"{self.first} for steps 1-{self.switch_step:,}, then {self.then} for steps {self.switch_step + 1:,}-{self.steps:,.0f}"


def hardware_of(spec: AcceleratorSpec | None, precision: RunPrecision, phases: Phases | None = None) -> dict:
    if spec is None:
        return {"accelerator_year": None, "peak_16bit_tflops": None, "peak_tflops": None, "peak_precision": None,
                "memory_bandwidth_tb_s": None, "tdp_w": None, "spec_source": None, "peak_single_source": None}
    column = _PEAK_COLUMN.get(precision.precision or "")
    sixteen = spec.peak_tflops.get("bf16") or spec.peak_tflops.get("fp16")  # a chip without BF16 (V100) trains in FP16
    peak = spec.peak_tflops.get(column) if column else None
    then_column = _PEAK_COLUMN.get(phases.then) if phases is not None else None
    then_peak = spec.peak_tflops.get(then_column) if then_column else None
    split = phases.split if phases is not None else None
    if peak and then_peak and split is not None and split[1] > 0:
        # the time each phase's steps take at its own peak: the step-weighted (harmonic) peak of the whole run
        peak = (split[0] + split[1]) / (split[0] / peak + split[1] / then_peak)
        column = f"{column}+{then_column}"
    return {"accelerator_year": spec.year, "peak_16bit_tflops": sixteen, "peak_tflops": peak, "peak_precision": column if peak else None,
            "memory_bandwidth_tb_s": spec.memory_bandwidth_tb_s, "tdp_w": spec.tdp_w, "spec_source": spec.source,
            "peak_single_source": spec.peak_from_single_source(column) if peak else None}


def utilisation(achieved: float | None, hardware: dict, precision: RunPrecision, spec: AcceleratorSpec | None, family: str | None) -> tuple[float | None, str | None]:
    """MFU against the peak of the run's precision, and why there is none; never above 1, the physical peak."""
    if achieved is None:
        return None, None
    if spec is None:
        return None, f"no datasheet row for {family or 'this accelerator'}"
    if precision.precision is None:
        return None, "the precision is not known"
    if hardware["peak_tflops"] is None:
        return None, f"the datasheet lists no {precision.precision} peak for {spec.family} (reference/accelerator_specs.tsv says why)"
    mfu = achieved / hardware["peak_tflops"]
    if mfu > 1:
        return None, (f"{achieved:,.0f} TFLOP/s per accelerator is {mfu:.2f} x the {precision.precision} peak ({precision.source}): "
                      "the run cannot have trained at that precision, or its work is counted wrong; no MFU")
    return mfu, None


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
    selected = scored.select("round", "submitter", "system", "benchmark", "benchmark_canonical", "accelerator_model_name", "accelerators",
                             "number_of_nodes", "time_to_train_min", "energy_j", "samples_to_converge", "epochs_to_converge",
                             *_CONFIGURATION_COLUMNS)
    frame = (
        with_accelerator_classes(selected).drop("accelerator_vendor", "accelerator_family_inferred")
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
        spec = accelerator_spec(row["accelerator_family"], row["accelerator_form_factor"], row["accelerator_memory_gb"], row["accelerator_model_name"])
        precision = run_precision(row["precision_linear"], row["precision_source"], row["round"], row["submitter"], row["system"],
                                  row["benchmark_canonical"], row["accelerator_family"], spec,
                                  canonical_benchmark(row["benchmark_canonical"]).task.startswith("LLM"), row["precision_evidence"],
                                  (row["round_precision"], row["round_precision_evidence"]))
        work = _training_work(row["benchmark_canonical"], row["round"], row["samples_to_converge"], row["epochs_to_converge"], row["typical_logged"])
        phases = None
        if row["precision_switch_step"] and row["precision_after_switch"] and precision.source in ("log", "config file"):
            steps = work["samples_trained"] / row["global_batch_size"] if work["samples_trained"] and row["global_batch_size"] else None
            phases = Phases(precision.precision or "", row["precision_after_switch"], row["precision_switch_step"], steps)
        hardware = hardware_of(spec, precision, phases)
        seconds = row["time_to_train_min"] * 60
        achieved = (work["model_flops"] / (seconds * accelerators) / 1e12) if work["model_flops"] and accelerators else None
        mfu, mfu_note = utilisation(achieved, hardware, precision, spec, row["accelerator_family"])
        per_node = row["network_gbit_s_per_node"]
        row.update(hardware)
        row.update(work)
        row.update({
            "precision": precision.precision, "precision_source": precision.source, "precision_evidence": precision.evidence,
            "precision_phases": phases.words() if phases is not None else None,
            "network_gbit_s_per_accelerator": per_node * nodes / accelerators if per_node and nodes and accelerators else None,
            "achieved_tflops_per_accelerator": achieved,
            "mfu": mfu,
            "mfu_note": mfu_note,
            "achieved_over_16bit_peak": achieved / hardware["peak_16bit_tflops"] if achieved and hardware["peak_16bit_tflops"] else None,
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
                 pl.col("mfu").max().alias("best_mfu"),
                 pl.col("peak_single_source").filter(pl.col("mfu").is_not_null()).any().alias("best_mfu_single_source")))
    shared = best.group_by("round", "benchmark", "accelerators").agg(pl.len().alias("families")).filter(pl.col("families") >= 2)
    return best.join(shared, on=["round", "benchmark", "accelerators"]).sort("round", "benchmark", "accelerators", "best_time_min")
