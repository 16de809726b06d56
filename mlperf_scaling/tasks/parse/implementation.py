"""How each implementation ran, read from the submitter's own files beside results/: precision, parallelism and batch.

A round's repository holds `<Submitter>/benchmarks/<benchmark>/[implementations/<impl>/]`: NVIDIA-style
`config_<SYSTEM>_<nodes>x<gpus>x<batch>...sh` files that `source` common ones, run scripts with framework flags, YAML
configurations. A config is read as the shell reads it (tasks/parse/shell_config.py). What a setting means is data, in
reference/precision_settings.tsv; where a config says several, the lowest precision wins. Files that are not config
files (run scripts, YAML) give the implementation's default, which a config's own chain outranks, and which does not
hold where the chain turns that precision off (FP8=False). NVIDIA's FP4 LoRA recipe "heals" at FP8 from step
HEALING_ITER: such a run has two phases, named.

Evidence is the file and line. Nothing here guesses which config a result ran: tasks/parse/config_match.py does,
and says when it cannot.
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, field, replace
from importlib import resources

from mlperf_scaling.tasks.parse.shell_config import MAX_LINE, Setting, ShellFiles, top_level_lines, unquote

# the files an implementation's settings live in; code (*.py) is not read, nor anything large
_IMPLEMENTATION_FILE = re.compile(r"(\.sh|\.sub|\.ya?ml|\.bash|\.env)$|^config.*\.json$|^readme", re.I)
MAX_IMPLEMENTATION_BYTES = 300_000
# copies a submitter kept aside (Oracle's v4.1 configs/config.bak/): not what ran
_SET_ASIDE = re.compile(r"(\.bak|\.orig|\.old)$|^(bak|backup|backups|old|archive|unused|deprecated)$", re.I)
_CONFIG_FILE = re.compile(r"^config_.+\.sh$", re.I)
# scripts that fetch, convert, check or package, not train: their flags are no run's (read no further)
_DATA_FILE = re.compile(r"\.(ya?ml|json)$", re.I)
_NOT_A_LAUNCHER = re.compile(r"download|prepare|preprocess|convert|dataset|checkpoint|install|docker|clean|verify|md5|(^|_)test|"
                             r"bind|mount|profil|nsys|hosts|copy_|sqsh|build|setup|upload|split|shard|tokeni", re.I)
# shared settings, not a system's: config_common*.sh, config_DGXA100_common.sh, config_mounts.sh
_NOT_A_SYSTEM = re.compile(r"(^|_)(common|mounts)(_|$)", re.I)
_SHAPE = re.compile(r"\d+x\d+", re.I)
_DEGREE_NAMES = {
    "tensor_parallelism": ("TENSOR_MODEL_PARALLEL", "TP", "TP_SIZE", "TENSOR_PARALLEL_SIZE"),
    "pipeline_parallelism": ("PIPELINE_MODEL_PARALLEL", "PP", "PP_SIZE", "PIPELINE_PARALLEL_SIZE"),
    "context_parallelism": ("CONTEXT_PARALLEL", "CP", "CP_SIZE", "CONTEXT_PARALLEL_SIZE"),
    "expert_parallelism": ("EXPERT_MODEL_PARALLEL", "EP", "EP_SIZE", "EXPERT_PARALLEL_SIZE"),
    "micro_batch_size": ("MICRO_BATCH_SIZE", "MINIBS", "MBS"),
    "global_batch_size": ("GLOBAL_BATCH_SIZE", "GBS"),
}
_COUNT = re.compile(r"[0-9]{1,7}")
# lowest first: where a file says several, the lowest is what the linear layers ran at
_ORDER = ("mxfp4", "nvfp4", "fp4", "int4", "mxfp6", "fp8", "int8", "fp16", "bfloat16", "tf32", "fp32", "fp64")
_FP4_RECIPES = {"nvfp4": "nvfp4", "mxfp4": "mxfp4"}
_OPTION = re.compile(r"--[\w-]+")
_SCRIPT_ASSIGNMENT = re.compile(r"(?:^|\s)([A-Z][A-Z0-9_]*)=(\"[^\"]*\"|'[^']*'|[^\s;]+)")
_ENVIRONMENT_OPTION = re.compile(r"(?:^|\s)(?:-e|--env)\s+[A-Z]")  # docker run -e FP8=1: another program's setting
# a line worth trying the flag rules on holds one of these: most lines of a script hold none
_FLAG_WORDS = re.compile(r"fp|bf16|amp|dtype|precision|quantization|transformer_engine|master-weights|float|autocast|mixed|half", re.I)
# an NVIDIA-style config (the launcher's variables): a copy of the reference implementation's, whose run scripts it uses
_NVIDIA_STYLE = ("DGXNNODES", "DGXSYSTEM", "DGXNGPU")
_HEALING = {"fp8_ds": "fp8", "mxfp8": "fp8", "fp8": "fp8", "fp8_cs": "fp8", "bf16": "bfloat16"}
_OFF = re.compile(r"(?i)false|0|no|off|none|")
# the switch that turns a precision class off in a config: FP8=False after a common file turned it on
_SWITCH = {"fp8": "FP8", "nvfp4": "FP4", "mxfp4": "FP4"}

# config folders named otherwise than the results' benchmark folder, by submitters in shipped rounds
FOLDER_ALIASES = {"ft-llm": "llama2_70b_lora", "llm_finetune": "llama2_70b_lora", "llama2-70b_lora": "llama2_70b_lora",
                  "llama2_70b": "llama2_70b_lora", "dlrm_v2": "dlrm_dcnv2", "llama3_8b": "llama31_8b"}


def folder_key(folder: str) -> str:
    """A config folder's benchmark: `gpt3.4.28` (a second copy of NVIDIA's, by a partner) is gpt3."""
    plain = re.sub(r"(\.\d+)+$", "", folder.lower())
    return FOLDER_ALIASES.get(plain, plain.replace("-", "_"))


def is_implementation_file(path: str, size: int) -> bool:
    """A file of `<Submitter>/benchmarks/...` worth reading for how the run was configured."""
    parts = path.split("/")
    return (len(parts) >= 4 and parts[1] == "benchmarks" and size <= MAX_IMPLEMENTATION_BYTES
            and bool(_IMPLEMENTATION_FILE.search(parts[-1])) and not any(_SET_ASIDE.search(part) for part in parts[2:-1]))


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
    settings_evidence: dict[str, str] = field(default_factory=dict)  # each setting's file, line and assignment
    from_scripts: bool = False  # the precision is the implementation's run scripts', not the config's own
    # set in NVIDIA's launcher's variables (DGXNGPU ...), which NVIDIA's and AMD's GPU implementations share: no Gaudi's,
    # TPU's or IPU's config (Supermicro's v3.0 H100 BERT configs are not what its Gaudi2 system ran)
    gpu_launcher: bool = False


@dataclass(frozen=True)
class _Rule:
    setting: str
    pattern: re.Pattern
    precision: str
    meaning: str
    name: str | None  # a variable rule's variable (`^FP8=...`), to look it up by name


@functools.cache
def _rules() -> tuple[_Rule, ...]:
    text = resources.files("mlperf_scaling.reference").joinpath("precision_settings.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t")
    rules = []
    for row in rows:
        named = re.match(r"\^([A-Z][A-Z0-9_]*)=", row["pattern"]) if row["setting"] == "variable" else None
        rules.append(_Rule(row["setting"], re.compile(row["pattern"], re.M), row["precision"], row["meaning"], named.group(1) if named else None))
    return tuple(rules)


@functools.cache
def _variable_rules() -> dict[str, tuple[_Rule, ...]]:
    by_name: dict[str, list[_Rule]] = {}
    for rule in _rules():
        if rule.setting == "variable" and rule.name:
            by_name.setdefault(rule.name, []).append(rule)
    return {name: tuple(rules) for name, rules in by_name.items()}


def _flag_rules() -> tuple[_Rule, ...]:
    return tuple(rule for rule in _rules() if rule.setting == "flag")


def _may_say(text: str) -> bool:
    return _FLAG_WORDS.search(text) is not None


def _lowest(found: list[tuple[str, str]]) -> tuple[str, str] | None:
    """(precision, evidence) of the lowest precision found."""
    known = [item for item in found if item[0] in _ORDER]
    return min(known, key=lambda item: _ORDER.index(item[0])) if known else None


def _normal(value: str) -> str:
    text = value.strip().strip("'\"").lower()
    return {"bf16": "bfloat16", "mxfp8": "fp8", "float16": "fp16", "float32": "fp32", "fp4": "nvfp4"}.get(text, text)


def _said_by_variable(name: str, value: str) -> list[tuple[str, str]]:
    """(precision, meaning) the variable rules give one assignment."""
    text = f"{name}={value}"
    return [(_normal(value) if rule.precision == "value" else rule.precision, rule.meaning)
            for rule in _variable_rules().get(name, ()) if rule.pattern.search(text)]


def precision_of_settings(variables: dict[str, Setting]) -> PrecisionReading:
    """What the assignments of one config chain say of the linear layers' precision."""
    found: list[tuple[str, str]] = []
    flags = _flag_rules()
    for setting in variables.values():
        for precision, meaning in _said_by_variable(setting.name, setting.value):
            found.append((precision, f"{setting.where} {setting.name}={setting.value} ({meaning})"))
        if len(setting.value) <= MAX_LINE and _may_say(setting.value):
            for rule in flags:
                if rule.pattern.search(setting.value):
                    found.append((rule.precision, f"{setting.where} {setting.name}={setting.value} ({rule.meaning})"))
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
    if precision in ("nvfp4", "mxfp4") and healing is not None and _COUNT.fullmatch(healing.value) and int(healing.value) > 0:
        then = _HEALING.get((healing_precision.value if healing_precision else "fp8_ds").lower(), "fp8")
        phases = ((precision, 0), (then, int(healing.value)))
        evidence += f"; from step {healing.value} at {then} ({healing.where} HEALING_ITER"
        evidence += f", {healing_precision.where} HEALING_PRECISION={healing_precision.value})" if healing_precision else ")"
    return PrecisionReading(precision, recipe, phases, evidence)


