"""What a language model's training is: the request a user makes (size, sequence length, accelerator, precision,
batch, count) and the work it implies, in FLOPs per token and in total.

The FLOPs are the model's (PaLM, appendix B): 6 x active parameters per token for pretraining (4 x for LoRA, whose
frozen weights get no gradient), plus attention, 12 x layers x d_model x sequence length. A user gives parameters,
not layers, so d_model comes from the parameters at the measured models' aspect ratio (d_model / layers about 128:
GPT-3 175B 12288 / 96, Llama 3.1 8B 4096 / 32, 405B 16384 / 126), which puts attention at sequence length /
(6 d_model) of the dense FLOPs: 4 % for GPT-3 at 2,048 tokens, 32 % for Llama 3.1 8B at 8,192. Counting it is what
lets utilisation transfer between sequence lengths.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ASPECT_RATIO = 128.0  # d_model / layers of the measured models
SIZE_BANDWIDTH = 1.0  # in ln(parameters): a model e times larger or smaller than the one planned weighs exp(-1/2)
BYTES_PER_PARAMETER = 16  # mixed-precision Adam: 16-bit weights and gradients, 32-bit master weights and two moments
LORA, LORA_BYTES_PER_PARAMETER = "LoRA fine-tuning", 2  # frozen 16-bit weights; the adapters' state is negligible
PRETRAINING = "pretraining"  # benchmark_work.tsv's other kind of training
# the precisions a request may name -> the datasheet's columns
PRECISION_COLUMN = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "fp8": "fp8", "mxfp8": "fp8", "int8": "int8", "fp6": "fp6",
                    "mxfp6": "fp6", "fp4": "fp4", "nvfp4": "fp4", "mxfp4": "fp4"}


def human_count(value: float) -> str:
    """70e9 as 70B, 1e12 as 1T, 8192 as 8.19K: parameters, tokens and lengths as people say them (1e+30 beyond 1,000T)."""
    if value >= 1e15:
        return f"{value:.3g}"
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= size:
            return f"{value / size:.3g}{suffix}"
    return f"{value:.3g}"


def size_weights(sizes: np.ndarray, parameters: float) -> np.ndarray:
    """How much models of these sizes speak for one of `parameters`: exp(-ln(P / P_i)^2 / 2), one e-fold of parameters
    (the pace weighs the benchmarks so, the batch the public runs)."""
    return np.exp(-((np.log(sizes / parameters) / SIZE_BANDWIDTH) ** 2) / 2)


def d_model(active_parameters: float) -> float:
    """The hidden size of a transformer of this many (active) parameters at the measured aspect ratio (12 L d^2 = P)."""
    return (ASPECT_RATIO * active_parameters / 12.0) ** (1.0 / 3.0)


def layers(active_parameters: float) -> int:
    """Its number of layers at that aspect ratio (at least 1)."""
    return max(1, round(d_model(active_parameters) / ASPECT_RATIO))


def attention_share(active_parameters: float, seq_len: float) -> float:
    """Attention's FLOPs over the dense layers' (12 L d s over 6 P, with 12 L d^2 = P): s / (6 d)."""
    return seq_len / (6.0 * d_model(active_parameters))


def flops_per_token(active_parameters: float, seq_len: float, lora: bool = False) -> float:
    """A token's training FLOPs, attention counted: 6 x active parameters (4 x for LoRA) plus attention's share of it."""
    return (4.0 if lora else 6.0) * active_parameters * (1.0 + attention_share(active_parameters, seq_len))


def training_flops(active_parameters: float, tokens: float, seq_len: float) -> float:
    """A pretraining's model FLOPs, attention counted."""
    return flops_per_token(active_parameters, seq_len) * tokens


@dataclass(frozen=True)
class Request:
    """A model to plan: its size, its sequence length, the accelerator; `accelerators` None where not chosen yet;
    `global_batch_tokens` and `model_parallel` None where the planner picks them."""

    active_parameters: float
    parameters: float
    seq_len: float
    accelerator_group: str
    precision: str | None = None  # None: 16-bit mixed precision, the usual one of production runs
    accelerators: int | None = None
    bytes_per_parameter: float = BYTES_PER_PARAMETER  # 2 for LoRA: frozen 16-bit weights, no optimiser state
    accelerator_name: str | None = None  # the published name asked for, where it names a part of the group (A100-SXM4-80GB)
    global_batch_tokens: float | None = None  # tokens per optimiser step
    model_parallel: int | None = None  # accelerators that hold one copy of the model (tensor x pipeline x context)

    @property
    def moe(self) -> bool:
        return self.parameters > self.active_parameters

    @property
    def lora(self) -> bool:
        return self.bytes_per_parameter == LORA_BYTES_PER_PARAMETER
