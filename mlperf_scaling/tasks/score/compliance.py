"""Judge one result log by every compliance rule of its ruleset, as `mlperf_logging.compliance_checker` does.

The same algorithm as the official `ComplianceChecker.configured_checks`, over lines the parser already holds
and rules compiled once per process (`mlperf_scaling.tasks.score.rules`): rule files are queued from `common.yaml` by the log's own
`submission_division` and `submission_benchmark`; each file runs its BEGIN code, then PRE / CHECK / POST per line
of a key it names (submission_* keys only on their first line), FIRST_CHECK and ATLEAST_ONE_CHECK, then the
occurrence requirements and its END block. A failure for a key is forgotten when a later file redefines that key;
any failure left makes the run invalid. Where the official tool stops with an exception, the run is invalid too.

A round is judged by its rules as they stood when it was published (`rules.published_ruleset`); today's rules are run
too, and what only they reject is kept apart (`Judgement.later`), so a user sees what today's checker would do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from types import FunctionType
from typing import Any

from mlperf_logging.compliance_checker.mlp_compliance import all_same, is_integer

from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.score.rules import (
    SUBMISSION_KEYS_EVERY_LINE,
    WEIGHTS_INITIALIZATION_WARNS,
    Code,
    RoundRules,
    RuleFile,
    Ruleset,
    load_ruleset,
    log_line_class,
    published_ruleset,
)


@dataclass(frozen=True)
class Failure:
    """One broken rule, said in words."""

    rule: str  # file and key, e.g. training_5.1.0/common.yaml:init_stop
    words: str


class _OfficialToolStops(Exception):
    """The official checker raises here (an error in rule code it does not guard): the log cannot pass."""


def _run(code: Code, globals_: dict, locals_: dict | None, mode: str) -> Any:
    if code.code is None:
        raise code.error  # type: ignore[misc]
    if mode == "eval":
        return eval(code.code, globals_, locals_)  # noqa: S307 - MLCommons' own rule code, as its checker runs it
    exec(code.code, globals_, locals_)  # noqa: S102
    return None


def _short(value: Any, limit: int = 80) -> str:
    return _clip(repr(value), limit)


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


# A line as the parser keeps it: (full_string, timestamp, key, value, lineno), the official LogLine's fields in order.
FULL, TIME, KEY, VALUE, LINENO = range(5)


@dataclass(frozen=True)
class Judgement:
    """What the compliance rules say of one log: the rules it breaks (as they stood when its round was published),
    where it reached its quality target, and what only today's rules reject."""

    failures: list[Failure]
    # metadata (samples_count, epoch_num) of the first evaluation that met the target, as the rule that checks it saw it
    converged_at: dict | None = None
    later: list[Failure] = field(default_factory=list)  # failures of rules changed after publication, not counted
    valid_today: bool | None = None  # today's rules pass the log (None: the same verdict as the published rules)


_EVALUATION_KEYS = ("eval_accuracy", "aggregated_eval_accuracy")
# The END test the checker of late 2021 turned into a warning, recognised as it recognised it: by its first word
_WEIGHTS_TEST = "sorted(s['initialized_tensors'])"