@dataclass(frozen=True)
class _ScriptFacts:
    found: tuple[tuple[str, str], ...]  # (precision, evidence) its top-level lines state
    offers: str | None  # an option it offers that narrows the precision (Habana's --use-fp8-transformer-engine), where


class _Scripts:
    """What each run script or YAML file says, read once per round."""

    def __init__(self, shell: ShellFiles):
        self.shell = shell
        self._facts: dict[str, _ScriptFacts] = {}

    def facts(self, path: str) -> _ScriptFacts:
        if path in self._facts:
            return self._facts[path]
        found: list[tuple[str, str]] = []
        flags = _flag_rules()
        # YAML and JSON are settings throughout; a shell file's only where it runs whatever happens
        lines = (enumerate(self.shell.files[path].splitlines(), 1) if _DATA_FILE.search(path)
                 else ((line.number, line.text) for line in top_level_lines(self.shell.files[path])))
        for number, text in lines:
            if len(text) > MAX_LINE or text.lstrip().startswith("#"):
                continue
            if "&&" in text or "||" in text or _ENVIRONMENT_OPTION.search(text) or not _may_say(text):
                continue
            for rule in flags:
                if rule.pattern.search(text):
                    found.append((rule.precision, f"{path}:{number} {text.strip()[:80]} ({rule.meaning})"))
            for name, raw in _SCRIPT_ASSIGNMENT.findall(text):  # tinygrad's `export DEFAULT_FLOAT="HALF" GPUS=6`
                for precision, meaning in _said_by_variable(name, unquote(raw)):
                    if precision in _ORDER:
                        found.append((precision, f"{path}:{number} {name}={unquote(raw)} ({meaning})"))
        self._facts[path] = _ScriptFacts(tuple(found), self._offers(path))
        return self._facts[path]

    def _offers(self, path: str) -> str | None:
        text = self.shell.files[path]
        lower = text.lower()
        if "fp8" not in lower and "fp4" not in lower:
            return None
        for number, line in enumerate(text.splitlines(), 1):
            if len(line) > MAX_LINE or line.lstrip().startswith("#") or ("fp8" not in line.lower() and "fp4" not in line.lower()):
                continue
            option = next((o for o in _OPTION.findall(line) if ("fp8" in o.lower() or "fp4" in o.lower()) and not o.endswith("interval")), None)
            if option is not None:
                return f"{path}:{number} offers {option}"
        return None

    def reading(self, paths: list[str]) -> PrecisionReading:
        """What the top-level lines of these scripts say together (flags, `precision: 16`)."""
        facts = [self.facts(path) for path in paths]
        lowest = _lowest([item for fact in facts for item in fact.found])
        if lowest is None:
            return PrecisionReading()
        if _ORDER.index(lowest[0]) > _ORDER.index("int8"):
            # a launcher that offers a narrower format as an option (Habana's run_gpt.sh: `-te | --use-fp8-transformer-engine`)
            # does not say which was chosen: its 16-bit default is not the run's word
            offered = next((fact.offers for fact in facts if fact.offers), None)
            if offered is not None:
                return PrecisionReading(evidence=f"{offered}: the 16-bit default ({lowest[1]}) may not be what ran")
        return PrecisionReading(lowest[0], None, (), lowest[1])


