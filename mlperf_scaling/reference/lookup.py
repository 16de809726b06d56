"""Reference data the official rules package does not have: benchmark names across rounds, accelerator names, when
each round was published and how its rules changed since.

All live as TSV files in `mlperf_scaling/reference/` so a reviewer can read and diff them. The rules (run counts,
olympic drops, quality targets, compliance) come from mlperf-logging: see mlperf_scaling.tasks.score.rules.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import re
from dataclasses import dataclass
from importlib import resources

from mlperf_scaling.rounds import round_order, suite_of


def _read_tsv(name: str) -> list[dict[str, str]]:
    text = resources.files("mlperf_scaling.reference").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t"))


def _plain(text: str) -> str:
    """A name as compared: case, spaces, hyphens, underscores and dots ignored (Llama 3.1 8B is llama31_8b)."""
    return re.sub(r"[\s_.\-]+", "", text).lower()


@dataclass(frozen=True)
class BenchmarkName:
    """What the project calls a benchmark folder across rounds; the rules themselves come from mlperf_scaling.tasks.score.rules."""

    folder: str
    canonical_name: str
    workload: str  # the task and the model: `object detection (RetinaNet)`
    listed: bool = True  # False: a folder name benchmarks.tsv does not know
    model_name: str = ""  # the model people call it by (benchmarks.tsv); the folder when unlisted
    note: str = ""  # what a reader needs about the folder's name: `folder ssd until v4.1, retinanet from v5.0`

    @property
    def model(self) -> str:
        """The model people call the workload by: `RetinaNet`, `BERT-large`."""
        return self.model_name or self.folder

    @property
    def task(self) -> str:
        """What the workload does: `object detection`."""
        return self.workload.split(" (")[0] if self.listed else "unknown benchmark"

    @property
    def label(self) -> str:
        """The one way every page, table and command names the workload: its model, with the canonical name (what
        `plan` and the explorer take) where the model's name does not spell it: `RetinaNet`, `BERT-large (bert)`."""
        return self.model if _plain(self.model) == _plain(self.canonical_name) else f"{self.model} ({self.canonical_name})"


@functools.cache
def _benchmark_rows() -> list[dict[str, str]]:
    return _read_tsv("benchmarks.tsv")


def _name_of(row: dict[str, str]) -> BenchmarkName:
    return BenchmarkName(row["benchmark"], row["canonical_name"], row["workload"], model_name=row["model"], note=row["note"])


def benchmark_name(folder: str, round_name: str) -> BenchmarkName:
    """Canonical name and workload of a benchmark folder in a round (ssd is RetinaNet from v2.0, SSD-ResNet34 before)."""
    current = round_order(round_name)
    for row in _benchmark_rows():
        if row["benchmark"] != folder or suite_of(row["first_round"]) != suite_of(round_name):
            continue
        if current < round_order(row["first_round"]):
            continue
        if row["last_round"] and current > round_order(row["last_round"]):
            continue
        return _name_of(row)
    return BenchmarkName(folder, folder, "unknown benchmark", listed=False)


def canonical_benchmark(canonical_name: str) -> BenchmarkName:
    """The workload of a name across rounds (`retinanet`, `ssd_resnet34`), from its latest listing."""
    rows = [row for row in _benchmark_rows() if row["canonical_name"] == canonical_name]
    if not rows:
        return BenchmarkName(canonical_name, canonical_name, "unknown benchmark", listed=False)
    return _name_of(rows[-1])


def analysis_folder(folder: str, round_name: str) -> str:
    """The folder a round's workload is analysed under: a second folder of the same workload in one round (v0.6
    Google's `mask` beside `maskrcnn`) joins the folder named as the workload, so that a workload is one benchmark per
    round; any other folder is its own."""
    canonical = benchmark_name(folder, round_name).canonical_name
    if canonical == folder:
        return folder
    primary = benchmark_name(canonical, round_name)
    return canonical if primary.listed and primary.canonical_name == canonical else folder


