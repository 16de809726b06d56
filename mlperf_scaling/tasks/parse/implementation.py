"""How each implementation ran, read from the submitter's own files beside results/: precision, parallelism and batch.

A round's repository holds `<Submitter>/benchmarks/<benchmark>/[implementations/<impl>/]`: NVIDIA-style
`config_<SYSTEM>_<nodes>x<gpus>x<batch>...sh` files that `source` common ones, run scripts with framework flags, YAML
configurations. A config file is read as the shell would read its assignments: in order, following `source`, a later
assignment winning (`config_common_fp4.sh` sets FP8=False after `config_common.sh` set it True). What a setting means
is data, in reference/precision_settings.tsv; where a file says several, the lowest precision wins. Files that are not
config files (run scripts, YAML) give the implementation's default, which a config's own chain outranks. NVIDIA's FP4
LoRA recipe "heals" at FP8 from step HEALING_ITER: such a run has two phases, named.

Evidence is the file and line. Nothing here guesses which config a result ran: tasks/parse/config_match.py does,
and says when it cannot.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import PurePosixPath

# the files an implementation's settings live in; code (*.py) is not read, nor anything large
_IMPLEMENTATION_FILE = re.compile(r"(\.sh|\.sub|\.ya?ml|\.json|\.bash|\.env)$|^readme", re.I)
MAX_IMPLEMENTATION_BYTES = 300_000
_CONFIG_FILE = re.compile(r"^config_.+\.sh$", re.I)
# shared settings, not a system's: config_common*.sh, config_DGXA100_common.sh, config_mounts.sh
_NOT_A_SYSTEM = re.compile(r"(^|_)(common|mounts)(_|$)", re.I)
_SHAPE = re.compile(r"\d+x\d+", re.I)
_ASSIGN = re.compile(r"^\s*(?:export\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(.+?)\s*(?:;.*|#.*)?$")
_CONDITIONAL = re.compile(r"&&|\|\||^\s*(?:if|elif|while|case)\b|\[\[|\[ |^\s*#")
_EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_DEGREE_NAMES = {
    "tensor_parallelism": ("TENSOR_MODEL_PARALLEL", "TP", "TP_SIZE", "TENSOR_PARALLEL_SIZE"),
    "pipeline_parallelism": ("PIPELINE_MODEL_PARALLEL", "PP", "PP_SIZE", "PIPELINE_PARALLEL_SIZE"),
    "context_parallelism": ("CONTEXT_PARALLEL", "CP", "CP_SIZE", "CONTEXT_PARALLEL_SIZE"),
    "expert_parallelism": ("EXPERT_MODEL_PARALLEL", "EP", "EP_SIZE", "EXPERT_PARALLEL_SIZE"),
    "micro_batch_size": ("MICRO_BATCH_SIZE", "MINIBS", "MBS"),
    "global_batch_size": ("GLOBAL_BATCH_SIZE", "GBS"),
}
# lowest first: where a file says several, the lowest is what the linear layers ran at
_ORDER = ("mxfp4", "nvfp4", "fp4", "int4", "mxfp6", "fp8", "int8", "fp16", "bfloat16", "tf32", "fp32", "fp64")
_FP4_RECIPES = {"nvfp4": "nvfp4", "mxfp4": "mxfp4"}
_NARROWER_OPTION = re.compile(r"--[\w-]*(?:fp8|fp4)[\w-]*(?<!-measure-interval)(?<!-interval)", re.I)
_SCRIPT_ASSIGNMENT = re.compile(r"(?:^|\s)([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;]+)")
# an NVIDIA-style config (the launcher's variables): a copy of the reference implementation's, whose run scripts it uses
_NVIDIA_STYLE = ("DGXNNODES", "DGXSYSTEM", "DGXNGPU")
_HEALING = {"fp8_ds": "fp8", "mxfp8": "fp8", "fp8": "fp8", "fp8_cs": "fp8", "bf16": "bfloat16"}


# config folders named otherwise than the results' benchmark folder, by submitters in shipped rounds
FOLDER_ALIASES = {"ft-llm": "llama2_70b_lora", "llm_finetune": "llama2_70b_lora", "llama2-70b_lora": "llama2_70b_lora",
                  "dlrm_v2": "dlrm_dcnv2", "llama3_8b": "llama31_8b"}


def folder_key(folder: str) -> str:
    """A config folder's benchmark: `gpt3.4.28` (a second copy of NVIDIA's, by a partner) is gpt3."""
    plain = re.sub(r"(\.\d+)+$", "", folder.lower())
    return FOLDER_ALIASES.get(plain, plain.replace("-", "_"))


def is_implementation_file(path: str, size: int) -> bool:
    """A file of `<Submitter>/benchmarks/...` worth reading for how the run was configured."""
    parts = path.split("/")
    return len(parts) >= 4 and parts[1] == "benchmarks" and size <= MAX_IMPLEMENTATION_BYTES and bool(_IMPLEMENTATION_FILE.search(parts[-1]))


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class PrecisionReading:
    """The linear layers' precision a set of files states, with the file and line that say it."""

    precision: str | None = None
    recipe: str | None = None  # mxfp8, tensorwise, nvfp4 ...: how the narrow format is scaled
    phases: tuple[tuple[str, int | None], ...] = ()  # ((precision, from step), ...): two where the run switches
    evidence: str | None = None

    @property
    def key(self) -> tuple:
        return (self.precision, self.phases)


