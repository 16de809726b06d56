"""How a run was configured: its parallelism degrees, micro-batch, gradient accumulation and lowest precisions.

From v6.0 the rules ask language-model logs for `tensor_parallelism`, `pipeline_parallelism`, `context_parallelism`,
`expert_parallelism`, `micro_batch_size` and `lowest_numerical_precision_in_{linear,attn,comm}` (mlperf-logging's
mllog/examples/parallelism.py). NVIDIA's configuration names spell the same out (`..._tp1pp1cp1ep1_mxfp8`), so a log
that names its config file but not the degrees is read from the name, and `configuration_source` says which.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_DEGREES = ("tensor_parallelism", "pipeline_parallelism", "context_parallelism", "expert_parallelism")
_NAMED = re.compile(r"tp(\d+)[_-]?pp(\d+)(?:[_-]?(?:cp|sp)(\d+))?(?:[_-]?ep(\d+))?", re.I)
# precisions in a config name, most specific first; the name gives the linear layers' precision
_NAMED_PRECISION = re.compile(r"(?<![a-z0-9])(nvfp4|mxfp4|mxfp8|fp8|fp4|bf16|bfloat16|fp16|tf32|fp32)(?![a-z0-9])", re.I)
_PRECISION_NAMES = {"bf16": "bfloat16", "mxfp8": "fp8"}  # the rules' vocabulary (training_6.0.0/common.yaml)


@dataclass(frozen=True)
class RunConfiguration:
    tensor_parallelism: int | None = None
    pipeline_parallelism: int | None = None
    context_parallelism: int | None = None
    expert_parallelism: int | None = None
    data_parallelism: int | None = None
    micro_batch_size: int | None = None
    gradient_accumulation_steps: int | None = None
    precision_linear: str | None = None
    precision_attn: str | None = None
    precision_comm: str | None = None
    config_filename: str | None = None
    configuration_source: str | None = None  # 'log', 'config name', 'log and config name', or None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 0 < value < 1_000_000:
        return value
    if isinstance(value, float) and value.is_integer() and 0 < value < 1_000_000:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return _whole(int(value.strip()))
    return None


def _precision(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().lower()
    return _PRECISION_NAMES.get(text, text)


def run_configuration(logged: dict[str, Any], accelerators: int | None, global_batch_size: float | None) -> RunConfiguration:
    """The configuration of one run from its logged keys, completed from its config file's name; data parallelism is
    accelerators / (TP x PP x CP), where that divides, and gradient accumulation, when not logged, global batch /
    (micro-batch x DP)."""
    degrees = {key: _whole(logged.get(key)) for key in _DEGREES}
    from_log = any(value is not None for value in degrees.values())
    name = logged.get("config_filename") if isinstance(logged.get("config_filename"), str) else None
    from_name = False
    if name:
        named = _NAMED.search(name)
        if named is not None:
            for key, text in zip(_DEGREES, named.groups(), strict=True):
                if degrees[key] is None and text is not None:
                    degrees[key] = int(text)
                    from_name = True
    precision_linear = _precision(logged.get("lowest_numerical_precision_in_linear"))
    if precision_linear is None and name:
        named_precision = _NAMED_PRECISION.search(name)
        if named_precision is not None:
            precision_linear = _precision(named_precision.group(1))
            from_name = True
    micro = _whole(logged.get("micro_batch_size"))
    batch = _whole(global_batch_size)
    accumulation = _whole(logged.get("gradient_accumulation_steps"))
    data = None
    model_parallel = [degrees[key] for key in _DEGREES[:3]]
    if accelerators and all(value is not None for value in model_parallel[:2]):
        product = model_parallel[0] * model_parallel[1] * (model_parallel[2] or 1)  # type: ignore[operator]
        if product and accelerators % product == 0:
            data = accelerators // product
    if accumulation is None and micro and data and batch and batch % (micro * data) == 0:
        accumulation = batch // (micro * data)
    logged_any = from_log or any(
        logged.get(key) is not None for key in ("micro_batch_size", "gradient_accumulation_steps", "lowest_numerical_precision_in_linear")
    )
    source = {(True, True): "log and config name", (True, False): "log", (False, True): "config name"}.get((logged_any, from_name))
    return RunConfiguration(
        tensor_parallelism=degrees["tensor_parallelism"],
        pipeline_parallelism=degrees["pipeline_parallelism"],
        context_parallelism=degrees["context_parallelism"],
        expert_parallelism=degrees["expert_parallelism"],
        data_parallelism=data,
        micro_batch_size=micro,
        gradient_accumulation_steps=accumulation,
        precision_linear=precision_linear,
        precision_attn=_precision(logged.get("lowest_numerical_precision_in_attn")),
        precision_comm=_precision(logged.get("lowest_numerical_precision_in_comm")),
        config_filename=name,
        configuration_source=source,
    )