def workload_names() -> dict[str, list[str]]:
    """Every canonical name, with the other names a person may type for it: its folders, its model's name."""
    names: dict[str, list[str]] = {}
    for row in _benchmark_rows():
        found = names.setdefault(row["canonical_name"], [])
        for alias in (row["benchmark"], row["model"]):
            if alias != row["canonical_name"] and alias not in found:
                found.append(alias)
    return names


def workloads_named(text: str) -> list[str]:
    """The canonical names a typed name may mean, compared as `_plain` does: one for a canonical name, a model's name
    or most folders; two for `ssd` (SSD-ResNet34 until v1.1, RetinaNet from v2.0); none for an unknown name."""
    wanted = _plain(text)
    if not wanted:
        return []
    exact = [canonical for canonical in workload_names() if _plain(canonical) == wanted]
    if exact:
        return exact
    return [canonical for canonical, aliases in workload_names().items() if any(_plain(alias) == wanted for alias in aliases)]


def folder_rounds(folder: str, canonical_name: str) -> str:
    """When a folder held a workload, in words: `v0.5-v1.1`, `from v2.0`."""
    rows = [row for row in _benchmark_rows() if row["benchmark"] == folder and row["canonical_name"] == canonical_name]
    if not rows:
        return ""
    first, last = rows[0]["first_round"], rows[-1]["last_round"]
    return f"{first}-{last}" if last else f"from {first}"


@functools.cache
def accelerator_table() -> tuple[tuple[str, str, str, str, float | None], ...]:
    """The curated accelerator names: (raw name, vendor, family, form factor, memory GB); empty family = unknown."""
    rows = []
    for row in _read_tsv("accelerators.tsv"):
        memory = float(row["memory_gb"]) if row["memory_gb"] else None
        rows.append((row["accelerator_model_name"], row["vendor"], row["family"], row["form_factor"], memory))
    return tuple(rows)


@dataclass(frozen=True)
class AcceleratorClass:
    """Vendor, family, form factor and memory of a published accelerator name."""

    name: str
    vendor: str | None
    family: str | None  # None: the name does not say which accelerator it is
    form_factor: str | None
    memory_gb: float | None
    inferred: bool  # True: not in accelerators.tsv, read from accelerator_patterns.tsv (first match wins)


@functools.cache
def _accelerator_patterns() -> tuple[tuple[re.Pattern, str, str, str], ...]:
    return tuple(
        (re.compile(row["pattern"], re.IGNORECASE), row["vendor"], row["family"], row["form_factor"])
        for row in _read_tsv("accelerator_patterns.tsv")
    )


_MEMORY = re.compile(r"(\d+)\s*GB", re.IGNORECASE)


@functools.cache
def classify_accelerator(name: str) -> AcceleratorClass:
    """The curated entry for a published name; a name not curated yet gets its family from the documented name
    patterns, marked inferred; a name no pattern knows gets no family. Never raises: a new name cannot break a round."""
    for raw, vendor, family, form_factor, memory in accelerator_table():
        if raw == name:
            return AcceleratorClass(name, vendor or None, family or None, form_factor or None, memory, False)
    for pattern, vendor, family, form_factor in _accelerator_patterns():
        if pattern.search(name):
            memory_match = _MEMORY.search(name)
            memory = float(memory_match.group(1)) if memory_match else None
            return AcceleratorClass(name, vendor, family, form_factor or None, memory, True)
    return AcceleratorClass(name, None, None, None, None, False)


@dataclass(frozen=True)
class SystemFormFactor:
    """The form factor a system's own description shows for an accelerator whose published name states none."""

    round: str
    submitter: str
    system: str
    accelerator_model_name: str
    form_factor: str
    evidence: str  # the systems JSON's fields that show it


