"""The official MLPerf Training rules, read from the installed `mlperf-logging` package, as they stood when each
round was published.

The package is the source of the rules: which benchmarks a ruleset has, how many runs each needs, how many runs
olympic scoring drops, and every compliance rule (`compliance_checker/training_X.Y.0/*.yaml`, quality targets
included). Upgrading its pin is all it takes to score a new round. But MLCommons published each round with the rule
files and the checker as they stood that day, and some changed later: `reference/rule_changes.tsv` records each such
change, and where a change would alter what a published round is judged by (`as published`), the round is judged by
the rule of its day (`reference/rules_as_published.yaml`, or the checker's behaviour of the time) while today's rule is
still run, to say where it differs. Everything unchanged comes from the package. Each ruleset's rule files are read
and compiled once per process.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import importlib
import importlib.metadata
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from types import CodeType

import yaml
from mlperf_logging import benchmark_meta

from mlperf_scaling.contracts.enums import RulesCoverage
from mlperf_scaling.reference.lookup import (
    AS_PUBLISHED,
    SET_ASIDE,
    RuleChange,
    benchmark_name,
    reference_digest,
    reference_tables,
    rule_changes,
    rules_as_published_text,
)
from mlperf_scaling.rounds import HPC, TRAINING, round_in_suite, round_key, suite_of

RULES_DISTRIBUTION = "mlperf-logging"
# A ruleset is named by its version for Training (`4.1.0`) and by `hpc-` and its version for HPC (`hpc-2.0.0`): the
# package keeps each suite's rules in its own folders (compliance_checker/training_4.1.0, hpc_2.0.0), and the same
# version exists in both.
_USAGE_OF_SUITE = {TRAINING: "training", HPC: "hpc"}
_HPC_PREFIX = "hpc-"
_CHECKER_PACKAGE = "mlperf_logging.compliance_checker"


def ruleset_usage(ruleset: str) -> str:
    """The package's usage of a ruleset: `hpc-2.0.0` -> hpc, `4.1.0` -> training."""
    return "hpc" if ruleset.startswith(_HPC_PREFIX) else "training"


def ruleset_version(ruleset: str) -> str:
    """The version the package gives a ruleset: `hpc-2.0.0` -> 2.0.0."""
    return ruleset.removeprefix(_HPC_PREFIX)


def ruleset_folder(ruleset: str) -> str:
    """The package's folder of a ruleset's compliance rules: training_4.1.0, hpc_2.0.0."""
    return f"{ruleset_usage(ruleset)}_{ruleset_version(ruleset)}"


def _ruleset_of_folder(folder_name: str) -> str:
    usage, _, version = folder_name.partition("_")
    return f"{_HPC_PREFIX}{version}" if usage == "hpc" else version


class RulesError(RuntimeError):
    """The installed rules package is not shaped as this code expects: a bug to fix when its pin moves."""


@functools.cache
def rules_version() -> str:
    """The installed mlperf-logging version, e.g. 4.1.68."""
    return importlib.metadata.version(RULES_DISTRIBUTION)


@functools.cache
def rules_identity() -> str:
    """What judged and described a round: the package, and every reference table (the recorded rule changes since each
    round's publication, the published result IDs, the datasheets, the precision statements, the public runs...). A
    loaded round judged by another identity is read again: `mlperf-logging 4.1.68, reference tables 1a2b3c4d5e`."""
    # the analysis reads the tables too (MFU from the datasheets and statements): an edited row must reach a loaded round
    return f"{RULES_DISTRIBUTION} {rules_version()}, reference tables {reference_digest(*reference_tables())}"


@functools.cache
def installed_rulesets(suite: str = TRAINING) -> tuple[str, ...]:
    """Every ruleset of a suite the package has compliance rules for, oldest first: ('0.6.0', ..., '6.1.0') for
    Training, ('hpc-1.0.0', 'hpc-2.0.0', 'hpc-3.0.0') for HPC."""
    usage = _USAGE_OF_SUITE[suite]
    folder = re.compile(rf"^{usage}_(\d+)\.(\d+)\.(\d+)$")
    found = []
    for entry in resources.files(_CHECKER_PACKAGE).iterdir():
        match = folder.match(entry.name)
        if match and entry.is_dir():
            found.append(tuple(int(part) for part in match.groups()))
    if not found:
        raise RulesError(f"{RULES_DISTRIBUTION} {rules_version()} holds no compliance_checker/{usage}_X.Y.Z folders")
    prefix = _HPC_PREFIX if suite == HPC else ""
    return tuple(prefix + ".".join(map(str, version)) for version in sorted(found))