def _settings(variables: dict[str, Setting]) -> tuple[dict[str, int], dict[str, str]]:
    out: dict[str, int] = {}
    where: dict[str, str] = {}
    for column, names in _DEGREE_NAMES.items():
        for name in names:
            setting = variables.get(name)
            if setting is not None and _COUNT.fullmatch(setting.value) and int(setting.value) > 0:
                out[column] = int(setting.value)
                where[column] = f"{setting.where} {name}={setting.value}"
                break
    return out, where


def _turned_off(variables: dict[str, Setting], precision: str | None) -> Setting | None:
    """The config's own switch for the scripts' precision, where it turns it off (FP8=False)."""
    switch = variables.get(_SWITCH.get(precision or "", ""))
    return switch if switch is not None and _OFF.fullmatch(switch.value.strip()) else None


@dataclass(frozen=True)
class _Implementation:
    submitter: str
    benchmark: str  # its folder's name
    name: str  # '' where the files lie directly under the benchmark's folder
    root: str  # its folder
    benchmark_root: str


def _implementations(files: dict[str, str]) -> dict[_Implementation, list[str]]:
    """The round's files by the implementation folder they belong to. Layouts: `<sub>/benchmarks/<bench>/implementations/
    <impl>/`, `<sub>/benchmarks/<bench>/<impl>/` (Intel's dlrm_v2/torchrec_cpu/), files directly under the benchmark's
    folder (Lenovo), and v2.1 Supermicro's `<sub>/benchmarks/implementations/<system>/<bench>/`."""
    flat = {tuple(path.split("/")[:3]) for path in files if path.count("/") == 3}  # benchmarks with files of their own
    groups: dict[_Implementation, list[str]] = {}
    for path in files:
        parts = path.split("/")
        if len(parts) < 4 or parts[1] != "benchmarks":
            continue
        if parts[2] == "implementations" and len(parts) > 5:
            key = _Implementation(parts[0], parts[4], parts[3], "/".join(parts[:5]), "/".join(parts[:5]))
        elif parts[3] == "implementations" and len(parts) > 5:
            key = _Implementation(parts[0], parts[2], parts[4], "/".join(parts[:5]), "/".join(parts[:3]))
        elif len(parts) > 4 and tuple(parts[:3]) not in flat:
            key = _Implementation(parts[0], parts[2], parts[3], "/".join(parts[:4]), "/".join(parts[:3]))
        else:
            key = _Implementation(parts[0], parts[2], "", "/".join(parts[:3]), "/".join(parts[:3]))
        groups.setdefault(key, []).append(path)
    return groups


