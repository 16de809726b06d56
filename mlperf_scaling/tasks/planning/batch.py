"""The global batch and the largest count it keeps busy.

A step of B tokens in sequences of s splits into B / s sequences: at most that many data-parallel replicas, each
holding one copy of the model on M accelerators (tensor, pipeline and context parallelism). So the largest useful count
is B / s x M: beyond it an accelerator has no part of a sequence to work on, and a step takes no less time. M is the
smallest power of two whose accelerators hold the weights and gradients in 16 bits (4 bytes a parameter, 2 for LoRA's
frozen weights) in half their memory, the rest left to activations and the optimiser state the replicas share
(a distributed optimiser); and, where the batch has fewer sequences than that would need, tensor parallelism within a
node of NODE accelerators, as MLPerf's submissions do (Llama 3.1 8B on 512 GB200 with 64 sequences a step). For a
mixture of experts M is the dense path's (the active parameters); its experts spread over the replicas (expert
parallelism), which the memory check of every parameter covers.

A model-parallel group of M accelerators is TP = min(M, TENSOR_PARALLEL_MAX) wide and PP = M / TP pipeline stages deep.
A step gives each replica m = B / s / (N / M) sequences, its micro-batches; a pipeline fills and drains once a step,
idle for (PP - 1) of them (Narayanan et al., SC'21, section 2.2), so a step computes m / (m + (PP - 1) / v) of its time,
v the stages each accelerator interleaves (layers / PP where m >= PP; from 1 at m = 1, where a step is one sequence
through every stage, to that at m = PP). With one sequence per
replica a step is as long as one sequence through every stage: what the batch allows.

The batch is the user's (`--global-batch-tokens`) or what public runs of that size used (reference/global_batches.tsv,
each with its source): their batches' geometric mean, each run weighted by how close its size is (exp(-ln(P / P_run)^2
/ 2), one e-fold of parameters), as the pace weighs the benchmarks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mlperf_scaling.reference.lookup import global_batches
from mlperf_scaling.tasks.planning.work import LORA_BYTES_PER_PARAMETER, Request, human_count, layers, size_weights

NODE = 8  # accelerators of a node: tensor parallelism within it is how a batch of few sequences keeps more busy
TENSOR_PARALLEL_MAX = 8  # tensor parallelism beyond a node's accelerators is rare: the largest model-parallel degree is
# this x one pipeline stage per layer
WEIGHTS_AND_GRADIENTS = 4.0  # bytes a parameter: 16-bit weights and gradients, on each model-parallel shard
MODEL_PARALLEL_MEMORY = 0.5  # of an accelerator's memory for them; activations and the sharded optimiser state take the rest
MAX_BATCH_TOKENS = 1e9  # fifteen times the largest step public runs took (Kimi K2's 67M): beyond, a step nobody trains


@dataclass(frozen=True)
class Batch:
    """The global batch of a plan, where it comes from, and the counts it bounds."""

    tokens: float
    sequences: int  # whole sequences a step (at least 1)
    given: bool  # the user's; else public runs of that size
    basis: str  # for a person: the user's, or the runs leaned on
    model_parallel: int  # the smallest degree that holds the model
    largest_model_parallel: int  # tensor parallelism up to TENSOR_PARALLEL_MAX x a stage per layer
    largest_useful: int  # accelerators the batch keeps busy: sequences x max(model_parallel, NODE)


def default_batch_tokens(parameters: float) -> tuple[float, str]:
    """The batch public runs of this size used, and the runs it leans on most."""
    runs = global_batches()
    sizes = np.array([run.parameters for run in runs])
    weights = size_weights(sizes, parameters)
    if weights.sum() < 1e-12:  # far beyond every public run: the nearest alone
        weights = (np.abs(np.log(sizes / parameters)) == np.abs(np.log(sizes / parameters)).min()).astype(float)
    tokens = float(np.exp(np.sum(weights * np.log([run.batch_tokens for run in runs])) / weights.sum()))
    nearest = [runs[i] for i in np.argsort(-weights)[:3]]
    named = ", ".join(f"{run.model} {human_count(run.batch_tokens)}" for run in nearest)
    return tokens, f"public runs of about this size (reference/global_batches.tsv: {named}, ...)"


def model_parallel_degree(active_parameters: float, lora: bool, memory_gb: float | None) -> int:
    """The smallest power of two of accelerators whose memory holds the dense path's weights and gradients (LoRA's
    frozen weights alone); 1 where the memory is unknown."""
    if memory_gb is None:
        return 1
    per_parameter = LORA_BYTES_PER_PARAMETER if lora else WEIGHTS_AND_GRADIENTS
    needed = active_parameters * per_parameter / (MODEL_PARALLEL_MEMORY * memory_gb * 1e9)
    return 2 ** max(0, math.ceil(math.log2(max(needed, 1.0))))


def largest_model_parallel(request: Request) -> int:
    """Tensor parallelism within a node times one pipeline stage per layer."""
    return TENSOR_PARALLEL_MAX * layers(request.active_parameters)


def pipeline_efficiency(active_parameters: float, lora: bool, memory_gb: float | None, seq_len: float, batch_tokens: float,
                        accelerators: float) -> float:
    """The share of a step's time its pipeline computes at N accelerators: m / (m + (PP - 1) / v)."""
    needed = model_parallel_degree(active_parameters, lora, memory_gb)
    sequences = max(batch_tokens / seq_len, 1.0)
    degree = min(max(needed, math.ceil(accelerators / sequences)), max(accelerators, 1.0))  # more where the batch has too few sequences
    stages = max(degree / TENSOR_PARALLEL_MAX, 1.0)
    per_replica = max(sequences * degree / accelerators, 1.0)
    most = max(layers(active_parameters) / stages, 1.0)
    # interleaving needs a micro-batch for every stage; with one, the pipeline is one sequence through every stage
    interleaved = most if per_replica >= stages else 1.0 + (most - 1.0) * (per_replica - 1.0) / (stages - 1.0)
    return per_replica / (per_replica + (stages - 1.0) / interleaved)


def plan_batch(request: Request, memory_gb: float | None) -> Batch:
    """The batch of a request, its model-parallel degree and the largest count it keeps busy."""
    if request.global_batch_tokens is not None:
        tokens, given, basis = request.global_batch_tokens, True, "--global-batch-tokens"
    else:
        tokens, basis = default_batch_tokens(request.parameters)
        given = False
    sequences = max(1, math.floor(tokens / request.seq_len))
    degree = model_parallel_degree(request.active_parameters, request.lora, memory_gb)
    return Batch(tokens, sequences, given, basis, degree, largest_model_parallel(request), sequences * max(degree, NODE))