class _Checker:
    def __init__(self, ruleset: Ruleset, log_line: type):
        self.ruleset = ruleset
        self.log_line = log_line  # the official LogLine type, built only for code that reads `ll`
        self.log_problems: list[Failure] = []  # unreadable lines, no lines, the checker stopping: said first
        self.keyed: dict[str, Failure] = {}  # the official 'overwritable' messages
        self.others: list[Failure] = []
        self.division: Any = None
        self.converged_at: dict | None = None
        self.weights_warn = WEIGHTS_INITIALIZATION_WARNS in ruleset.behaviours
        # what tells whether the rules as published could judge this log differently (ComplianceJudge)
        self.files_run: set[str] = set()
        self.submission_key_repeated = False
        self.weights_failed = False

    def failures(self) -> list[Failure]:
        return [*self.log_problems, *self.keyed.values(), *self.others]

    def run(self, lines: list, n_lines: int, n_parse_errors: int, first_parse_error: str | None) -> list[Failure]:
        if n_parse_errors:
            self.log_problems.append(Failure(
                "log lines",
                f"{n_parse_errors} line(s) do not parse, which invalidates the run (first: {first_parse_error})",
            ))
        if not n_lines:
            self.log_problems.append(Failure("log lines", "no MLPerf log lines in the file"))
        queue = [self.ruleset.root]
        lines = list(lines)  # BEGIN code may add lines: never to the caller's list
        try:
            while queue:
                name = queue.pop(0)
                rule_file = self.ruleset.files.get(name)
                if rule_file is None:  # the official tool logs it, then fails to open the file
                    raise _OfficialToolStops(f"the rules ask for {name}, which {self.ruleset.name} does not have")
                self._run_file(rule_file, lines, queue)
        except _OfficialToolStops as stop:
            self.log_problems.append(Failure("checker", f"the official checker stops on this log: {stop}"))
        except Exception as exc:  # rule code the official tool does not guard
            self.log_problems.append(Failure("checker", f"the official checker stops on this log: {type(exc).__name__}: {exc}"))
        return self.failures()

    def _begin(self, begin: Code, lines: list, state: dict) -> None:
        s = state["s"]
        if "loglines" not in begin.source:
            _run(begin, state, {"loglines": lines, "s": s, "state": state}, "exec")
            return
        # BEGIN sees the checker's locals, `loglines` among them, as LogLine objects it may copy, change or add to
        # (Stable Diffusion joins its FID and CLIP lines); what it leaves is what later rules read
        objects = [self.log_line(*line) for line in lines]
        _run(begin, state, {"loglines": objects, "s": s, "state": state}, "exec")
        lines[:] = [(o.full_string, o.timestamp, o.key, o.value, o.lineno) for o in objects]

    def _run_file(self, rule_file: RuleFile, lines: list, queue: list[str]) -> None:
        self.files_run.add(rule_file.name)
        if rule_file.empty:
            return
        s: dict = {}
        state = {"enqueue_config": queue.append, "s": s, "is_integer": is_integer, "math": math}
        if rule_file.begin is not None:
            self._begin(rule_file.begin, lines, state)
        keys = rule_file.keys
        reported: dict[str, list] = {name: [] for name in keys}
        for name in keys:
            self.keyed.pop(name, None)
        at_least_one: dict[str, list] = {}
        executed: set[str] = set()
        first_seen: set[str] = set()
        checkers: dict[str, Any] = {}  # key -> its CHECK tests as one function over this file's state
        functions: dict[tuple[str, str], Any] = {}  # (key, PRE or POST) -> that code as a function, likewise
        file_name = rule_file.name
        log_line = self.log_line
        for line in [line for line in lines if line[KEY] in keys]:  # other keys are allowed, and skipped, as officially
            key = line[KEY]
            rule = keys[key]
            value = line[VALUE]
            try:
                reported[key].append(value["value"])
            except (TypeError, KeyError, IndexError):
                continue  # the official loop skips a line whose value it cannot index
            if rule.counted_only:
                continue
            ll = log_line(*line) if rule.uses_line else None
            if key not in executed:
                if rule.pre is not None:
                    self._exec(rule.pre, ll, line, state, file_name, "PRE", functions)
                if rule.checks_function is not None:
                    checker = checkers.get(key)
                    if checker is None:
                        checker = checkers[key] = FunctionType(rule.checks_function, state)
                    failed = checker(ll, value)
                    if failed is not None:
                        self._check_failed(rule.checks[failed[0]], failed[1], line, state, file_name)
                else:
                    for test in rule.checks:
                        self._check(test, ll, line, state, file_name)
                if rule.post is not None:
                    self._exec(rule.post, ll, line, state, file_name, "POST", functions)
                if rule.first_line_only:
                    executed.add(key)
                if key == "submission_division" and self.division is None:
                    self.division = value["value"]
            elif rule.pre or rule.checks or rule.post:
                self.submission_key_repeated = True  # the checker of 2022 and before ran this line's code too
            if rule.first_checks and key not in first_seen:
                first_seen.add(key)
                for test in rule.first_checks:
                    self._check(test, ll, line, state, file_name)
            if rule.at_least_one_check is not None:
                counter = at_least_one.setdefault(key, [0, rule.at_least_one_check, None])
                if _run(rule.at_least_one_check, state, {"ll": ll, "v": value}, "eval"):
                    counter[0] += 1
                    if self.converged_at is None and key in _EVALUATION_KEYS:
                        self.converged_at = _convergence_point(line, lines)
                counter[2] = value.get("value") if isinstance(value, dict) else None
        for key, (count, test, last) in at_least_one.items():
            if count == 0:
                self.others.append(Failure(f"{file_name}:{key}", _target_words(key, test.source, last)))
        self._requirements(rule_file, reported)
        if rule_file.end_pre is not None:
            _run(rule_file.end_pre, state, state, "exec")
        for test in rule_file.end_checks:
            try:
                passed = _run(test, state, None, "eval")
            except Exception as exc:
                self.others.append(Failure(f"{file_name}:END", f"end-of-log rule cannot be evaluated ({type(exc).__name__}: {exc}): `{test.source}`"))
                continue
            if not passed:
                if test.source.split()[0] == _WEIGHTS_TEST:
                    self.weights_failed = True
                    if self.weights_warn:
                        continue  # a warning for the checker that published the round
                self.others.append(Failure(f"{file_name}:END", f"end-of-log rule fails: `{_clip(test.source)}` ({file_name})"))

    def _requirements(self, rule_file: RuleFile, reported: dict[str, list]) -> None:
        alternatives: set[tuple[str, ...]] = set()
        file_name = rule_file.name
        for name, rule in rule_file.keys.items():
            requirement = rule.requirement
            if requirement is None:
                continue
            values = reported[name]
            if requirement == "OPTIONAL" and not values:
                continue
            if requirement == "EXACTLY_ONE" and len(values) != 1:
                if not (values and all_same(values)):  # repeats of one value are only a warning officially
                    words = (
                        f"'{name}' is logged {len(values)} times with different values "
                        f"({', '.join(sorted({_short(v, 40) for v in values})[:4])}); the rules require exactly one"
                        if values else f"'{name}' is never logged; the rules require it exactly once"
                    )
                    self.keyed[name] = Failure(f"{file_name}:{name}", f"{words} ({file_name})")
            if requirement == "AT_LEAST_ONE" and not values:
                if name == "weights_initialization":
                    self.weights_failed = True
                    if self.weights_warn:
                        continue  # a warning for the checker that published the round
                self.keyed[name] = Failure(f"{file_name}:{name}", f"'{name}' is never logged; the rules require it ({file_name})")
            if requirement.startswith("AT_LEAST("):
                needed = int(requirement[len("AT_LEAST("):-1])
                if len(values) < needed:
                    self.keyed[name] = Failure(
                        f"{file_name}:{name}", f"'{name}' is logged {len(values)} times; the rules require at least {needed} ({file_name})"
                    )
            if requirement.startswith("AT_LEAST_ONE_OR("):
                others = [part.strip() for part in requirement[len("AT_LEAST_ONE_OR("):-1].split(",")]
                alternatives.add(tuple(sorted({name, *others})))
        for group in sorted(alternatives):  # sorted: the same words in every process, whatever its hash seed
            if not any(reported[name] for name in group):  # a name the file does not define stops the official tool
                names = " or ".join(f"'{name}'" for name in sorted(group))
                self.others.append(Failure(f"{file_name}:{'|'.join(sorted(group))}", f"neither of {names} is logged; the rules require one ({file_name})"))

    def _exec(self, code: Code, ll: Any, line: tuple, state: dict, file_name: str, stage: str, functions: dict) -> None:
        try:
            if code.function is None:
                _run(code, state, {"ll": ll, "v": line[VALUE]}, "exec")
            else:
                function = functions.get((line[KEY], stage))
                if function is None:
                    function = functions[(line[KEY], stage)] = FunctionType(code.function, state)
                function(ll, line[VALUE])
        except Exception as exc:
            key = line[KEY]
            self.keyed[key] = Failure(
                f"{file_name}:{key}",
                f"the rules' {stage} code for '{key}' fails on log line {line[LINENO]} ({type(exc).__name__}: {exc}) ({file_name})",
            )

    def _check(self, test: Code, ll: Any, line: tuple, state: dict, file_name: str) -> None:
        try:
            if not _run(test, state, {"ll": ll, "v": line[VALUE]}, "eval"):
                self._check_failed(test, None, line, state, file_name)
        except Exception as exc:
            self._check_failed(test, exc, line, state, file_name)

    def _check_failed(self, test: Code, error: Exception | None, line: tuple, state: dict, file_name: str) -> None:
        key = line[KEY]
        if error is not None:
            self.keyed[key] = Failure(
                f"{file_name}:{key}",
                f"'{key}' on log line {line[LINENO]} cannot be checked against `{_clip(test.source, 120)}` "
                f"({type(error).__name__}: {error}) ({file_name})",
            )
        else:
            self.keyed[key] = Failure(f"{file_name}:{key}", self._check_words(test, line, state, file_name))

    def _check_words(self, test: Code, line: tuple, state: dict, file_name: str) -> str:
        s = state["s"]
        key = line[KEY]
        if key == "init_stop" and "first_init_start" in test.source and isinstance(s.get("first_init_start"), (int, float)):
            # milliseconds from v0.7 on; the 0.6.0 rules (seconds) are set aside
            minutes = (line[TIME] - s["first_init_start"]) / 60_000
            allowed = s.get("compile_time_mins")
            division = f"{self.division} division" if isinstance(self.division, str) else "the rules"
            if isinstance(allowed, (int, float)):
                return f"initialisation took {minutes:.1f} min; {division} allows {allowed:g} ({file_name})"
            return f"initialisation took {minutes:.1f} min, more than the rules allow: `{test.source}` ({file_name})"
        value = line[VALUE].get("value") if isinstance(line[VALUE], dict) else line[VALUE]
        return f"'{key}' = {_short(value)} on log line {line[LINENO]} fails the rule `{_clip(test.source)}` ({file_name})"