def rounds_of_installed_rules() -> list[str]:
    """The rounds to look for at a remote: Training v0.5 and one per ruleset of the installed rules (v0.6 ... v6.1);
    HPC v0.7 and one per HPC ruleset (hpc-v1.0 ... hpc-v3.0). Each predates-the-checker round is named by hand.

    Discovery then probes the next version names after the newest found, so a round newer than the rules is found too.
    """
    return [
        "v0.5", *(f"v{ruleset.rsplit('.', 1)[0]}" for ruleset in installed_rulesets(TRAINING)),
        "hpc-v0.7", *(round_in_suite(HPC, f"v{ruleset_version(ruleset).rsplit('.', 1)[0]}") for ruleset in installed_rulesets(HPC)),
    ]


def ruleset_name(round_name: str) -> str:
    """The ruleset a round is judged by: v4.1 -> 4.1.0, hpc-v2.0 -> hpc-2.0.0."""
    major, minor = round_key(round_name)
    return f"{_HPC_PREFIX if suite_of(round_name) == HPC else ''}{major}.{minor}.0"


@dataclass(frozen=True)
class RoundRules:
    """Which rules judge a round, and what a user should know about it, in one line."""

    round: str
    ruleset: str
    coverage: RulesCoverage
    note: str | None

    @property
    def checked(self) -> bool:
        return self.coverage is RulesCoverage.CHECKED


def rules_for_round(round_name: str) -> RoundRules:
    """The rules a round is judged by, given the installed package and the rules set aside on purpose."""
    ruleset = ruleset_name(round_name)
    installed = installed_rulesets(suite_of(round_name))
    version = rules_version()
    if ruleset in installed:
        for change in changes_for(ruleset):
            if change.action == SET_ASIDE and change.rules == ("*",):
                return RoundRules(round_name, ruleset, RulesCoverage.SET_ASIDE, f"ruleset {ruleset} set aside: {change.change}; {change.why}")
        return RoundRules(round_name, ruleset, RulesCoverage.CHECKED, None)
    if _version_tuple(ruleset) < _version_tuple(installed[0]):
        return RoundRules(
            round_name, ruleset, RulesCoverage.PREDATES,
            f"{round_name} predates the compliance checker (the oldest ruleset in {RULES_DISTRIBUTION} {version} is "
            f"{installed[0]}): a run counts when its run_stop reports success"
            + (", or, where its run_stop gives no status, when its log reaches the benchmark's quality target" if suite_of(round_name) == HPC else ""),
        )
    return RoundRules(
        round_name, ruleset, RulesCoverage.NEWER,
        f"ruleset {ruleset} is newer than the rules installed ({RULES_DISTRIBUTION} {version} ends at {installed[-1]}): "
        f"scores are marked scored_unchecked; a {RULES_DISTRIBUTION} release newer than {version} with "
        f"compliance_checker/{ruleset_folder(ruleset)} brings the rules (`uv add {RULES_DISTRIBUTION}==<that version>`)",
    )


def _version_tuple(ruleset: str) -> tuple[int, ...]:
    return tuple(int(part) for part in ruleset_version(ruleset).split("."))


def allowed_benchmarks(ruleset: str) -> frozenset[str]:
    """Benchmark names of a ruleset the package knows; empty when it does not know the ruleset."""
    try:
        return frozenset(benchmark_meta.get_allowed_benchmarks(ruleset_usage(ruleset), ruleset_version(ruleset)))
    except ValueError:
        return frozenset()


def summary_benchmarks(ruleset: str, present: Iterable[str]) -> list[str]:
    """The benchmark columns of the summarizer's summary, in its order; for a ruleset the package lacks, those present."""
    try:
        return list(benchmark_meta.get_allowed_benchmarks(ruleset_usage(ruleset), ruleset_version(ruleset)))
    except ValueError:
        return sorted(set(present))


