"""How a run was configured: its parallelism degrees, micro-batch, gradient accumulation and lowest precisions.

From v6.0 the rules ask language-model logs for `tensor_parallelism`, `pipeline_parallelism`, `context_parallelism`,
`expert_parallelism`, `micro_batch_size` and `lowest_numerical_precision_in_{linear,attn,comm}` (mlperf-logging's
mllog/examples/parallelism.py). Real logs spell the precision keys otherwise too: AMD's v6.0 MI350X and MI355X logs
write `lowest_numerical_precision_linear` (their configs export MLLOG_LOWEST_NUMERICAL_PRECISION_LINEAR='mxfp4'), so
every spelling seen is read (PRECISION_KEYS). NVIDIA's configuration names spell the same out
(`..._tp1pp1cp1ep1_mxfp8`), so a log that names its config file but not the degrees is read from the name, and
`configuration_source` says which; `precision_source` says where the linear layers' precision came from.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

_DEGREES = ("tensor_parallelism", "pipeline_parallelism", "context_parallelism", "expert_parallelism")
_NAMED = re.compile(r"tp(\d+)[_-]?pp(\d+)(?:[_-]?(?:cp|sp)(\d+))?(?:[_-]?ep(\d+))?", re.I)
# precisions in a config name, most specific first; the name gives the linear layers' precision
_NAMED_PRECISION = re.compile(r"(?<![a-z0-9])(nvfp4|mxfp4|mxfp6|mxfp8|fp8|fp4|bf16|bfloat16|fp16|tf32|fp32|int8)(?![a-z0-9])", re.I)
# the rules' vocabulary (training_6.0.0/common.yaml: fp64, fp32, tf32, fp16, fp8, mxfp6, nvfp4, mxfp4, bfloat16, int8, ...)
_PRECISION_NAMES = {"bf16": "bfloat16", "mxfp8": "fp8", "float16": "fp16", "float32": "fp32"}
# every spelling of the precision keys seen in real logs -> the part it is of
PRECISION_KEYS = {
    "lowest_numerical_precision_in_linear": "linear",  # the rules' spelling (mllog examples, 6.0.0)
    "lowest_numerical_precision_linear": "linear",  # AMD's v6.0 logs
    "lowest_numerical_precision_in_attn": "attn",
    "lowest_numerical_precision_attn": "attn",
    "lowest_numerical_precision_in_comm": "comm",
    "lowest_numerical_precision_comm": "comm",
}


# What a log prints besides its MLPerf lines, before run_start: NeMo's configuration dump (as YAML, `0:   fp8: true`, and as
# a Python repr, `fp4='e2m1',`), NVIDIA's `:::DLPAL ... <config name>` line and AMD's `Config shell script: conf/<name>`.
_DUMP_FP4 = re.compile(r"^\s*(?:\d+:)?\s*fp4:\s*(true|false|null)\s*$|\bfp4=('e2m1'|None)(?=[,)\s]|$)", re.M | re.I)
_DUMP_FP4_RECIPE = re.compile(r"^\s*(?:\d+:)?\s*fp4_recipe:\s*(\w+)\s*$|\bfp4_recipe='(\w+)'", re.M | re.I)
_DUMP_FP8 = re.compile(r"^\s*(?:\d+:)?\s*fp8:\s*(true|false|null|hybrid|e4m3|e5m2)\s*$|\bfp8=('hybrid'|'e4m3'|'e5m2'|None|True|False)(?=[,)\s]|$)", re.M | re.I)
_DUMP_FP8_RECIPE = re.compile(r"\bfp8_recipe(?::\s*|=')mxfp8\b", re.I)
_DUMP_SIXTEEN = re.compile(r"^\s*(?:\d+:)?\s*(?:unet_precision:\s*(fp16|bf16)|precision:\s*(16|bf16|bf16-mixed|16-mixed))\s*$", re.M | re.I)
# Lightning's line for its mixed-precision wrapper: 16-bit at least, but FP8 (Transformer Engine) runs inside it too
_AMP_LINE = re.compile(r"Using (16bit|bfloat16) Automatic Mixed Precision \(AMP\)")
# BERT's run_pretraining.py prints its arguments (`Namespace(... fp16=True, ... use_transformer_engine2=True ...)`), whose
# Transformer Engine encoder runs under fp8_autocast (DATA_NOTES.md); HugeCTR's DLRM prints `Use mixed precision: True`
# (the dump is wrapped over lines, each behind its rank: `0: pg=1, ..., use_transformer_engine2=True, n_gpu=8, ...`)
_ARGUMENTS_TE2 = re.compile(r"(?<![\w.])use_transformer_engine2=True\b")
_ARGUMENTS_SIXTEEN = re.compile(r"(?<![\w.])(fp16|bf16)=True\b")
_PRINTED_NAME = re.compile(r"^:::DLPAL .* (\S+_\d+x\d+x\S*)\s*$|^Config shell script: (?:\S*/)?(config_\S+\.sh)\s*$", re.M)
_RUN_START = '"key": "run_start"'
# the benchmarks whose runs print a configuration that says their precision (NeMo's, Megatron's, MaxText's): the language
# models and the diffusion models; reading every other log for it would cost the main job a third more time
PRINTS_ITS_CONFIGURATION = ("gpt", "llama", "stable_diffusion", "flux", "deepseek", "qwen", "mixtral")
# the benchmarks whose logs print their arguments (BERT) or their framework's settings (HugeCTR's DLRM): printed_arguments
PRINTS_ITS_ARGUMENTS = ("bert", "dlrm")
_ON = {"true", "'e2m1'", "hybrid", "e4m3", "e5m2", "'hybrid'", "'e4m3'", "'e5m2'"}


@dataclass(frozen=True)
class PrintedConfiguration:
    """The precision a log's own configuration dump states, and the config name it prints; None where it prints none."""

    precision: str | None = None
    precision_evidence: str | None = None
    config_name: str | None = None
    mixed_precision: str | None = None  # Lightning's AMP line: the 16-bit wrapper, which does not rule out FP8 inside it