def implementation_configs(files: dict[str, str]) -> list[ImplementationConfig]:
    """Every config of every implementation in a round's files (repository paths, relative to the round's root).

    An implementation with config_*.sh files has one per system config; one without has its run scripts stand for
    configs when they disagree (Habana's fp8 and bf16 launchers), else one reading for the whole implementation."""
    shell = ShellFiles(files)
    scripts = _Scripts(shell)
    configs: list[ImplementationConfig] = []
    silent: list[tuple[int, str]] = []  # (index in configs, benchmark): NVIDIA-style configs whose own files say nothing
    defaults: dict[str, set[tuple]] = {}  # benchmark -> the run scripts' readings of its implementations that have one
    chains_say: set[str] = set()  # benchmarks some config of which states a precision itself (FP8=True ...)
    incomplete: list[tuple[int, str, PrecisionReading]] = []  # configs sourcing a file not published, with their scripts' reading
    for implementation, paths in sorted(_implementations(files).items(), key=lambda item: item[0].root):
        benchmark = folder_key(implementation.benchmark)
        names = {path: path.rsplit("/", 1)[-1] for path in paths}
        config_files = [path for path in paths if _CONFIG_FILE.match(names[path])]
        # a file other configs source is shared, unless it is named for a shape (a README or launcher naming a config is no sign)
        sourced = shell.sourced_names(config_files)
        system_configs = sorted(path for path in config_files if not _NOT_A_SYSTEM.search(_stem(names[path]))
                                and not (names[path] in sourced and not _SHAPE.search(names[path])))
        others = sorted(path for path in paths if not _CONFIG_FILE.match(names[path]) and not names[path].lower().startswith("readme")
                        and not _NOT_A_LAUNCHER.search(names[path]))
        # a file a launcher sources that says nothing of precision and names no shape is the cluster's settings
        # (University of Florida's config_hpg.sh), not a system's config
        launched = shell.sourced_names([path for path in others if not _DATA_FILE.search(path)])
        default = scripts.reading(others)
        if default.precision is not None and system_configs:
            defaults.setdefault(benchmark, set()).add((default.precision, default.evidence))
        if not system_configs:
            configs.extend(_launchers(implementation, others, default, scripts))
            continue
        for path in system_configs:
            variables, absent = shell.read(path, (implementation.root, implementation.benchmark_root))
            reading = precision_of_settings(variables)
            if reading.precision is None and names[path] in launched and not _SHAPE.search(names[path]):
                continue
            switched = _turned_off(variables, default.precision) if reading.precision is None else None
            from_scripts = reading.precision is None and not absent and default.precision is not None and switched is None
            if reading.precision is not None:
                chains_say.add(benchmark)
            elif absent and default.precision is not None and switched is None:
                incomplete.append((len(configs), benchmark, default))
            if reading.precision is None:
                # the run scripts' default holds only where the config is read whole and does not turn it off
                reading = (default if from_scripts else PrecisionReading(evidence=f"{switched.where} {switched.name}={switched.value}, "
                                                                                    "which turns off the run scripts' default")
                           if switched is not None else PrecisionReading(evidence="; ".join(absent) or None))
            settings, where = _settings(variables)
            if reading.precision is None and not absent and switched is None and any(name in variables for name in _NVIDIA_STYLE):
                silent.append((len(configs), benchmark))
            configs.append(ImplementationConfig(path, implementation.submitter, implementation.benchmark, implementation.name,
                                                _stem(names[path]), reading, settings, where, from_scripts,
                                                any(name in variables for name in _NVIDIA_STYLE)))
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