def required_runs(benchmark: str) -> int | None:
    """How many result logs the rules require for a benchmark (for HPC: strong runs, and the fewest weak models);
    None for a benchmark the package does not know. No benchmark name is shared by the two suites."""
    for usage in _USAGE_OF_SUITE.values():
        if (count := benchmark_meta.get_result_file_counts(usage).get(benchmark)) is not None:
            return count
    return None


def known_benchmark_names() -> frozenset[str]:
    """Every Training and HPC benchmark name the package has a run count for."""
    return frozenset(name for usage in _USAGE_OF_SUITE.values() for name in benchmark_meta.get_result_file_counts(usage))


@functools.cache
def _olympic_drop_rule() -> CodeType:
    # The summarizer writes its drop count inline (`max_dropped_scores = 4 if benchmark == "unet3d" else 1`),
    # not as data: read that one assignment from its source so the package stays the only place it is written.
    source = resources.files("mlperf_logging.result_summarizer").joinpath("result_summarizer.py").read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "_compute_strong_score_standalone":
            for statement in ast.walk(node):
                if (
                    isinstance(statement, ast.Assign)
                    and len(statement.targets) == 1
                    and isinstance(statement.targets[0], ast.Name)
                    and statement.targets[0].id == "max_dropped_scores"
                ):
                    names = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)}
                    if names - {"benchmark"}:
                        break
                    return compile(ast.Expression(statement.value), "<mlperf-logging olympic drops>", "eval")
    raise RulesError(
        f"{RULES_DISTRIBUTION} {rules_version()}: result_summarizer no longer sets max_dropped_scores from the benchmark "
        "alone; read how it drops runs now and update tasks/rules.py"
    )


@functools.cache
def olympic_drops(benchmark: str) -> int:
    """How many runs olympic scoring drops from each end, as the official summarizer decides it."""
    return int(eval(_olympic_drop_rule(), {"__builtins__": {}}, {"benchmark": benchmark}))  # noqa: S307 - checked above


def changes_for(ruleset: str) -> tuple[RuleChange, ...]:
    """The recorded changes to a ruleset's rules made after its round was published (reference/rule_changes.tsv)."""
    return tuple(change for change in rule_changes() if ruleset in change.rulesets)


# Checker behaviours of the time that a published round was judged by (rule_changes.tsv, `checker:<name>` rows)
WEIGHTS_INITIALIZATION_WARNS = "weights_initialization"  # a failed weights-initialisation check is a warning
SUBMISSION_KEYS_EVERY_LINE = "submission_keys_every_line"  # submission_* code runs on every line, not the first only
BEHAVIOURS = (WEIGHTS_INITIALIZATION_WARNS, SUBMISSION_KEYS_EVERY_LINE)


def published_behaviours(ruleset: str) -> frozenset[str]:
    """The checker behaviours of publication day that judge a ruleset where the checker has changed since."""
    found = set()
    for change in changes_for(ruleset):
        for rule in change.rules:
            if change.action == AS_PUBLISHED and rule.startswith("checker:"):
                behaviour = rule.split(":", 1)[1]
                if behaviour not in BEHAVIOURS:
                    raise RulesError(f"rule_changes.tsv: checker behaviour {behaviour!r} is not one this engine knows ({', '.join(BEHAVIOURS)})")
                found.add(behaviour)
    return frozenset(found)


@functools.cache
def _published_records() -> dict[str, dict[str, dict[str, list]]]:
    """ruleset -> file -> today's key -> the KEY records that stood in its place at publication."""
    loaded = yaml.load(rules_as_published_text(), Loader=yaml.BaseLoader) or {}
    overrides: dict[str, dict[str, dict[str, list]]] = {}
    for ruleset, rules in loaded.items():
        for rule, records in rules.items():
            file_name, key = rule.split(":", 1)
            if not any(change.action == AS_PUBLISHED and rule in change.rules for change in changes_for(ruleset)):
                raise RulesError(f"rules_as_published.yaml: {ruleset} {rule} has no `as published` row in rule_changes.tsv")
            overrides.setdefault(ruleset, {}).setdefault(file_name, {})[key] = list(records or [])
    for change in rule_changes():
        for ruleset in change.rulesets:
            for rule in change.rules:
                if change.action == AS_PUBLISHED and not rule.startswith("checker:") and rule.split(":", 1)[1] not in overrides.get(ruleset, {}).get(rule.split(":", 1)[0], {}):
                    raise RulesError(f"rule_changes.tsv: {ruleset} {rule} is `as published` but rules_as_published.yaml has no record for it")
    return overrides


