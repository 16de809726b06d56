"""Which config a result ran: a result folder matched to its submitter's implementation files, or said not to be.

The repository does not link a result to its config. What links them: the config name the log prints (NVIDIA's
`:::DLPAL ... XE9685Lx8B200-SXM-180GB_2x8x2xtp1pp1cp1`, sometimes with a typo the file does not have), a config named
for the system folder (`config_1xXE9680Lx8B200-SXM-180GB.sh`), the accelerator and the nodes x accelerators shape the
name carries (`config_DGXB200_8x8x2112.sh`). Each clue narrows the candidates where it can; a clue that would leave
none is passed over. The precision is taken only when every config left says the same: an implementation whose every
config trains in FP8 needs no closer match, one whose FP4 and FP8 configs both fit does not get a guess.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mlperf_scaling.reference.lookup import GPU_VENDORS, classify_accelerator
from mlperf_scaling.tasks.parse.implementation import ImplementationConfig

_SHAPE = re.compile(r"(?:^|[_-])0*(\d+)x0*(\d+)(?=x|_|$)", re.I)
_SUFFIX = re.compile(r"_\d+x\d+.*$", re.I)
# the accelerators config names carry (DGXH100, 8xB200, GB300, MI355X, L40S): named, so that a part number (AS-A126GS,
# c885a01) or a model (llama31) is none; not after a letter but x (8xH200) or DGX's X, nor before a digit (L4 is not L40S's)
_ACCELERATOR = re.compile(r"(?:(?<=[^A-Za-z])|(?<=[xX])|^)(GB200|GB300|GH200|B100|B200|B300|H100|H200|H800|H20|A100|A800|A40|A30|A10|"
                          r"L40S|L40|L4|MI250X?|MI300X?|MI325X?|MI350X?|MI355X?|Gaudi\s?2|Gaudi\s?3|RTX\s?Pro\s?6000|A5000|A6000)(?!\d)", re.I)


@dataclass(frozen=True)
class ConfigMatch:
    config: ImplementationConfig  # the config matched, or the first of those that agree
    how: str  # which clues chose it, in words
    n_configs: int  # how many configs were left, all saying the same
    # the settings (TP, PP, CP, micro-batch ...) every config left sets to the same value: a copy of a config in two
    # folders (University of Florida's b200_nemo and hpg.dgxb200x8) still says its degrees
    settings: dict[str, int] = field(default_factory=dict)

    @property
    def evidence(self) -> str:
        return f"{self.config.precision.evidence}; config {self.how}"


@dataclass(frozen=True)
class ResultClues:
    system: str
    printed_names: tuple[str, ...]  # what the logs print as their config's name
    accelerator: str | None
    nodes: int | None
    per_node: int | None
    readme_names: tuple[str, ...] = ()  # the configs a README for this system names


def system_readme_names(readmes: dict[str, tuple[str, ...]], benchmark_root: str, system: str) -> tuple[str, ...]:
    """The config names mentioned by READMEs of a benchmark that belong to the system: in a folder named for it, or
    named for it (`README-tyche_ngpu512_ngc25.09_nemo.md`)."""
    plain = _plain(system)
    if not plain:
        return ()
    own: list[str] = []  # READMEs named for the system outrank the generic README in its folder
    beside: list[str] = []
    for path, mentioned in readmes.items():
        if not path.startswith(benchmark_root + "/"):
            continue
        if plain in _plain(path.rsplit("/", 1)[-1]):
            own.extend(mentioned)
        elif any(_plain(part) == plain for part in path.split("/")[3:-1]):
            beside.extend(mentioned)
    return tuple(dict.fromkeys(own or beside))


def _plain(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _system_part(name: str) -> str:
    return _SUFFIX.sub("", name)


def _accelerator_tokens(text: str | None) -> set[str]:
    if not text:
        return set()
    return {_plain(token) for token in _ACCELERATOR.findall(text)}


_FAMILIES = (("hopper", re.compile(r"^g?h(100|200|800|20)$")), ("blackwell", re.compile(r"^g?b(100|200|300)$")),
             ("ampere", re.compile(r"^a(100|800|30|40|10|5000|6000)$")), ("cdna3", re.compile(r"^mi(300|325)x?$")),
             ("cdna4", re.compile(r"^mi(350|355)x?$")), ("ada", re.compile(r"^l40s?$|^l4$")))


def _family(token: str) -> str:
    return next((name for name, pattern in _FAMILIES if pattern.match(token)), token)


def _names_other_accelerator(config: ImplementationConfig, tokens: set[str]) -> bool:
    """The config is for another generation than the result's accelerator (Dell's only LoRA config, for MI300X, is not
    what its GB200 systems ran); a Hopper config for an H200 system is not another (Oracle's H200 ran DGXH100 configs)."""
    named = named_accelerators(config.name) or named_accelerators(config.implementation)  # the file's own name first: Azure's ND_H100_v5 holds DGXA100 configs
    if not named or not tokens:
        return False
    return not ({_family(token) for token in named} & {_family(token) for token in tokens})


@functools.lru_cache(maxsize=4096)
def named_accelerators(text: str) -> frozenset[str]:
    return frozenset(_plain(found) for found in _ACCELERATOR.findall(text))


def _names_accelerator(stem: str, tokens: set[str]) -> bool:
    """The config's name names one of the accelerator's tokens (B200 is not GB200's, L4 not L40S's)."""
    return bool(named_accelerators(stem) & tokens)


def _shape_of(stem: str) -> tuple[int, int] | None:
    found = _SHAPE.search(stem)
    return (int(found.group(1)), int(found.group(2))) if found else None


def _clues(result: ResultClues) -> list[tuple[str, Callable[[ImplementationConfig], bool]]]:
    printed = [name for name in result.printed_names if name]
    system = _plain(result.system)
    tokens = _accelerator_tokens(result.accelerator)
    clues: list[tuple[str, Callable[[ImplementationConfig], bool]]] = []
    if printed:
        clues.append((f"named in the log ({printed[0]})", lambda c: c.name in printed))

        def near(c: ImplementationConfig) -> bool:
            # the same shape, a like system part (a typo: 280GB for 180GB) and the same accelerator named (GB200 is not GB300)
            return any(_SUFFIX.search(c.name) and _SUFFIX.search(name) and _SUFFIX.search(c.name).group(0) == _SUFFIX.search(name).group(0)  # type: ignore[union-attr]
                       and named_accelerators(c.name) == named_accelerators(name)
                       and difflib.SequenceMatcher(None, _plain(_system_part(c.name)), _plain(_system_part(name))).ratio() >= 0.75
                       for name in printed)

        clues.append((f"nearly named in the log ({printed[0]})", near))

    def named_for_system(c: ImplementationConfig) -> bool:
        # in the file's name, or a folder of its own (NVIDIA's implementations are named as their systems' folders)
        folders = {_plain(part) for part in c.path.split("/")[3:-1]}
        return bool(system) and (system in _plain(c.name) or _plain(_system_part(c.name)) == system or system in folders)

    clues.append((f"named for the system {result.system}", named_for_system))
    readme = [name for name in result.readme_names if name]
    if readme:
        clues.insert(0, (f"named in the system's README ({readme[0]})", lambda c: c.name in readme))
    if printed:
        suffixes = {_SUFFIX.search(name).group(0).lower() for name in printed if _SUFFIX.search(name)}  # type: ignore[union-attr]
        clues.append(("of the shape the log prints", lambda c: bool(_SUFFIX.search(c.name)) and _SUFFIX.search(c.name).group(0).lower() in suffixes))  # type: ignore[union-attr]
    if tokens:
        clues.append((f"for {result.accelerator}", lambda c: _names_accelerator(c.name, tokens) or (not named_accelerators(c.name) and _names_accelerator(c.implementation, tokens))))
    if result.nodes and result.per_node:
        clues.append((f"for {result.nodes} x {result.per_node}", lambda c: _shape_of(c.name) == (result.nodes, result.per_node)))
    return clues


def family_consensus(configs: Iterable[ImplementationConfig], accelerator: str | None) -> tuple[str, str] | None:
    """(precision, evidence) where every config of a benchmark in the round for the accelerator's generation, from two
    submitters or more, says the same: what a result with no config of its own most likely ran, labelled as such."""
    families = {_family(token) for token in _accelerator_tokens(accelerator)}
    if not families:
        return None
    of_generation = [config for config in configs
                     if {_family(token) for token in (named_accelerators(config.name) or named_accelerators(config.implementation))} & families]
    fitting = [config for config in of_generation if config.precision.precision is not None]
    # an implementation some of whose configs turn a precision on and others, read whole, say nothing chooses it per config
    # (MiniGo's multi-node configs turn FP16 on, its single-node ones run TensorFlow's 32-bit default): nothing to carry
    stating = {(config.submitter, config.implementation) for config in fitting}
    if any(config.precision.precision is None and config.precision.evidence is None and (config.submitter, config.implementation) in stating
           for config in of_generation):
        return None
    submitters = sorted({config.submitter for config in fitting})
    if len(submitters) < 2 or len({config.precision.key for config in fitting}) != 1:
        return None
    precision = fitting[0].precision.precision or ""
    return precision, (f"every one of the round's {len(fitting)} configs of {fitting[0].benchmark_folder} for {accelerator}'s generation "
                       f"({', '.join(submitters[:5])}{' ...' if len(submitters) > 5 else ''}) trains at {precision}, e.g. {fitting[0].precision.evidence}")


def _run_script_reading(candidates: list[ImplementationConfig]) -> ConfigMatch | None:
    """No config fits the result (Dell's L40S ran ResNet with no L40S config published), but every config of the
    implementation leaves the precision to the run script they all use: that script's precision is the run's."""
    if not candidates or not all(config.from_scripts for config in candidates):
        return None
    if len({config.precision.key for config in candidates}) != 1 or len({config.implementation for config in candidates}) != 1:
        return None
    first = candidates[0]
    return ConfigMatch(first, f"none of {len(candidates)} configs of {first.implementation or first.benchmark_folder} is for this system, "
                              "and each leaves the precision to the run script they share", len(candidates))


def _not_a_gpu(accelerator: str | None) -> bool:
    """The result's accelerator is known and is no GPU (Gaudi, TPU, IPU, Ascend, a CPU): NVIDIA's launcher is not its."""
    if not accelerator:
        return False
    vendor = classify_accelerator(accelerator).vendor
    return vendor is not None and vendor not in GPU_VENDORS


def match_config(candidates: Iterable[ImplementationConfig], result: ResultClues) -> ConfigMatch | None:
    """The config a result ran, where the clues leave configs that all say the same precision; else None."""
    candidates = list(candidates)
    if _not_a_gpu(result.accelerator):
        candidates = [config for config in candidates if not config.gpu_launcher]
    tokens = _accelerator_tokens(result.accelerator)
    named = set(result.printed_names) | set(result.readme_names)
    left = [config for config in candidates if config.name in named or not _names_other_accelerator(config, tokens)]
    if not left:
        return _run_script_reading(candidates)
    used: list[str] = []
    for words, fits in _clues(result):
        narrowed = [config for config in left if fits(config)]
        if narrowed and len(narrowed) < len(left):
            left, used = narrowed, used + [words]
        if len(left) == 1:
            break
    if len({config.precision.key for config in left}) != 1:
        return None
    chosen = left[0]
    agreed = {column: value for column, value in chosen.settings.items() if all(config.settings.get(column) == value for config in left)}
    if len(left) == 1:
        how = f"{chosen.path}" + (f", {' and '.join(used)}" if used else ", the only config of the benchmark")
    else:
        how = f"{chosen.path} and {len(left) - 1} more that say the same" + (f", {' and '.join(used)}" if used else ", every config of the benchmark")
    return ConfigMatch(chosen, how, len(left), agreed)