@functools.lru_cache(maxsize=64)
def _case_blind(word: str) -> re.Pattern:
    return re.compile(re.escape(word), re.IGNORECASE)


class _Head:
    """The text a log prints before run_start, searched only on the lines that hold a pattern's word: a NeMo log's head
    runs to 100 kB and more, and a regular expression tried at every line start of 112 MB (v5.1's language and
    diffusion logs) cost the main job seconds where finding the word costs a hundredth of that."""

    def __init__(self, text: str):
        self.text = text
        # lower() keeps offsets only for ASCII; in anything else (a log with one byte that is not UTF-8, an eighth of
        # BERT's) the word is found by a case-blind expression, whose offsets are the text's own
        self.lower = text.lower() if text.isascii() else None

    def find(self, word: str, start: int = 0) -> int:
        """Where `word` (lower case) is next in the text, whatever its case; -1 where it is not."""
        if self.lower is not None:
            return self.lower.find(word, start)
        found = _case_blind(word).search(self.text, start)
        return -1 if found is None else found.start()

    def search(self, pattern: re.Pattern, word: str | None = None) -> re.Match | None:
        """pattern.search(text), where every match of `pattern` lies on a line holding `word` (lower case)."""
        if word is None:
            return pattern.search(self.text)
        text, at = self.text, self.find(word)
        while at >= 0:
            line_start = text.rfind("\n", 0, at) + 1
            line_end = text.find("\n", at)
            line_end = len(text) if line_end < 0 else line_end
            if (found := pattern.search(text, line_start, line_end)) is not None:
                return found
            at = self.find(word, line_end)
        return None

    def first(self, pattern: re.Pattern, word: str | None = None) -> str | None:
        found = self.search(pattern, word)
        return None if found is None else next((g for g in found.groups() if g is not None), None)


def _printed_name(head: _Head) -> str | None:
    # each form looked for on the lines that hold its words, not at every line start of a head of 100 kB
    return head.first(_PRINTED_NAME, ":::dlpal") or head.first(_PRINTED_NAME, "config shell script")


def printed_arguments(text: str) -> PrintedConfiguration | None:
    """What BERT's and HugeCTR's DLRM logs print before run_start: BERT's parsed arguments (`Namespace(... fp16=True, ...
    use_transformer_engine2=True ...)`, the Transformer Engine encoder being FP8), HugeCTR's `Use mixed precision: True`
    (FP16), and NVIDIA's `:::DLPAL` config name. Each is a literal Python prints, so plain substring tests decide whether
    a pattern is tried at all: these heads run to 100 kB a log, in the thousands of logs a round."""
    end = text.find(_RUN_START)
    head_text = text if end < 0 else text[:end]
    # the lower-cased copy only where a pattern is to be tried: most of these heads say none of it
    head = _Head(head_text) if any(word in head_text for word in ("use_transformer_engine2=True", "16=True", ":::DLPAL")) else None
    precision = evidence = None
    if head is not None and "use_transformer_engine2=True" in head_text and head.search(_ARGUMENTS_TE2, "use_transformer_engine2") is not None:
        precision, evidence = "fp8", ("the arguments the log prints: use_transformer_engine2=True (BERT's encoder built from Transformer "
                                      "Engine layers under fp8_autocast)")
    elif "Use mixed precision: True" in head_text:
        precision, evidence = "fp16", "HugeCTR's log: Use mixed precision: True (FP16 with a loss scaler)"
    elif head is not None and "Namespace(" in head_text and "16=True" in head_text and (flag := head.first(_ARGUMENTS_SIXTEEN, "16=true")) is not None:
        precision, evidence = ("fp16" if flag.lower() == "fp16" else "bfloat16"), f"the arguments the log prints: {flag}=True"
    name = _printed_name(head) if head is not None and ":::DLPAL" in head_text else None
    if precision is None and name is None:
        return None
    return PrintedConfiguration(precision, evidence, name)