# ---------------------------------------------------------------------------------------------------------------
# Compiled rule files


@dataclass(frozen=True)
class Code:
    """One piece of rule code, compiled once; `error` holds a compile failure, raised when it is run.

    `function`, for PRE / POST code: the same statements as a function (ll, v), a third of exec's cost per line;
    None where exec's own scoping could differ (see _statements_as_function)."""

    source: str
    code: CodeType | None
    error: SyntaxError | None = None
    function: CodeType | None = None


def _compile(source: str, mode: str) -> Code:
    text = source.strip()  # the official checker strips every piece before running it
    try:
        return Code(text, compile(text, "<mlperf rule>", mode))
    except SyntaxError as exc:
        return Code(text, None, exc)


def _compile_statements(source: str) -> Code:
    code = _compile(source, "exec")
    return Code(code.source, code.code, code.error, _statements_as_function(code))


def _statements_as_function(code: Code) -> CodeType | None:
    # exec(code, state, {'ll': .., 'v': ..}) and a function (ll, v) with globals=state agree on every name the code
    # reads, unless it binds names of its own (a function would make them local) or opens a nested scope
    if code.code is None:
        return None
    tree = ast.parse(code.source, mode="exec")
    for node in ast.walk(tree):
        if isinstance(node, (*_OWN_SCOPE, ast.Global, ast.Nonlocal, ast.FunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)):
            return None
        if isinstance(node, (ast.Name, ast.arg)) and not isinstance(getattr(node, "ctx", ast.Load()), ast.Load):
            return None
    body = "\n".join("    " + line for line in code.source.splitlines()) or "    pass"
    try:
        module = compile(f"def __rule_code(ll, v):\n{body}\n", "<mlperf rule>", "exec")
    except SyntaxError:
        return None
    return next(const for const in module.co_consts if isinstance(const, CodeType))


def _compile_list(value: object) -> tuple[Code, ...]:
    tests = value if isinstance(value, list) else [value]
    return tuple(_compile(str(test), "eval") for test in tests)


@dataclass(frozen=True)
class KeyRule:
    name: str
    requirement: str | None
    pre: Code | None
    checks: tuple[Code, ...]
    post: Code | None
    first_checks: tuple[Code, ...]
    at_least_one_check: Code | None
    # every CHECK of the key in one function (ll, v) -> None or (index, exception) of the last test that fails:
    # a third of the cost of one eval per test; None where a test must keep eval's own scoping (see _as_function)
    checks_function: CodeType | None = None
    uses_line: bool = True  # some code of the key names `ll`: its lines are handed over as LogLine objects
    uses_value: bool = True  # some code reads `v`, or `ll` beyond its time, key and line number
    counted_only: bool = False  # no code to run on its lines: they are only counted (values kept for EXACTLY_ONE)
    first_line_only: bool = False  # a submission_* key: PRE / CHECK / POST run on its first line only, as officially


# Inside these, eval with a separate locals mapping cannot see `ll` and `v`, where a function could: keep eval there.
_OWN_SCOPE = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)


def _as_function(tests: tuple[Code, ...]) -> CodeType | None:
    """One function running the CHECK tests in order, with the same names in reach as the official eval."""
    if not tests or any(test.code is None for test in tests):
        return None
    body = ["def __rule_checks(ll, v):", "    failed = None"]
    for index, test in enumerate(tests):
        tree = ast.parse(test.source, mode="eval")
        if any(isinstance(node, _OWN_SCOPE) for node in ast.walk(tree)):
            return None
        body += [
            "    try:",
            f"        if not ({test.source}\n):",  # a newline ends a trailing comment, as eval would ignore it
            f"            failed = ({index}, None)",
            "    except Exception as exc:",
            f"        failed = ({index}, exc)",
        ]
    body.append("    return failed")
    try:
        module = compile("\n".join(body), "<mlperf rule>", "exec")
    except SyntaxError:  # a test that is an expression only alone (never seen): keep one eval per test
        return None
    return next(const for const in module.co_consts if isinstance(const, CodeType))


