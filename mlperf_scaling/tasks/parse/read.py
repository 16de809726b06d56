"""Read one round's files into facts: systems, parsed runs, power summaries, scaling factors and rejections.

The parse step of source -> parse -> score: it reads each file once, in the order the source yields it, and keeps
only small per-run facts in memory. Bytes to facts; judging and scoring are the score step's.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mlperf_scaling.contracts.enums import Stage
from mlperf_scaling.rounds import suite_of
from mlperf_scaling.tasks.parse.implementation import is_implementation_file
from mlperf_scaling.tasks.parse.layout import (
    ENTRY_JSON,
    IGNORED,
    OUTSIDE_DATA,
    POWER_LOG,
    RESULT_LOG,
    SCALING_JSON,
    SYSTEMS_JSON,
    Member,
    classify,
)
from mlperf_scaling.tasks.parse.numbers import BadNumber, scaling_factor
from mlperf_scaling.tasks.parse.pool import POWER, RESULT, Judge, LogParser
from mlperf_scaling.tasks.parse.power_log import PowerSummary
from mlperf_scaling.tasks.parse.result_log import LogFacts
from mlperf_scaling.tasks.parse.systems_json import SystemRecord, SystemsJsonError, parse_system
from mlperf_scaling.tasks.source.members import MemberStream, Provenance, SkippedMember
from mlperf_scaling.tasks.source.mirror_notes import CopyNotes

# (submitter, system, benchmark or submission): folder names, None where a layout has no such level
GroupKey = tuple[Any, ...]


@dataclass
class ParsedRun:
    member: Member
    facts: LogFacts
    verdict: Any  # what the judge said in the worker (compliance failures), or None
    size: int
    sha256: str


# (submitter, system, benchmark) -> result name -> {"node": [...], "sw": [...]}
PowerByRun = dict[GroupKey, dict[str, dict[str, list[PowerSummary]]]]


@dataclass
class RoundFacts:
    """Everything read from one round, before any scoring."""

    round: str
    systems: dict[GroupKey, tuple[Member, SystemRecord]]  # (submitter, system folder, submission)
    runs: list[ParsedRun]
    power: PowerByRun
    scaling: dict[GroupKey, tuple[float | None, str | None]]  # (factor, why unusable)
    rejections: list[dict[str, Any]]
    missing_members: list[Member]  # logs of this round absent from the copy (MISSING.txt)
    system_names: dict[GroupKey, str] = field(default_factory=dict)
    # the submitters' implementation files (configs, run scripts, READMEs): repository path -> text
    implementation_files: dict[str, str] = field(default_factory=dict)
    n_files: int = 0
    n_bytes: int = 0
    n_power_logs: int = 0
    seconds: float = 0.0

    def system_of(self, member: Member) -> str:
        """The system name a member belongs to (v0.5 TPU folders, all named `tpu`, qualified by submission)."""
        return self.system_names.get((member.submitter, member.system, member.submission)) or member.system or ""

    def reject(self, path: str, stage: Stage, reason: str) -> None:
        self.rejections.append(rejection(self.round, path, stage, reason))


def rejection(round_name: str, path: str, stage: Stage, reason: str) -> dict[str, Any]:
    """A rejection row; its submitter, system and benchmark are read from the file's place, where it says."""
    member = classify(path)
    return {"round": round_name, "suite": suite_of(round_name), "path": path, "submitter": member.submitter, "system": member.system,
            "benchmark": member.benchmark, "stage": stage.value, "reason": reason}


@dataclass(frozen=True)
class Share:
    """Which of a round's logs one reader takes: the k-th of every n (by order in the source), and, for k = 0, every
    other file. Readers of the shares of one source together read each file once (mlperf_scaling.tasks.parse.shares)."""

    k: int = 0
    n: int = 1

    def takes_log(self, ordinal: int) -> bool:
        return ordinal % self.n == self.k

    @property
    def takes_others(self) -> bool:
        return self.k == 0


WHOLE = Share()