@dataclass(frozen=True)
class ImplementationConfig:
    """One config file (or run script standing for one) and what it says."""

    path: str
    submitter: str
    benchmark_folder: str
    implementation: str  # the folder below the benchmark's ('' directly under it)
    name: str  # the file's stem without `config_`: what NVIDIA's logs print after :::DLPAL
    precision: PrecisionReading
    settings: dict[str, int] = field(default_factory=dict)  # tensor_parallelism ... global_batch_size
    settings_evidence: str | None = None
    from_scripts: bool = False  # the precision is the implementation's run scripts', not the config's own


@dataclass(frozen=True)
class _Rule:
    setting: str
    pattern: re.Pattern
    precision: str
    meaning: str


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    text = resources.files("mlperf_scaling.reference").joinpath("precision_settings.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t")
    return tuple(_Rule(row["setting"], re.compile(row["pattern"], re.M), row["precision"], row["meaning"]) for row in rows)


def _unquote(value: str) -> str:
    value = value.strip()
    out: list[str] = []
    quote: str | None = None
    for char in value:
        if quote is None and char == "#" and (not out or out[-1].isspace()):
            break
        if char in "\"'" and quote in (None, char):
            quote = None if quote == char else char
            continue
        out.append(char)
    return "".join(out).strip().rstrip(";").strip()