@dataclass(frozen=True)
class RuleFile:
    name: str  # as the rules enqueue it: training_5.1.0/closed_common.yaml
    begin: Code | None
    keys: dict[str, KeyRule]
    end_pre: Code | None
    end_checks: tuple[Code, ...]
    empty: bool = False



@dataclass(frozen=True)
class Ruleset:
    name: str  # 5.1.0
    root: str  # training_5.1.0/common.yaml
    files: dict[str, RuleFile]
    keys: frozenset[str] = field(default_factory=frozenset)  # every key a rule names: the lines to keep
    # the keys whose values some rule reads (or compares, EXACTLY_ONE): the lines worth decoding
    value_keys: frozenset[str] = field(default_factory=frozenset)
    # The rules as published (rule_changes.tsv `as published`): the files whose records stand as they did then, and
    # the checker behaviours of the time. Both empty for the package's rules as they are today.
    changed_files: frozenset[str] = field(default_factory=frozenset)
    behaviours: frozenset[str] = field(default_factory=frozenset)


_LINE_FIELDS_WITHOUT_VALUE = {"timestamp", "key", "lineno", "full_string"}


def _as_published(name: str, records: list, replaced: dict[str, list]) -> list:
    """Today's records of a file with the replaced keys' records put back as they stood, in the same place."""
    result, found = [], set()
    for record in records:
        key = record["KEY"]["NAME"] if list(record)[0] == "KEY" else None
        if key in replaced:
            found.add(key)
            result.extend(replaced[key])
        else:
            result.append(record)
    missing = set(replaced) - found
    if missing:
        raise RulesError(f"{name}: rules_as_published.yaml replaces {sorted(missing)}, which the installed file does not have")
    return result


def _with_uses(rule: KeyRule, every_line: bool = False) -> KeyRule:
    """Which of the line a key's code reads, from the code itself: `ll` at all, and the value (`v`, `ll.value`)."""
    pieces = [rule.pre, *rule.checks, rule.post, *rule.first_checks, rule.at_least_one_check]
    uses_line = uses_value = False
    for piece in pieces:
        if piece is None:
            continue
        if piece.code is None:  # it will raise when run: whatever it reads, hand over everything
            return dataclasses.replace(rule, uses_line=True, uses_value=True)
        tree = ast.parse(piece.source)  # an expression parses as a statement too
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id == "v":
                uses_value = True
            if isinstance(node, ast.Name) and node.id == "ll":
                uses_line = True
                parent = parents.get(node)
                if not (isinstance(parent, ast.Attribute) and parent.attr in _LINE_FIELDS_WITHOUT_VALUE):
                    uses_value = True
    if rule.requirement == "EXACTLY_ONE":
        uses_value = True  # repeats count only when their values differ
    counted_only = not (rule.pre or rule.checks or rule.post or rule.first_checks or rule.at_least_one_check)
    return dataclasses.replace(
        rule, uses_line=uses_line, uses_value=uses_value, counted_only=counted_only,
        first_line_only="submission_" in rule.name and not every_line,
    )


def _rule_file(name: str, text: str, replaced: dict[str, list] | None = None, every_line: bool = False) -> RuleFile:
    """A rule file compiled; `replaced` maps a key of today's file to the records that stood in its place at
    publication, and `every_line` runs submission_* code on every line, as the checker of the time did."""
    records = yaml.load(text, Loader=yaml.BaseLoader)  # the loader the official checker uses: every scalar a string
    if records is None:
        return RuleFile(name, None, {}, None, (), empty=True)
    if replaced:
        records = _as_published(name, records, replaced)
    begin = [r["BEGIN"] for r in records if list(r)[0] == "BEGIN"]
    end = [r["END"] for r in records if list(r)[0] == "END"]
    if len(begin) > 1 or len(end) > 1:
        raise RulesError(f"{name}: more than one BEGIN or END block")
    keys: dict[str, KeyRule] = {}
    for record in records:
        if list(record)[0] != "KEY":
            continue
        rule = record["KEY"]
        checks = _compile_list(rule["CHECK"]) if "CHECK" in rule else ()
        keys[rule["NAME"]] = KeyRule(  # a later record for the same key replaces an earlier one, as officially
            name=rule["NAME"],
            requirement=rule.get("REQ"),
            pre=_compile_statements(rule["PRE"]) if "PRE" in rule else None,
            checks=checks,
            post=_compile_statements(rule["POST"]) if "POST" in rule else None,
            first_checks=_compile_list(rule["FIRST_CHECK"]) if "FIRST_CHECK" in rule else (),
            at_least_one_check=_compile(rule["ATLEAST_ONE_CHECK"], "eval") if "ATLEAST_ONE_CHECK" in rule else None,
            checks_function=_as_function(checks),
        )
        keys[rule["NAME"]] = _with_uses(keys[rule["NAME"]], every_line)
    end_record = end[0] if end else {}
    return RuleFile(
        name=name,
        begin=_compile(begin[0]["CODE"], "exec") if begin else None,
        keys=keys,
        end_pre=_compile(end_record["PRE"], "exec") if "PRE" in end_record else None,
        end_checks=_compile_list(end_record["CHECK"]) if "CHECK" in end_record else (),
    )