def _convergence_point(line: tuple, lines: list) -> dict:
    """samples_count and epoch_num where a log first met its target. A Stable Diffusion line joined by the rules
    carries the samples_count it joined on (rulesets 4.0 and later), or only its step_num (3.1): then the evaluation
    lines of that step hold the counts."""
    metadata = line[VALUE].get("metadata") if isinstance(line[VALUE], dict) else None
    if line[KEY] == "aggregated_eval_accuracy" and isinstance(line[VALUE], dict) and isinstance(line[VALUE].get("value"), dict):
        joined = line[VALUE]["value"]
        if "samples_count" in joined:
            return {"samples_count": joined["samples_count"]}
        # a log whose evaluations name no step must not match a joined line without one: None == None
        step = joined.get("step_num")
        metadata = {}
        for other in lines if step is not None else ():
            other_metadata = other[VALUE].get("metadata") if other[KEY] == "eval_accuracy" and isinstance(other[VALUE], dict) else None
            if isinstance(other_metadata, dict) and other_metadata.get("step_num") == step:
                metadata = other_metadata
                break
    if not isinstance(metadata, dict):
        return {}
    return {name: metadata[name] for name in ("samples_count", "epoch_num") if name in metadata}


def _target_words(key: str, condition: str, last: Any) -> str:
    if "eval_accuracy" in key:
        return f"quality target not reached: no {key} satisfies `{condition}` (last value {_short(last, 60)})"
    return f"no '{key}' line satisfies `{condition}`"