@functools.cache
def system_form_factors() -> tuple[SystemFormFactor, ...]:
    """accelerator_systems.tsv: per system, the form factor its description shows where the accelerator's name does not."""
    return tuple(SystemFormFactor(row["round"], row["submitter"], row["system"], row["accelerator_model_name"], row["form_factor"],
                                  row["evidence"]) for row in _read_tsv("accelerator_systems.tsv"))


@dataclass(frozen=True)
class RoundPublication:
    """When MLCommons published a round, and the mlcommons/logging commit current that day."""

    round: str
    ruleset: str | None
    published: str | None  # ISO date; None: not published when rounds.tsv was last checked
    logging_commit: str | None


@functools.cache
def round_publications() -> dict[str, RoundPublication]:
    """Every round rounds.tsv knows, by name."""
    return {
        row["round"]: RoundPublication(row["round"], row["ruleset"] or None, row["published"] or None, row["logging_commit"] or None)
        for row in _read_tsv("rounds.tsv")
    }


@dataclass(frozen=True)
class RuleChange:
    """One change to the official rules made after a round was published (rule_changes.tsv)."""

    rulesets: tuple[str, ...]  # the rulesets whose rounds were published before the change
    rules: tuple[str, ...]  # 'file.yaml:KEY', 'file.yaml:END', 'checker:<behaviour>' or '*' (the whole ruleset)
    commit: str  # in mlcommons/logging
    date: str
    change: str
    action: str  # AS_PUBLISHED, TODAY or SET_ASIDE
    why: str

    @property
    def cited(self) -> str:
        return f"mlcommons/logging@{self.commit}, {self.date}"


AS_PUBLISHED = "as published"  # the rule as it stood at publication judges the round; today's is only reported
TODAY = "today"  # the change alters no verdict of the round (or the published scores follow it): today's rule judges
SET_ASIDE = "set aside"  # the whole ruleset contradicts what was published: the generic rules judge the round
RULE_CHANGE_ACTIONS = (AS_PUBLISHED, TODAY, SET_ASIDE)


@functools.cache
def rule_changes() -> tuple[RuleChange, ...]:
    """Every recorded change to the rules made after a round that they judge was published."""
    changes = []
    for row in _read_tsv("rule_changes.tsv"):
        if row["action"] not in RULE_CHANGE_ACTIONS:
            raise ValueError(f"rule_changes.tsv: unknown action {row['action']!r} for {row['rule']} (one of {RULE_CHANGE_ACTIONS})")
        changes.append(RuleChange(
            tuple(row["rulesets"].split()), tuple(row["rule"].split()), row["commit"], row["date"], row["change"], row["action"], row["why"],
        ))
    return tuple(changes)


@functools.cache
def rules_as_published_text() -> str:
    """rules_as_published.yaml: the rule records as they stood at publication, where the package changed them since."""
    return resources.files("mlperf_scaling.reference").joinpath("rules_as_published.yaml").read_text(encoding="utf-8")


def reference_tables() -> tuple[str, ...]:
    """Every table of the reference folder (.tsv, .yaml), by name."""
    folder = resources.files("mlperf_scaling.reference")
    return tuple(sorted(entry.name for entry in folder.iterdir() if entry.name.endswith((".tsv", ".yaml"))))


def reference_digest(*names: str) -> str:
    """A short digest of reference files, so a change to them is seen as a change of rules."""
    digest = hashlib.sha256()
    for name in names:
        digest.update(resources.files("mlperf_scaling.reference").joinpath(name).read_bytes())
    return digest.hexdigest()[:10]


# the vendors whose accelerators are GPUs: NVIDIA's launcher and MLPerf's FP16 AMP implementations are theirs, a TPU's,
# Gaudi's or IPU's not (AcceleratorSpec.architecture and AcceleratorClass.vendor begin with the vendor)
GPU_VENDORS = ("NVIDIA", "AMD")