class _Collector:
    def __init__(self, round_name: str, notes: CopyNotes, workers: int | None, judge: Judge | None, share: Share = WHOLE):
        self.round = round_name
        self.notes = notes
        self.share = share
        self.parser = LogParser(workers, judge)
        self.n_logs = 0  # logs met so far, whichever share takes them: a log's ordinal
        self.log_members: list[tuple[str, Member, int, int]] = []  # (kind, member, size, ordinal), in parser order
        self.runs: list[ParsedRun] = []
        self.run_ordinals: list[int] = []
        self.power_logs: list[tuple[int, Member, PowerSummary]] = []  # (ordinal, member, summary), in source order
        self.systems: dict[GroupKey, tuple[Member, SystemRecord]] = {}
        self.scaling: dict[GroupKey, tuple[float | None, str | None]] = {}
        self.rejections: list[dict[str, Any]] = []
        self.missing_members: list[Member] = []
        self.implementation_files: dict[str, str] = {}
        self.n_files = 0
        self.n_bytes = 0
        self.n_power_logs = 0

    def finish_parsing(self) -> None:
        results = self.parser.results()
        for (kind, member, size, ordinal), (parsed, verdict, sha) in zip(self.log_members, results, strict=True):
            if kind == RESULT:
                assert isinstance(parsed, LogFacts)
                self.runs.append(ParsedRun(member, parsed, verdict, size, sha))
                self.run_ordinals.append(ordinal)
                continue
            assert isinstance(parsed, PowerSummary)
            self.power_logs.append((ordinal, member, parsed))

    def _takes_log(self) -> bool:
        ordinal, self.n_logs = self.n_logs, self.n_logs + 1
        return self.share.takes_log(ordinal)

    def reject(self, path: str, stage: Stage, reason: str) -> None:
        self.rejections.append(rejection(self.round, path, stage, reason))

    def add(self, member: Member, load: Callable[[], bytes], size: int = 0) -> None:
        if member.kind not in (RESULT_LOG, POWER_LOG) and not self.share.takes_others:
            return
        if member.kind == IGNORED:
            reason = member.reason or "not used"
            if member.path not in self.notes.excluded:  # those are reported once, from the notes
                self.reject(member.path, Stage.LAYOUT, reason)
            return
        if member.kind == OUTSIDE_DATA:
            # a repository's code is not data, but how each implementation was configured is (tasks/parse/implementation.py)
            if is_implementation_file(member.path, size):
                data = load()
                self.n_bytes += len(data)
                self.implementation_files[member.path] = data.decode("utf-8", errors="replace")
            return
        if member.kind == POWER_LOG:
            self.n_power_logs += 1
            name = member.path.rsplit("/", 1)[-1]
            nested = member.path.split("/power/", 1)[1].count("/")
            if nested != 1 or not name.endswith(".txt") or not name.startswith(("node_", "sw_")):
                return  # total_power.txt and the like: not read by the official tool either
            if not self._takes_log():
                return
            data = load()
            self.n_bytes += len(data)
            self.log_members.append((POWER, member, len(data), self.n_logs - 1))
            self.parser.add(data, POWER)
            return
        if member.kind == RESULT_LOG and not self._takes_log():
            return
        data = load()
        self.n_bytes += len(data)
        if member.kind == RESULT_LOG:
            self.log_members.append((RESULT, member, len(data), self.n_logs - 1))
            self.parser.add(data)
        elif member.kind in (SYSTEMS_JSON, ENTRY_JSON):
            self._add_system(member, data)
        elif member.kind == SCALING_JSON:
            self._add_scaling(member, data)

    def _add_system(self, member: Member, data: bytes) -> None:
        try:
            record = parse_system(data)
        except SystemsJsonError as exc:
            self.reject(member.path, Stage.PARSE, str(exc))
            return
        key = (member.submitter, member.system, member.submission or "")
        if key in self.systems:
            self.reject(member.path, Stage.PARSE, f"second description of system {member.system!r}: the first one read is kept")
            return
        self.systems[key] = (member, record)

    def _add_scaling(self, member: Member, data: bytes) -> None:
        key = (member.submitter, member.system, member.benchmark)
        try:
            self.scaling[key] = (scaling_factor(json.loads(data.decode("utf-8", errors="strict"))["scaling_factor"]), None)
        except (ValueError, KeyError, TypeError, UnicodeDecodeError, RecursionError) as exc:
            said = str(exc) if isinstance(exc, BadNumber) else f"{exc.__class__.__name__}: {exc}"
            reason = f"scaling.json unusable ({said}): the score is left unscaled and not published"
            self.reject(member.path, Stage.PARSE, reason)
            self.scaling[key] = (None, reason)


@dataclass
class ShareFacts:
    """What one reader read of its share of a round: the logs it took (with their ordinals in the source), and, in
    share 0, every other file's facts. Small: the logs' lines stay where they were parsed."""

    share: Share
    runs: list[tuple[int, ParsedRun]]
    power_logs: list[tuple[int, Member, PowerSummary]]
    systems: dict[GroupKey, tuple[Member, SystemRecord]]
    scaling: dict[GroupKey, tuple[float | None, str | None]]
    rejections: list[dict[str, Any]]
    skipped: list[SkippedMember]
    n_files: int
    n_bytes: int
    n_power_logs: int
    n_logs: int = 0  # the logs met, taken or not: every share of one source meets the same
    provenance: Provenance | None = None  # the version its reader saw, where the reader opened the source itself
    implementation_files: dict[str, str] = field(default_factory=dict)


