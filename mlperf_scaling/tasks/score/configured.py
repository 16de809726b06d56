"""A score's configuration, from the log first, then the config file its implementation published, then the config's name.

The logs of a group give the run configuration (tasks/parse/run_config.py); what they leave unsaid, the submitter's
config file says (tasks/parse/implementation.py), once the result is matched to it (tasks/parse/config_match.py). The
order is the issue's and the evidence's: a log states what ran; a published config states what was meant to run; a
config name is a label. A precision from a config file carries the file and line, and which clues matched it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from mlperf_scaling.tasks.parse.config_match import ConfigMatch, ResultClues, family_consensus, match_config, system_readme_names
from mlperf_scaling.tasks.parse.implementation import ImplementationConfig, folder_key, implementation_configs, readme_mentions
from mlperf_scaling.tasks.parse.run_config import RunConfiguration

CONFIG_FILE = "config file"


@dataclass
class RoundImplementations:
    """A round's implementation configs by (submitter, benchmark), with the READMEs that name configs."""

    configs: dict[tuple[str, str], list[ImplementationConfig]] = field(default_factory=dict)
    folders: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    readmes: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def read(cls, files: dict[str, str]) -> RoundImplementations:
        configs: dict[tuple[str, str], list[ImplementationConfig]] = defaultdict(list)
        folders: dict[tuple[str, str], set[str]] = defaultdict(set)
        for config in implementation_configs(files):
            key = (config.submitter, folder_key(config.benchmark_folder))
            configs[key].append(config)
            folders[key].add(config.benchmark_folder)
        return cls(dict(configs), dict(folders), readme_mentions(files))

    def consensus(self, benchmark: str, canonical: str, accelerator: str | None) -> tuple[str, str] | None:
        """What every submitter's configs of the benchmark say for the accelerator's generation, where they agree."""
        keys = {folder_key(benchmark), canonical}
        return family_consensus((config for (_, key), configs in self.configs.items() if key in keys for config in configs), accelerator)

    def match(self, submitter: str, benchmark: str, canonical: str, clues: ResultClues) -> ConfigMatch | None:
        key = next((k for k in ((submitter, folder_key(benchmark)), (submitter, canonical)) if k in self.configs), None)
        if key is None:
            return None
        readme = tuple(name for folder in sorted(self.folders[key])
                       for name in system_readme_names(self.readmes, f"{submitter}/benchmarks/{folder}", clues.system))
        return match_config(self.configs[key], replace(clues, readme_names=readme))


def printed_name(name: str | None) -> str | None:
    """`config_DGXB200_8x8x2112.sh` or `DGXB200_8x8x2112` -> `DGXB200_8x8x2112`: how a config file is named here."""
    if not name:
        return None
    stem = name.rsplit("/", 1)[-1]
    stem = stem[: -len(".sh")] if stem.endswith(".sh") else stem
    return stem[len("config_"):] if stem.startswith("config_") else stem


def _same_class(logged: str | None, configured: str) -> bool:
    fp4 = {"nvfp4", "mxfp4", "fp4"}
    return logged == configured or (logged in fp4 and configured in fp4)


def with_config_file(configuration: RunConfiguration, match: ConfigMatch | None, mixed_precision: str | None = None,
                     consensus: Callable[[], tuple[str, str] | None] = lambda: None, accelerators: int | None = None) -> dict:
    """The score's configuration columns: the logs' where they speak, the config file's where they do not; last, for a
    model with no FP8 path (not a language model), the 16-bit mixed precision Lightning says it runs. What the round's
    other configs for the generation agree on goes beside (`round_precision`): below the submitter's own statement."""
    row = _configured(configuration, match, mixed_precision, accelerators)
    # the round's other configs are asked only where the submitter's own files and logs said nothing
    said = consensus() if row["precision_linear"] is None else None
    row.update({"round_precision": said[0] if said else None, "round_precision_evidence": said[1] if said else None})
    return row


def _configured(configuration: RunConfiguration, match: ConfigMatch | None, mixed_precision: str | None, accelerators: int | None = None) -> dict:
    row = vars(configuration).copy()
    row.update({"precision_evidence": configuration.precision_source, "precision_switch_step": None, "precision_after_switch": None,
                "implementation_config": None, "configuration_evidence": None})
    if match is None or match.config.precision.precision is None:
        if row["precision_linear"] is None and mixed_precision is not None:
            words = "16bit" if mixed_precision == "fp16" else "bfloat16"
            row.update({"precision_linear": mixed_precision, "precision_source": "the log prints Lightning's mixed precision",
                        "precision_evidence": f"the log prints: Using {words} Automatic Mixed Precision (AMP)"})
    if match is None:
        return row
    config, reading = match.config, match.config.precision
    row["implementation_config"] = match.how
    from_log = configuration.precision_source is not None and not configuration.precision_source.startswith("config name")
    if reading.precision is not None and not from_log:
        row.update({"precision_linear": reading.precision, "precision_source": f"{CONFIG_FILE} {config.path}", "precision_evidence": match.evidence})
    # the switch a config sets holds for a log that states the same first precision (AMD's v6.0 LoRA logs mxfp4 and heals)
    if len(reading.phases) > 1 and _same_class(row["precision_linear"], reading.phases[0][0]):
        row.update({"precision_switch_step": reading.phases[1][1], "precision_after_switch": reading.phases[1][0]})
    filled: list[str] = []
    for column, value in match.settings.items():
        if column == "global_batch_size":
            continue  # the logged global batch is the score's (scores.global_batch_size)
        if row.get(column) is None:
            row[column] = value
            filled.append(config.settings_evidence.get(column, column))
    if filled and match.n_configs > 1:
        filled.append(f"the same in all {match.n_configs} configs left")
    degrees = [row.get(column) for column in ("tensor_parallelism", "pipeline_parallelism")]
    if filled and row.get("data_parallelism") is None and accelerators and all(degrees):
        # what is left of the accelerators once the model is split: data parallelism, where the split divides them
        product = degrees[0] * degrees[1] * (row.get("context_parallelism") or 1)  # type: ignore[operator]
        if accelerators % product == 0:
            row["data_parallelism"] = accelerators // product
            filled.append(f"data parallelism {accelerators:,} / (TP x PP x CP {product}) = {accelerators // product}")
    if filled:
        row["configuration_source"] = CONFIG_FILE if row["configuration_source"] is None else f"{row['configuration_source']} and {CONFIG_FILE}"
        row["configuration_evidence"] = "; ".join(filled)
    return row