@dataclass(frozen=True)
class ComplianceJudge:
    """Judges parsed logs by a ruleset's compliance rules as they stood when its round was published, and by today's;
    picklable, so it runs in the parsing workers."""

    ruleset: str

    @property
    def keep(self) -> frozenset[str]:
        published = published_ruleset(self.ruleset)
        return load_ruleset(self.ruleset).keys | (published.keys if published else frozenset())

    @property
    def decode(self) -> frozenset[str]:
        published = published_ruleset(self.ruleset)
        return load_ruleset(self.ruleset).value_keys | (published.value_keys if published else frozenset())

    def __call__(self, facts: LogFacts) -> Judgement:
        n_read = facts.n_marker_lines - facts.n_parse_errors
        line_class = log_line_class(self.ruleset)
        today = _Checker(load_ruleset(self.ruleset), line_class)
        failures = today.run(facts.lines, n_read, facts.n_parse_errors, facts.first_parse_error)
        published = published_ruleset(self.ruleset)
        if published is None or not _may_differ(today, published):
            # both runs would take the same steps: today's verdict is the published one
            return Judgement(failures, today.converged_at)
        then = _Checker(published, line_class)
        published_failures = then.run(facts.lines, n_read, facts.n_parse_errors, facts.first_parse_error)
        failed_then = {failure.rule for failure in published_failures}
        later = [failure for failure in failures if failure.rule not in failed_then]  # the same rule failing in other words is no news
        return Judgement(published_failures, then.converged_at, later, valid_today=not failures)


def _may_differ(today: _Checker, published: Ruleset) -> bool:
    """Whether the rules as published could judge a log otherwise than today's did: only where today's run read a file
    whose records changed since, repeated a submission_* key the old checker ran on every line, or failed a
    weights-initialisation check the old checker only warned about."""
    return bool(
        today.files_run & published.changed_files
        or (SUBMISSION_KEYS_EVERY_LINE in published.behaviours and today.submission_key_repeated)
        or (WEIGHTS_INITIALIZATION_WARNS in published.behaviours and today.weights_failed)
    )


def judge_for(rules: RoundRules) -> ComplianceJudge | None:
    """The compliance judge of a round whose rules are checked; None where the generic rules apply."""
    return ComplianceJudge(rules.ruleset) if rules.checked else None


def check_log(lines: list, n_lines: int, n_parse_errors: int, first_parse_error: str | None, ruleset: Ruleset) -> list[Failure]:
    """Every rule the log breaks, in the official checker's message order; empty for a compliant log.

    `lines` are (full_string, timestamp, key, value, lineno) for the keys the rules name, in file order (the parser's
    `lines`); rule code that reads `ll` gets the ruleset's own LogLine type. `n_lines` counts every line the official
    parser would read (any key).
    """
    return _Checker(ruleset, log_line_class(ruleset.name)).run(lines, n_lines, n_parse_errors, first_parse_error)


def describe(failures: list[Failure]) -> str | None:
    """One line for `runs.invalid_reason`: the first failure, and how many more there are."""
    if not failures:
        return None
    first = failures[0].words
    return first if len(failures) == 1 else f"{first}; and {len(failures) - 1} more rule failure(s)"