def _launchers(implementation: _Implementation, others: list[str], default: PrecisionReading, scripts: _Scripts) -> list[ImplementationConfig]:
    """An implementation without config files: its top-level launchers stand for configs where they disagree (Habana's
    fp8 and bf16 scripts), else its one reading; deeper scripts (Megatron-DeepSpeed/scripts/run_bloom13b.sh) only add
    to the default."""
    top = implementation.root.count("/") + 1
    readings = {path: scripts.reading([path]) for path in others if path.count("/") == top}
    said = {reading.key for reading in readings.values() if reading.precision is not None}
    made = lambda path, name, reading: ImplementationConfig(path, implementation.submitter, implementation.benchmark,  # noqa: E731
                                                            implementation.name, name, reading)
    if len(said) > 1:
        return [made(path, _stem(path.rsplit("/", 1)[-1]), reading) for path, reading in readings.items() if reading.precision is not None]
    if default.precision is not None:
        return [made(implementation.root, implementation.name or implementation.benchmark, default)]
    return []


_MENTIONED_CONFIG = re.compile(r"config_([A-Za-z0-9][\w.\-]*?)\.sh")


def readme_mentions(files: dict[str, str]) -> dict[str, tuple[str, ...]]:
    """README path -> the config names it mentions: NVIDIA's per-system folders hold only a README that says which
    config of the shared implementation the system sourced."""
    return {path: tuple(dict.fromkeys(_MENTIONED_CONFIG.findall(text)))
            for path, text in files.items() if path.rsplit("/", 1)[-1].lower().startswith("readme") and "config_" in text}


def _stem(name: str) -> str:
    stem = re.sub(r"\.(sh|sub|ya?ml|json|bash)$", "", name, flags=re.I)
    return stem[len("config_"):] if stem.lower().startswith("config_") else stem