@dataclass(frozen=True)
class AcceleratorSpec:
    """An accelerator's datasheet: peak dense TFLOP/s per precision, memory, bandwidth, TDP, year, and where each row's
    numbers come from (accelerator_specs.tsv; its notes say which are secondary sources)."""

    family: str
    form_factor: str
    year: int | None
    memory_gb: float | None
    memory_bandwidth_tb_s: float | None
    tdp_w: float | None
    peak_tflops: dict[str, float]  # precision -> peak dense TFLOP/s (TOP/s for int8): fp32, tf32, bf16, fp16, fp8, fp6, fp4, int8
    source: str  # the vendor's datasheet, whitepaper or product page
    name_pattern: str = ""  # a model the row alone describes (V100S beside the V100 PCIe 32 GB), matched in its published name
    architecture: str = ""  # the vendor's architecture (NVIDIA Hopper, AMD CDNA 3, Google TPU v5p): a generation
    single_source_peaks: frozenset[str] = frozenset()  # precisions whose peak only one unverified source supports

    def peak_from_single_source(self, precision: str | None) -> bool:
        """Whether the peak at `precision` (a datasheet column, or two joined by + for a run that switched) rests on one
        unverified source only: a utilisation against it is marked so."""
        return bool(precision) and any(part in self.single_source_peaks for part in (precision or "").split("+"))


_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "fp6", "fp4")
_PEAK_COLUMNS = {**{p: f"{p}_tflops" for p in _PRECISIONS}, "int8": "int8_tops"}


def _float_or_none(text: str) -> float | None:
    return float(text) if text.strip() else None


@functools.cache
def accelerator_specs() -> tuple[AcceleratorSpec, ...]:
    rows = []
    for row in _read_tsv("accelerator_specs.tsv"):
        peaks = {p: float(row[column]) for p, column in _PEAK_COLUMNS.items() if row[column].strip()}
        year = row["year"].strip()
        rows.append(AcceleratorSpec(row["family"], row["form_factor"], int(year) if year else None, _float_or_none(row["memory_gb"]),
                                    _float_or_none(row["memory_bandwidth_tb_s"]), _float_or_none(row["tdp_w"]), peaks, row["source"],
                                    row["name_pattern"].strip(), row["architecture"],
                                    frozenset(p.strip() for p in row["single_source_peaks"].split(",") if p.strip())))
    return tuple(rows)


def accelerator_spec(family: str | None, form_factor: str | None, memory_gb: float | None, model_name: str | None = None) -> AcceleratorSpec | None:
    """The datasheet of a family in a form factor and memory size; the family's row of that form factor where the size
    has none (an H100-SXM5-96GB computes as an H100 SXM); None for a family the table does not list. A row with a
    name pattern describes only the models whose published name has it (a V100S is not a V100)."""
    if family is None:
        return None
    named = (model_name or "").upper()
    rows = [spec for spec in accelerator_specs() if spec.family == family and (not spec.name_pattern or spec.name_pattern.upper() in named)]
    if any(spec.name_pattern for spec in rows):
        rows = [spec for spec in rows if spec.name_pattern]
    same_form = [spec for spec in rows if not form_factor or spec.form_factor == form_factor]
    if not same_form:
        same_form = rows
    exact = [spec for spec in same_form if memory_gb is not None and spec.memory_gb == memory_gb and spec.peak_tflops]
    with_peaks = [spec for spec in same_form if spec.peak_tflops]
    found = exact or with_peaks or same_form
    return found[0] if found else None