def printed_configuration(text: str) -> PrintedConfiguration | None:
    """Read what a log prints before run_start. The dump outranks names: NVFP4 runs were launched under names without
    `fp4` (Nebius's v5.1 B300), and FP8 runs print `fp4_recipe: nvfp4` and `precision: bf16-mixed` whatever they ran."""
    end = text.find(_RUN_START)
    head = _Head(text if end < 0 else text[:end])
    # Lightning sets up its precision plugin as training starts, a little after run_start: looked for just beyond it
    window = (end if end >= 0 else len(text)) + 100_000
    at = text.find("Automatic Mixed Precision (AMP)", 0, window)
    if at < 0 and not any(head.find(word) >= 0 for word in ("fp4", "fp8", "precision", ":::dlpal", "config shell script")):
        return None
    fp4, fp8 = head.first(_DUMP_FP4, "fp4"), head.first(_DUMP_FP8, "fp8")
    precision = evidence = None
    if fp4 is not None and fp4.lower() in _ON:
        recipe = (head.first(_DUMP_FP4_RECIPE, "fp4_recipe") or "nvfp4").lower()
        precision = recipe if recipe in ("nvfp4", "mxfp4") else "nvfp4"
        evidence = f"the configuration the log prints: fp4 {fp4}, fp4_recipe {recipe}"
    elif (fp8 is not None and fp8.lower() in _ON) or head.search(_DUMP_FP8_RECIPE, "fp8_recipe") is not None:
        mxfp8 = head.search(_DUMP_FP8_RECIPE, "fp8_recipe") is not None
        precision, evidence = "fp8", f"the configuration the log prints: fp8 {fp8 or 'on'}" + (", fp8_recipe mxfp8" if mxfp8 else "")
    elif (sixteen := head.search(_DUMP_SIXTEEN, "precision")) is not None and (fp8 is None or fp8.lower() in ("false", "null", "none")):
        value = (sixteen.group(1) or sixteen.group(2)).lower()
        precision = "fp16" if value in ("fp16", "16", "16-mixed") else "bfloat16"
        evidence = "the configuration the log prints: " + re.sub(r"^\d+:\s*", "", sixteen.group(0).strip())
    name = _printed_name(head)
    amp_line = _AMP_LINE.search(text, max(at - 40, 0), at + 40) if at >= 0 else None
    amp = amp_line.group(1) if amp_line else None
    mixed = None if amp is None else "fp16" if amp == "16bit" else "bfloat16"
    if precision is None and name is None and mixed is None:
        return None
    return PrintedConfiguration(precision, evidence, name, mixed)


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
    precision_source: str | None = None  # where precision_linear was read: the log's key, or the config name


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


def run_configuration(logged: dict[str, Any], accelerators: int | None, global_batch_size: float | None,
                      printed: PrintedConfiguration | None = None) -> RunConfiguration:
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
    logged_precision = _logged_precisions(logged)
    precision_linear, precision_source = logged_precision.get("linear", (None, None))
    if precision_linear is None and printed is not None and printed.precision is not None:
        precision_linear, precision_source = printed.precision, printed.precision_evidence
    for candidate in (name, printed.config_name if printed else None):
        if precision_linear is None and candidate:
            named_precision = _NAMED_PRECISION.search(candidate)
            if named_precision is not None:
                precision_linear = _precision(named_precision.group(1))
                precision_source = f"config name {candidate}"
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
    logged_any = from_log or bool(logged_precision) or any(logged.get(key) is not None for key in ("micro_batch_size", "gradient_accumulation_steps"))
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
        precision_attn=logged_precision.get("attn", (None, None))[0],
        precision_comm=logged_precision.get("comm", (None, None))[0],
        config_filename=name,
        configuration_source=source,
        precision_source=precision_source,
    )


def _logged_precisions(logged: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """part -> (precision, 'log key <the key>'), under whichever spelling the log used (the rules' first)."""
    found: dict[str, tuple[str, str]] = {}
    for key, part in PRECISION_KEYS.items():
        value = _precision(logged.get(key))
        if value is not None and part not in found:
            found[part] = (value, f"log key {key}")
    return found