_QUOTED_NAME = re.compile(r"""["']([a-z][a-z0-9_]*)["']""")
_FOLDER_REFERENCE = re.compile(r"((?:training|hpc)_\d+\.\d+\.\d+)/")


@functools.cache
def _rule_folder(folder_name: str, published_for: str | None = None) -> dict[str, RuleFile]:
    """The folder's rule files; `published_for` names the ruleset whose publication-day rules apply to them."""
    folder = resources.files(_CHECKER_PACKAGE).joinpath(folder_name)
    if not folder.is_dir():
        raise RulesError(f"{RULES_DISTRIBUTION} {rules_version()} has no compliance_checker/{folder_name}")
    replaced = _published_records().get(_ruleset_of_folder(folder_name), {}) if published_for == _ruleset_of_folder(folder_name) else {}
    every_line = published_for is not None and SUBMISSION_KEYS_EVERY_LINE in published_behaviours(published_for)
    files = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            rule_file = _rule_file(f"{folder_name}/{entry.name}", entry.read_text(encoding="utf-8"), replaced.get(entry.name), every_line)
            files[rule_file.name] = rule_file
    return files


def load_ruleset(ruleset: str) -> Ruleset:
    """Every rule file of a training ruleset as the installed package has it today, compiled once per process."""
    return _load(ruleset, as_published=False)


def published_ruleset(ruleset: str) -> Ruleset | None:
    """The ruleset as it stood when its round was published, where that differs from today's (rule_changes.tsv,
    `as published`); None where today's rules are the published ones."""
    if not published_behaviours(ruleset) and not _published_records().get(ruleset):
        return None
    return _load(ruleset, as_published=True)


@functools.cache
def _load(ruleset: str, as_published: bool) -> Ruleset:
    """Rule files may queue files of another ruleset (4.0.0 resnet queues training_3.1.0/closed_resnet_lars.yaml, and
    the official checker loads it): the folders a ruleset names are loaded with it. The publication-day records of
    rules_as_published.yaml replace today's in the ruleset's own folder only."""
    folders = [ruleset_folder(ruleset)]
    files: dict[str, RuleFile] = {}
    keys: set[str] = set()
    named_by_blocks: set[str] = set()
    while folders:
        folder_name = folders.pop()
        for name, rule_file in _rule_folder(folder_name, ruleset if as_published else None).items():
            files[name] = rule_file
            keys.update(rule_file.keys)
            for code in (rule_file.begin, rule_file.end_pre):
                # BEGIN blocks may read other lines (Stable Diffusion joins its eval_accuracy lines): keep the keys they name
                if code is not None:
                    named_by_blocks.update(_QUOTED_NAME.findall(code.source))
            for code in _all_code(rule_file):
                folders.extend(
                    other for other in _FOLDER_REFERENCE.findall(code.source)
                    if f"{other}/common.yaml" not in files and other not in folders and other != folder_name
                )
    value_keys = {name for rule_file in files.values() for name, rule in rule_file.keys.items() if rule.uses_value}
    value_keys |= named_by_blocks  # BEGIN / END code may read any line it names, whole
    keys |= named_by_blocks
    changed_files: frozenset[str] = frozenset()
    behaviours: frozenset[str] = frozenset()
    if as_published:
        changed_files = frozenset(f"{ruleset_folder(ruleset)}/{file_name}" for file_name in _published_records().get(ruleset, {}))
        behaviours = published_behaviours(ruleset)
    return Ruleset(
        ruleset, f"{ruleset_folder(ruleset)}/common.yaml", files, frozenset(keys), frozenset(value_keys), changed_files, behaviours,
    )