@dataclass(frozen=True)
class BenchmarkWork:
    """How a benchmark's logged convergence point becomes samples and tokens, and its model FLOPs per token
    (benchmark_work.tsv, each row with its source)."""

    unit: str  # what the log counts: samples, epochs or tokens
    samples_per_epoch: float | None
    tokens_per_sample: float | None
    flops_per_token: float | None  # 6 x active parameters (pretraining), 4 x (LoRA: frozen weights get no gradient)
    flops_per_sample: float | None  # for models not counted in tokens (ResNet-50, Stable Diffusion): 3 x forward
    source: str
    parameters: float | None = None  # a language model's; None for the others
    active_parameters: float | None = None  # per token: fewer than `parameters` for a mixture of experts
    training: str | None = None  # "pretraining" or "LoRA fine-tuning" for the language models the planner transfers from
    layers: int | None = None  # a language model's architecture, where the table gives it: its attention FLOPs
    attention_qk_width: float | None = None  # query heads x per-head dimension of the scores
    attention_v_width: float | None = None  # query heads x per-head dimension of the values
    attention_window: float | None = None  # a sliding window's tokens, on `windowed_layers` of the layers
    windowed_layers: int = 0

    def attention_flops_per_token(self, seq_len: float) -> float | None:
        """Attention's training FLOPs per token, as PaLM's appendix B counts them (no causal halving): forward 2 x context
        x (qk + v width) a layer, three times that with the backward pass; a windowed layer's context is its window."""
        if not self.layers or not self.attention_qk_width or not self.attention_v_width:
            return None
        windowed = min(self.windowed_layers, self.layers)
        context = (self.layers - windowed) * seq_len + windowed * min(self.attention_window or seq_len, seq_len)
        return 6.0 * context * (self.attention_qk_width + self.attention_v_width)


@functools.cache
def _work_rows() -> list[dict[str, str]]:
    return _read_tsv("benchmark_work.tsv")


def benchmark_work(canonical_name: str, round_name: str) -> BenchmarkWork | None:
    """The work of a benchmark in a round; None where the table does not say how its logs count."""
    current = round_order(round_name)
    for row in _work_rows():
        if row["benchmark"] != canonical_name or suite_of(row["first_round"]) != suite_of(round_name) or current < round_order(row["first_round"]):
            continue
        if row["last_round"] and current > round_order(row["last_round"]):
            continue
        return BenchmarkWork(row["unit"], _float_or_none(row["samples_per_epoch"]), _float_or_none(row["tokens_per_sample"]),
                             _float_or_none(row["flops_per_token"]), _float_or_none(row["flops_per_sample"]), row["source"],
                             _float_or_none(row["parameters"]), _float_or_none(row["active_parameters"]), row["training"] or None,
                             int(row["layers"]) if row["layers"] else None, _float_or_none(row["attention_qk_width"]),
                             _float_or_none(row["attention_v_width"]), _float_or_none(row["attention_window"]),
                             int(row["windowed_layers"]) if row["windowed_layers"] else 0)
    return None


@dataclass(frozen=True)
class PrecisionStatement:
    """What a submitter said of the precision its runs of a round trained at (precision_statements.tsv): the config its
    results repository names for a system, or its published words."""

    kind: str  # configuration, statement
    round: str
    submitter: str
    systems: tuple[str, ...]  # empty: every system of the submitter for these benchmarks and accelerators
    benchmarks: tuple[str, ...]  # canonical names
    accelerator_families: tuple[str, ...]  # empty: any
    precision: str  # the rules' vocabulary: fp8, nvfp4, mxfp4, int8, bfloat16, ...
    quote: str
    source: str
    published: str


def _listed(text: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in text.split(",") if part.strip())


@functools.cache
def precision_statements() -> tuple[PrecisionStatement, ...]:
    return tuple(PrecisionStatement(row["kind"], row["round"], row["submitter"], _listed(row["systems"]), _listed(row["benchmarks"]),
                                    _listed(row["accelerator_families"]), row["precision"], row["quote"], row["source"], row["published"])
                 for row in _read_tsv("precision_statements.tsv"))


def precision_statement(round_name: str, submitter: str, system: str, benchmark: str, family: str | None) -> PrecisionStatement | None:
    """What the submitter said of a result's precision: a configuration naming its system first, then one for all its
    systems, then a published statement."""
    found = [s for s in precision_statements()
             if s.round == round_name and s.submitter.lower() == submitter.lower() and benchmark in s.benchmarks
             and (not s.systems or system in s.systems) and (not s.accelerator_families or family in s.accelerator_families)]
    found.sort(key=lambda s: (s.kind != "configuration", not s.systems))
    return found[0] if found else None