def read_share(
    stream: MemberStream,
    round_name: str,
    share: Share = WHOLE,
    notes: CopyNotes | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    workers: int | None = None,
    judge: Judge | None = None,
) -> ShareFacts:
    """Read one share of an opened source's members (every member for the whole share)."""
    collector = _Collector(round_name, notes or CopyNotes(), workers, judge, share)
    try:
        for path, load, size in stream.members:
            collector.n_files += 1
            collector.add(classify(path), load, size)
            if progress is not None and collector.n_files % 500 == 0:
                progress(collector.n_files, collector.n_bytes, stream.fraction_read())
        collector.finish_parsing()
    finally:
        collector.parser.close()
    c = collector
    return ShareFacts(share, list(zip(c.run_ordinals, c.runs, strict=True)), c.power_logs, c.systems, c.scaling, c.rejections,
                      list(stream.skipped), c.n_files, c.n_bytes, c.n_power_logs, c.n_logs, implementation_files=c.implementation_files)


def read_round_files(
    stream: MemberStream,
    round_name: str,
    notes: CopyNotes | None = None,
    progress: Callable[[int, int, float], None] | None = None,
    workers: int | None = None,
    judge: Judge | None = None,
) -> RoundFacts:
    """Read every member of an opened source into the round's facts.

    `workers` processes parse the logs (default: up to two cores); 0 or 1 parses in this process. `judge`, if
    given, judges each parsed result log in the worker that parsed it (the score step's compliance rules).
    """
    started = time.perf_counter()
    share = read_share(stream, round_name, WHOLE, notes, progress, workers, judge)
    return assemble_round(round_name, [share], notes, time.perf_counter() - started)


def assemble_round(round_name: str, shares: list[ShareFacts], notes: CopyNotes | None, seconds: float) -> RoundFacts:
    """The round's facts from the shares that together read each of its files once, in the source's order: the same
    facts, to the row, as one reader of the whole source."""
    notes = notes or CopyNotes()
    shares = sorted(shares, key=lambda found: found.share.k)
    if [found.share for found in shares] != [Share(k, len(shares)) for k in range(len(shares))]:
        raise ValueError(f"{round_name}: the shares read are not all of one source's {len(shares)} shares")
    first = shares[0]
    collector = _Collector(round_name, notes, 0, None)
    collector.systems, collector.scaling, collector.rejections = first.systems, first.scaling, list(first.rejections)
    collector.runs = [run for _, run in sorted((pair for found in shares for pair in found.runs), key=lambda pair: pair[0])]
    collector.missing_members = []
    power: dict[GroupKey, dict[str, dict[str, list[PowerSummary]]]] = defaultdict(dict)
    for _, member, summary in sorted((entry for found in shares for entry in found.power_logs), key=lambda entry: entry[0]):
        # power/<result name>/node_<k>.txt or sw_<k>.txt, as the official tool globs them
        run_name, file_name = member.path.split("/power/", 1)[1].split("/")[-2:]
        files = power[(member.submitter, member.system, member.benchmark)].setdefault(run_name, {"node": [], "sw": []})
        files["node" if file_name.startswith("node_") else "sw"].append(summary)
    for skipped in first.skipped:
        collector.reject(skipped.path, Stage.SOURCE, skipped.reason)
    for path, why in sorted(notes.excluded.items()):
        collector.reject(path, Stage.SOURCE, f"excluded from this copy ({why}): listed in EXCLUDED.txt")
    for path in sorted(notes.missing):
        member = classify(path)
        collector.reject(path, Stage.SOURCE, "log absent from this copy: listed in MISSING.txt")
        if member.kind == RESULT_LOG:
            collector.missing_members.append(member)
    c = collector
    return RoundFacts(
        round=round_name, systems=c.systems, runs=c.runs, power=dict(power), scaling=c.scaling, rejections=c.rejections,
        missing_members=c.missing_members, system_names=_v05_system_names(c), implementation_files=first.implementation_files,
        n_files=first.n_files,
        n_bytes=sum(found.n_bytes for found in shares), n_power_logs=first.n_power_logs, seconds=seconds,
    )


def _v05_system_names(collector: _Collector) -> dict[GroupKey, str]:
    """v0.5 names every Google TPU system folder `tpu`: qualify a name used by several submissions."""
    submissions: dict[tuple[Any, ...], set[str]] = defaultdict(set)
    members = [r.member for r in collector.runs] + [m for m, _ in collector.systems.values()] + collector.missing_members
    for m in members:
        if m.submission is not None:
            submissions[(m.submitter, m.system)].add(m.submission)
    names = {}
    for (submitter, system), found in submissions.items():
        for submission in found:
            qualified = system if len(found) == 1 else f"{submission.split('/')[-1]}/{system}"
            names[(submitter, system, submission)] = qualified
    return names