def change_behind(ruleset: str, failed_rule: str) -> RuleChange | None:
    """The recorded change that made today's rules fail where the published ones pass: the `as published` row naming
    the failed rule (file:KEY), else the ruleset's checker row for the kind of failure, else its only such row."""
    candidates = [change for change in changes_for(ruleset) if change.action == AS_PUBLISHED]
    short = failed_rule.split("/", 1)[-1]
    key = short.split(":", 1)[-1]
    for change in candidates:
        if short in change.rules:
            return change
    for change in candidates:
        if f"checker:{WEIGHTS_INITIALIZATION_WARNS}" in change.rules and key in ("weights_initialization", "END"):
            return change
        if f"checker:{SUBMISSION_KEYS_EVERY_LINE}" in change.rules and key.startswith("submission_"):
            return change
    return candidates[0] if len(candidates) == 1 else None


def _all_code(rule_file: RuleFile) -> list[Code]:
    pieces = [rule_file.begin, rule_file.end_pre, *rule_file.end_checks]
    for rule in rule_file.keys.values():
        pieces += [rule.pre, rule.post, *rule.checks, *rule.first_checks, rule.at_least_one_check]
    return [piece for piece in pieces if piece is not None]


def log_line_class(ruleset: str) -> type:
    """The official parser's LogLine type for a ruleset: rules may copy or change lines (dataclasses.replace)."""
    module = f"{_CHECKER_PACKAGE}.mlp_parser.ruleset_{ruleset_version(ruleset).replace('.', '')}"
    try:
        return importlib.import_module(module).LogLine
    except (ImportError, AttributeError):
        newest = installed_rulesets()[-1].replace(".", "")
        return importlib.import_module(f"{_CHECKER_PACKAGE}.mlp_parser.ruleset_{newest}").LogLine


# ---------------------------------------------------------------------------------------------------------------
# Per benchmark


@dataclass(frozen=True)
class BenchmarkRules:
    """What the rules say about one benchmark folder of a round."""

    folder: str
    canonical_name: str  # the same workload across rounds (reference/benchmarks.tsv)
    workload: str
    n_required: int | None  # result logs the rules require; None when the package does not know the benchmark
    max_dropped: int  # runs olympic scoring drops from each end
    accepted: bool  # False: not a benchmark of the round's rules; its logs are rejected
    note: str | None  # why it is not accepted, or what could not be known


def benchmark_rules(folder: str, rules: RoundRules) -> BenchmarkRules:
    """Run count, olympic drops and acceptance of a benchmark folder, from the package; names from the reference."""
    name = benchmark_name(folder, rules.round)
    # the package knows folders by their own names, except the summarizer's one alias (v0.6 Google's `mask`)
    official = folder if folder in known_benchmark_names() else name.canonical_name
    n_required = required_runs(official)
    note = None
    if rules.coverage is RulesCoverage.NEWER:
        accepted = True  # a new round may bring new benchmarks: load them, marked unchecked
        if n_required is None:
            note = f"benchmark {folder!r} is unknown to {RULES_DISTRIBUTION} {rules_version()}: its required run count is not known"
    elif rules.coverage is RulesCoverage.PREDATES:
        accepted = name.listed
        if not accepted:
            note = f"unknown benchmark folder {folder!r}: not a benchmark of {rules.round} (mlperf_scaling/reference/benchmarks.tsv)"
    else:
        allowed = allowed_benchmarks(rules.ruleset)
        accepted = official in allowed
        if not accepted:
            note = (
                f"unknown benchmark folder {folder!r}: not a benchmark of ruleset {rules.ruleset} "
                f"({RULES_DISTRIBUTION} {rules_version()} lists {', '.join(sorted(allowed))})"
            )
    return BenchmarkRules(folder, name.canonical_name, name.workload, n_required, olympic_drops(official), accepted, note)