DEFAULT_SEQUENCE_LENGTH = 2048.0  # where a public run does not state its sequence length


@dataclass(frozen=True)
class ProductionRun:
    """A public production training run with its reported accelerator-hours (production_runs.tsv, each with its source)."""

    run: str
    organisation: str
    published: str
    accelerator_name: str
    datasheet_family: str  # the datasheet row its compute is read from (an H800 is an H100's)
    accelerators: int | None
    parameters: float
    active_parameters: float
    tokens: float
    seq_len: float  # DEFAULT_SEQUENCE_LENGTH where not stated
    precision: str  # the rules' vocabulary, or "" where the source does not say
    accelerator_hours: float
    source: str
    global_batch_tokens: float | None = None  # tokens per optimiser step, where the developer says
    evidence_read: str = ""  # the day its source was read (YYYY-MM-DD): a source revised since is read again


@functools.cache
def production_runs() -> tuple[ProductionRun, ...]:
    return tuple(ProductionRun(row["run"], row["organisation"], row["published"], row["accelerator_name"], row["datasheet_family"],
                               int(row["accelerators"]) if row["accelerators"].strip() else None, float(row["parameters"]),
                               float(row["active_parameters"]), float(row["tokens"]),
                               float(row["seq_len"]) if row["seq_len"].strip() else DEFAULT_SEQUENCE_LENGTH, row["precision"],
                               float(row["accelerator_hours"]), row["source"], _float_or_none(row["global_batch_tokens"]),
                               row["evidence_read"])
                 for row in _read_tsv("production_runs.tsv"))


@dataclass(frozen=True)
class GlobalBatch:
    """The global batch a public pretraining run used, by its size (global_batches.tsv, each with its source)."""

    model: str
    parameters: float
    active_parameters: float
    seq_len: float
    batch_tokens: float
    source: str


@functools.cache
def global_batches() -> tuple[GlobalBatch, ...]:
    return tuple(GlobalBatch(row["model"], float(row["parameters"]), float(row["active_parameters"]), float(row["seq_len"]),
                             float(row["batch_tokens"]), row["source"])
                 for row in _read_tsv("global_batches.tsv"))


@dataclass(frozen=True)
class PublishedResultId:
    """A result ID MLCommons published, with the system it was found beside and where (published_result_ids.tsv)."""

    round: str
    result_id: str
    submitter: str
    system: str
    benchmarks: tuple[str, ...]  # the benchmark folders the source quotes the system's results for
    pairing: str  # stated, inferred, weak or unpaired
    source: str


NAMING_PAIRINGS = ("stated", "inferred")  # the pairings that name a system well enough for scores.result_id


@functools.cache
def published_result_ids() -> tuple[PublishedResultId, ...]:
    """Every published ID found, with its pairing and source, in the file's order."""
    text = resources.files("mlperf_scaling.reference").joinpath("published_result_ids.tsv").read_text(encoding="utf-8")
    rows = csv.DictReader([line for line in text.splitlines() if not line.startswith("#")], delimiter="\t")
    return tuple(PublishedResultId(row["round"], row["result_id"], row["submitter"], row["system"],
                                   tuple(b for b in row["benchmarks"].split(";") if b), row["pairing"], row["source"]) for row in rows)


def published_result_id(round_name: str, submitter: str, system: str) -> str | None:
    """The ID MLCommons published for a system of a round, where one was found that names it; None otherwise."""
    return _naming_ids().get((round_name, submitter, system))


@functools.cache
def _naming_ids() -> dict[tuple[str, str, str], str]:
    return {(p.round, p.submitter, p.system): p.result_id for p in published_result_ids() if p.pairing in NAMING_PAIRINGS and p.system}