def _expand(value: str, variables: dict[str, Setting], folder: str) -> str:
    value = value.replace("$(dirname ${BASH_SOURCE[0]})", folder).replace("${BASH_SOURCE%/*}", folder)

    def one(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        known = variables.get(name)
        if known is not None and known.value != "":
            return known.value
        return match.group(2) or ""

    return _EXPANSION.sub(one, value)


def _lookup(files: dict[str, str], folder: str, target: str, benchmark_root: str) -> str | None:
    """The file a `source` line names: beside the config, else elsewhere in the same benchmark's folder."""
    name = PurePosixPath(target).name
    beside = f"{folder}/{name}"
    if beside in files:
        return beside
    elsewhere = sorted(path for path in files if path.startswith(benchmark_root + "/") and path.rsplit("/", 1)[-1] == name)
    return elsewhere[0] if elsewhere else None


def read_assignments(files: dict[str, str], path: str, benchmark_root: str) -> tuple[dict[str, Setting], list[str]]:
    """The variables a config file leaves set, as the shell would: in order, through the files it sources; and the
    files it sources that are not there (Lambda's GB300 config sources a GB200 one it did not publish)."""
    variables: dict[str, Setting] = {}
    absent: list[str] = []

    def read(current: str, depth: int, seen: frozenset[str]) -> None:
        folder = current.rsplit("/", 1)[0]
        for number, line in enumerate(files[current].splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            if (sourced := _SOURCE.match(line)) is not None:
                target = _lookup(files, folder, _expand(_unquote(sourced.group(1)), variables, folder), benchmark_root)
                if target is not None and target not in seen and depth < 6:
                    read(target, depth + 1, seen | {target})
                elif target is None and "$" not in sourced.group(1).replace("$(dirname ${BASH_SOURCE[0]})", ""):
                    absent.append(f"{current}:{number} sources {PurePosixPath(_unquote(sourced.group(1))).name}, which is not there")
                continue
            if (assigned := _ASSIGN.match(line)) is not None:
                name, raw = assigned.groups()
                value = _expand(_unquote(raw), variables, folder)
                variables[name] = Setting(name, value, current, number)

    read(path, 0, frozenset({path}))
    return variables, absent


def _lowest(found: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(precision, evidence) of the lowest precision found."""
    known = [item for item in found if item[0] in _ORDER]
    return min(known, key=lambda item: _ORDER.index(item[0])) if known else None


def _normal(value: str) -> str:
    text = value.strip().strip("'\"").lower()
    return {"bf16": "bfloat16", "mxfp8": "fp8", "float16": "fp16", "float32": "fp32", "fp4": "nvfp4"}.get(text, text)


def precision_of_settings(variables: dict[str, Setting]) -> PrecisionReading:
    """What the assignments of one config chain say of the linear layers' precision."""
    found: list[tuple[str, str]] = []
    for rule in _rules():
        for setting in variables.values():
            text = f"{setting.name}={setting.value}"
            if rule.setting == "variable":
                hit = rule.pattern.search(text)
            else:
                hit = rule.pattern.search(setting.value)
            if hit is None:
                continue
            precision = _normal(setting.value) if rule.precision == "value" else rule.precision
            found.append((precision, f"{setting.where} {text} ({rule.meaning})"))
    lowest = _lowest(found)
    if lowest is None:
        return PrecisionReading()
    precision, evidence = lowest
    recipe = None
    if precision in ("nvfp4", "fp4"):
        named = variables.get("FP4_RECIPE")
        precision = _FP4_RECIPES.get(named.value.lower(), "nvfp4") if named is not None else "nvfp4"
        recipe = precision
    elif precision == "fp8" and (named := variables.get("FP8_RECIPE")) is not None and named.value:
        recipe = named.value.lower()
    phases: tuple[tuple[str, int | None], ...] = ()
    healing, healing_precision = variables.get("HEALING_ITER"), variables.get("HEALING_PRECISION")
    if precision in ("nvfp4", "mxfp4") and healing is not None and healing.value.isdigit() and int(healing.value) > 0:
        then = _HEALING.get((healing_precision.value if healing_precision else "fp8_ds").lower(), "fp8")
        phases = ((precision, 0), (then, int(healing.value)))
        evidence += f"; from step {healing.value} at {then} ({healing.where} HEALING_ITER"
        evidence += f", {healing_precision.where} HEALING_PRECISION={healing_precision.value})" if healing_precision else ")"
    return PrecisionReading(precision, recipe, phases, evidence)


def precision_of_scripts(files: dict[str, str], paths: list[str]) -> PrecisionReading:
    """What the unconditional lines of run scripts and YAML configurations say (flags, `precision: 16`)."""
    found: list[tuple[str, str]] = []
    flags = [rule for rule in _rules() if rule.setting == "flag"]
    variables = [rule for rule in _rules() if rule.setting == "variable"]
    for path in paths:
        for number, line in enumerate(files[path].splitlines(), 1):
            if _CONDITIONAL.search(line):
                continue
            for rule in flags:
                if rule.pattern.search(line):
                    found.append((rule.precision, f"{path}:{number} {line.strip()[:80]} ({rule.meaning})"))
            for name, raw in _SCRIPT_ASSIGNMENT.findall(line):  # tinygrad's `export DEFAULT_FLOAT="HALF" GPUS=6`
                text = f"{name}={_unquote(raw)}"
                for rule in variables:
                    if rule.precision != "value" and rule.pattern.search(text):
                        found.append((rule.precision, f"{path}:{number} {text} ({rule.meaning})"))
    lowest = _lowest(found)
    if lowest is not None and _ORDER.index(lowest[0]) > _ORDER.index("int8"):
        # a launcher that offers a narrower format as an option (Habana's run_gpt.sh: `-te | --use-fp8-transformer-engine`)
        # does not say which was chosen: its 16-bit default is not the run's word
        for path in paths:
            for number, line in enumerate(files[path].splitlines(), 1):
                if not line.lstrip().startswith("#") and (offered := _NARROWER_OPTION.search(line)) is not None:
                    return PrecisionReading(evidence=f"{path}:{number} offers {offered.group(0)}: the 16-bit default ({lowest[1]}) may not be what ran")
    return PrecisionReading(*((lowest[0], None, (), lowest[1]) if lowest else ()))


def _settings(variables: dict[str, Setting]) -> tuple[dict[str, int], str | None]:
    out: dict[str, int] = {}
    where: list[str] = []
    for column, names in _DEGREE_NAMES.items():
        for name in names:
            setting = variables.get(name)
            if setting is not None and setting.value.isdigit() and 0 < int(setting.value) < 1_000_000:
                out[column] = int(setting.value)
                where.append(f"{setting.where} {name}={setting.value}")
                break
    return out, "; ".join(where) or None


def implementation_configs(files: dict[str, str]) -> list[ImplementationConfig]:
    """Every config of every implementation in a round's files (repository paths, relative to the round's root).

    An implementation with config_*.sh files has one per system config; one without has its run scripts stand for
    configs when they disagree (Habana's fp8 and bf16 launchers), else one reading for the whole implementation."""
    folders: dict[tuple[str, str, str], list[str]] = {}
    flat = {tuple(path.split("/")[:3]) for path in files if path.count("/") == 3}  # benchmarks with files of their own
    for path in files:
        parts = path.split("/")
        if len(parts) < 4 or parts[1] != "benchmarks":
            continue
        if parts[3] == "implementations" and len(parts) > 5:
            implementation = parts[4]
        elif len(parts) > 4 and tuple(parts[:3]) not in flat:
            implementation = parts[3]  # Intel's dlrm_v2/torchrec_cpu/: an implementation without the implementations/ level
        else:
            implementation = ""
        folders.setdefault((parts[0], parts[2], implementation), []).append(path)
    configs: list[ImplementationConfig] = []
    silent: list[tuple[int, str]] = []  # (index in configs, benchmark): NVIDIA-style configs whose own files say nothing
    defaults: dict[str, set[tuple]] = {}  # benchmark -> the run scripts' readings of its implementations that have one
    chains_say: set[str] = set()  # benchmarks some config of which states a precision itself (FP8=True ...)
    incomplete: list[tuple[int, str, PrecisionReading]] = []  # configs sourcing a file not published, with their scripts' reading
    for (submitter, benchmark, implementation), paths in sorted(folders.items()):
        root = paths[0].split("/" + implementation + "/")[0] + "/" + implementation if implementation else f"{submitter}/benchmarks/{benchmark}"
        benchmark_root = f"{submitter}/benchmarks/{benchmark}"
        names = {path: path.rsplit("/", 1)[-1] for path in paths}
        sourced = _sourced_names(files, paths)
        system_configs = sorted(path for path in paths if _CONFIG_FILE.match(names[path]) and not _NOT_A_SYSTEM.search(_stem(names[path]))
                                and not (names[path] in sourced and not _SHAPE.search(names[path])))
        others = sorted(path for path in paths if not _CONFIG_FILE.match(names[path]) and not names[path].lower().startswith("readme"))
        default = precision_of_scripts(files, others)
        if default.precision is not None and system_configs:
            defaults.setdefault(folder_key(benchmark), set()).add((default.precision, default.evidence))
        if system_configs:
            for path in system_configs:
                variables, absent = read_assignments(files, path, benchmark_root)
                reading = precision_of_settings(variables)
                from_scripts = reading.precision is None and not absent and default.precision is not None
                if reading.precision is not None:
                    chains_say.add(folder_key(benchmark))
                elif absent and default.precision is not None:
                    incomplete.append((len(configs), folder_key(benchmark), default))
                if reading.precision is None:
                    # the run scripts' default holds only where the config is read whole: an absent file may set FP8
                    reading = default if not absent else PrecisionReading(evidence="; ".join(absent))
                settings, where = _settings(variables)
                if reading.precision is None and not absent and any(name in variables for name in _NVIDIA_STYLE):
                    silent.append((len(configs), folder_key(benchmark)))
                configs.append(ImplementationConfig(path, submitter, benchmark, implementation, _stem(names[path]), reading, settings, where,
                                                    from_scripts))
            continue
        # the launchers at the implementation's top stand for configs; deeper scripts (Habana's Megatron-DeepSpeed/scripts/
        # run_bloom13b.sh) only add to its default
        top = root.count("/") + 1
        readings = {path: precision_of_scripts(files, [path]) for path in others if path.count("/") == top}
        said = {reading.key for reading in readings.values() if reading.precision is not None}
        if len(said) > 1:
            for path, reading in readings.items():
                if reading.precision is not None:
                    configs.append(ImplementationConfig(path, submitter, benchmark, implementation, _stem(names[path]), reading))
        elif default.precision is not None:
            configs.append(ImplementationConfig(root, submitter, benchmark, implementation, implementation or benchmark, default))
    for index, benchmark, default in incomplete:
        # an absent file could set the precision only where the benchmark's configs ever do; ResNet's never do
        if benchmark not in chains_say:
            absent_said = configs[index].precision.evidence
            configs[index] = replace(configs[index], from_scripts=True, precision=replace(
                default, evidence=f"{default.evidence}; {absent_said}, but no config of {benchmark} in the round sets a precision itself"))
    for index, benchmark in silent:
        # a partner's copy of the reference launcher, without its run scripts: those of the round's other copies hold, when
        # they agree (NeMo's Stable Diffusion sets `precision: 16` in conf/custom.yaml for every system)
        said = defaults.get(benchmark, set())
        if len({precision for precision, _ in said}) == 1:
            precision, evidence = sorted(said)[0]
            reading = PrecisionReading(precision, evidence=f"{evidence}, the run scripts every other implementation of {benchmark} in the "
                                                                f"round with them shares ({len(said)} readings), which this NVIDIA-style config uses")
            configs[index] = replace(configs[index], precision=reading)
    return configs


_MENTIONED_CONFIG = re.compile(r"config_([A-Za-z0-9][\w.\-]*?)\.sh")


def readme_mentions(files: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """README path -> the config names it mentions: NVIDIA's per-system folders hold only a README that says which
    config of the shared implementation the system sourced."""
    return {path: tuple(dict.fromkeys(_MENTIONED_CONFIG.findall(text)))
            for path, text in files.items() if path.rsplit("/", 1)[-1].lower().startswith("readme") and "config_" in text}


def _sourced_names(files: dict[str, str], paths: list[str]) -> set[str]:
    """The file names other files of an implementation `source` (config_fp8.sh): settings shared, not a system's."""
    names = set()
    for path in paths:
        for line in files[path].splitlines():
            if (sourced := _SOURCE.match(line)) is not None:
                names.add(PurePosixPath(_unquote(sourced.group(1))).name)
    return names


def _stem(name: str) -> str:
    stem = re.sub(r"\.(sh|sub|ya?ml|json|bash)$", "", name, flags=re.I)
    return stem[len("config_"):] if stem.lower().startswith("config_") else stem
