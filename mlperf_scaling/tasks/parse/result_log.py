"""Parse one MLPerf result log into the facts scoring needs.

Reads the three historical line formats exactly as the MLCommons compliance parser does:
bytes are decoded as latin-1, lines split on \\n, \\r and \\r\\n (Python's universal
newlines), a line carries an event if it contains the marker anywhere, and the last
marker on a line wins.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import orjson
import simdjson

from mlperf_scaling.tasks.parse.numbers import BadNumber, finite_time, non_finite_in
from mlperf_scaling.tasks.parse.run_config import (
    PRECISION_KEYS,
    PRINTS_ITS_ARGUMENTS,
    PRINTS_ITS_CONFIGURATION,
    PrintedConfiguration,
    printed_arguments,
    printed_configuration,
)

MLLOG = "mllog"  # v0.7+  ":::MLLOG {json}"
MLL = "mll"  # v0.6     ":::MLL <unix_s> <key>: {json}"
MLP = "mlp"  # v0.5     ":::MLPv0.5.0 <bench> <unix_s> (<file>:<line>) <key>[: <value>]"

TOKENS = {MLLOG: ":::MLLOG ", MLL: ":::MLL ", MLP: ":::MLPv0.5.0 "}
# Same grammar as the official v0.6 parser (re.X there, so written here without the spaces).
_MLL_LINE = re.compile(r"^([\d\.]+) ([A-Za-z0-9_]+) ?:\s+(.+)$")
_MLP_LINE = re.compile(r"^(\S+) ([\d\.]+) \(([^)]*)\) ([A-Za-z0-9_]+)(?::\s*(.*))?$")

# Keys whose values the scorer or the warehouse needs; every other event is only counted.
_KEPT_KEYS = frozenset(
    {
        "run_start",
        "run_stop",
        "eval_accuracy",
        "aggregated_eval_accuracy",
        "eval_target",
        "global_batch_size",
        "submission_benchmark",
        "submission_division",
        "submission_org",
        "submission_platform",
        "submission_status",
    }
    | {"init_start", "init_stop", "eval_start", "eval_stop"}  # the run's phases, which its power is split by
    # MLPerf HPC: CosmoFlow and OpenCatalyst log their quality as an error; a weak-scaling instance's scale is what
    # its log says (number_of_nodes x accelerators_per_node, as the official summarizer reads it)
    | {"eval_error", "number_of_nodes", "accelerators_per_node"}
)
# How a run was configured, logged from v6.0 (and by some submitters before): its first value is kept.
CONFIGURATION_KEYS = frozenset(
    {
        "tensor_parallelism",
        "pipeline_parallelism",
        "context_parallelism",
        "expert_parallelism",
        "micro_batch_size",
        "gradient_accumulation_steps",
        "config_filename",
    }
    | PRECISION_KEYS.keys()
)
_KEPT_KEYS = _KEPT_KEYS | CONFIGURATION_KEYS
_PHASE_KEYS = frozenset({"init_start", "init_stop", "eval_start", "eval_stop"})


@dataclass
class LogFacts:
    """What one result log says, before any judgement of validity."""

    log_format: str | None = None
    n_marker_lines: int = 0
    n_parse_errors: int = 0
    first_parse_error: str | None = None
    run_start_ms: float | None = None
    run_stop_ms: float | None = None
    run_stop_status: str | None = None  # 'success', 'aborted', ... or None when not stated
    n_run_start: int = 0
    n_run_stop: int = 0
    log_benchmark: str | None = None
    global_batch_size: Any = None
    last_global_batch_size: Any = None  # the RCP checker reads the last one a log states
    eval_target: Any = None
    # (key, value, metadata) of every quality-bearing event, in file order
    quality_events: list[tuple[str, Any, Any]] = field(default_factory=list)
    timing_closed: bool = False  # the official scan stops once it holds a start and a stop
    n_lines_in_seconds: int = 0  # MLLOG lines with time_s instead of time_ms: the official parser stops on them
    # (full_string, timestamp, key, value, lineno) of every line whose key is in `keep`, in file order, as the
    # official parser reads it: value is {"value", "metadata"} for MLLOG, the JSON body for MLL
    lines: list[tuple[str, float, str, Any, int]] = field(default_factory=list)
    configuration: dict[str, Any] = field(default_factory=dict)  # the first value of each CONFIGURATION_KEYS event
    phases: list[tuple[str, float]] = field(default_factory=list)  # (init_start|init_stop|eval_start|eval_stop, ms)
    printed: PrintedConfiguration | None = None  # the precision and config name the log prints before run_start
    # number_of_nodes and accelerators_per_node as the official summarizer's _query_instance_scale reads them: each the
    # latest value until both have been seen (MLPerf HPC weak scaling)
    logged_nodes: Any = None
    logged_accelerators_per_node: Any = None


def detect_format(text: str) -> str | None:
    """Which marker family a log uses; None when it has no MLPerf lines."""
    if TOKENS[MLLOG] in text:
        return MLLOG
    if TOKENS[MLL] in text:
        return MLL
    if TOKENS[MLP] in text:
        return MLP
    return None


def loads_exactly(payload: str) -> Any:
    # orjson is a strict subset of json's grammar, so falling back keeps json's exact verdict
    # (NaN, Infinity, huge ints, lone surrogates) at a fraction of the cost.
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        try:
            return json.loads(payload)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None


# The value of a kept line whose value no rule reads: its JSON is validated, not decoded.
UNREAD = {"value": None, "metadata": None}


def parse_log(data: bytes | memoryview, keep: frozenset[str] = frozenset(), decode: frozenset[str] | None = None) -> LogFacts:
    """Parse a whole result log held in memory.

    The lines of the keys in `keep` are kept whole in `lines`, as (full_string, timestamp, key, value, lineno); of
    those, only the keys in `decode` (default: all) get their value decoded.
    """
    text = str(data, "latin-1")  # bytes, or a view of shared memory
    facts = LogFacts(log_format=detect_format(text))
    if facts.log_format == MLLOG:
        _parse_mllog(text, facts, keep, keep if decode is None else decode)
        benchmark = (facts.log_benchmark or "").lower()
        if benchmark.startswith(PRINTS_ITS_CONFIGURATION):
            facts.printed = printed_configuration(text)
        elif benchmark.startswith(PRINTS_ITS_ARGUMENTS):
            facts.printed = printed_arguments(text)
    elif facts.log_format == MLL:
        _parse_mll(text, facts, keep)
    elif facts.log_format == MLP:
        _parse_mlp(text, facts)
    return facts


def _error(facts: LogFacts, payload: str, why: str) -> None:
    facts.n_parse_errors += 1
    if facts.first_parse_error is None:
        facts.first_parse_error = f"{why}: {payload[:160]}"


def _record(facts: LogFacts, key: str, time: float, value: Any, status: str | None, metadata: Any = None) -> None:
    """Apply the official start/stop scan: both keep their latest value until both are seen."""
    if key == "run_start":
        facts.n_run_start += 1
        if not facts.timing_closed:
            facts.run_start_ms = time
    elif key == "run_stop":
        facts.n_run_stop += 1
        if not facts.timing_closed:
            facts.run_stop_ms = time
            facts.run_stop_status = status
    elif key in ("eval_accuracy", "aggregated_eval_accuracy", "eval_error"):
        facts.quality_events.append((key, value, metadata))
    elif key in ("number_of_nodes", "accelerators_per_node"):
        if facts.logged_nodes is None or facts.logged_accelerators_per_node is None:
            if key == "number_of_nodes":
                facts.logged_nodes = value
            else:
                facts.logged_accelerators_per_node = value
    elif key == "global_batch_size":
        if facts.global_batch_size is None:
            facts.global_batch_size = value
        facts.last_global_batch_size = value
    elif key == "eval_target":
        if facts.eval_target is None:
            facts.eval_target = value
    elif key == "submission_benchmark":
        if facts.log_benchmark is None and isinstance(value, str):
            facts.log_benchmark = value
    elif key in _PHASE_KEYS:
        facts.phases.append((key, time))
    elif key in CONFIGURATION_KEYS:
        facts.configuration.setdefault(key, value)
    if facts.run_start_ms is not None and facts.run_stop_ms is not None:
        facts.timing_closed = True


# Line breaks str.splitlines() knows beyond \n, \r and \r\n; file iteration does not split on them.
_EXTRA_LINE_BREAKS = ("\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85")


def marker_lines(text: str, token: str, strip: bool = True) -> list[str]:
    """What follows the last marker of every line that has one, right-stripped as the official parser does.

    `strip=False` leaves trailing whitespace for a JSON parser that ignores it anyway.
    """
    if any(mark in text for mark in _EXTRA_LINE_BREAKS):
        lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    else:
        lines = text.splitlines()  # same breaks as universal newlines here, in one pass
    if strip:
        return [line.rpartition(token)[2].rstrip() for line in lines if token in line]
    return [line.rpartition(token)[2] for line in lines if token in line]


_NUMBER = {int, float}
_TEXT = {str}


_SCANNER = simdjson.Parser()  # one per process: each worker has its own


def _scan_keys_and_times(payloads: list[str]) -> tuple[list[Any], list[Any]]:
    """Validate every line as JSON and read only `key` and `time_ms`, without building the rest.

    simdjson accepts a subset of what json.loads accepts, so any refusal falls back to the exact path.
    """
    parse: Any = _SCANNER.parse  # simdjson's own types: a document of any shape
    keys: list[Any] = []
    times: list[Any] = []
    for payload in payloads:
        document = parse(payload.encode())
        keys.append(document["key"])
        times.append(document["time_ms"])
        del document  # the parser is reused only once its last document is gone
    return keys, times


def _parse_mllog(text: str, facts: LogFacts, keep: frozenset[str], decode: frozenset[str]) -> None:
    # Hot path: C code validates every line (JSON whitespace is a subset of what str.rstrip removes,
    # so unstripped lines parse alike) and only the events some step reads are decoded in full.
    payloads = marker_lines(text, TOKENS[MLLOG], strip=False)
    facts.n_marker_lines = len(payloads)
    try:
        keys, times = _scan_keys_and_times(payloads)
        regular = set(map(type, keys)) <= _TEXT and set(map(type, times)) <= _NUMBER  # simdjson's numbers are finite
    except (ValueError, KeyError, TypeError, IndexError, RuntimeError, OverflowError):
        regular = False
    if not regular:
        _parse_mllog_line_by_line([p.rstrip() for p in payloads], facts, keep)
        return
    wanted = _KEPT_KEYS | keep
    decoded = _KEPT_KEYS | decode
    lines = facts.lines
    loads = orjson.loads
    for i, key in enumerate(keys):
        if key not in wanted:
            continue
        if key in _PHASE_KEYS and key not in keep:  # only its time is read: no need to decode it
            facts.phases.append((key, float(times[i])))
            continue
        payload = payloads[i]
        if key not in decoded:
            lines.append((payload, float(times[i]), key, UNREAD, i))
            continue
        try:
            event = loads(payload)
        except orjson.JSONDecodeError:  # simdjson accepted it, so json.loads does
            event = loads_exactly(payload)
        metadata = event.get("metadata")
        if key in keep:
            lines.append((payload, float(times[i]), key, {"value": event.get("value"), "metadata": metadata}, i))
        if key in _KEPT_KEYS:
            status = metadata.get("status") if isinstance(metadata, dict) else None
            _record(facts, key, float(times[i]), event.get("value"), status, metadata)


def _parse_mllog_line_by_line(payloads: list[str], facts: LogFacts, keep: frozenset[str]) -> None:
    """The exact path: json.loads decides what orjson refused, odd events are repaired or counted as errors."""
    for lineno, payload in enumerate(payloads):
        event = _repair_event(facts, payload, _loads_or_none(facts, payload))
        if event is None:
            continue
        key = event["key"]
        if key in keep or key in _KEPT_KEYS:
            # json.loads reads NaN, Infinity and 1e400: a line a step reads must not carry them on
            where = non_finite_in({"value": event.get("value"), "metadata": event.get("metadata")})
            if where is not None:
                _error(facts, payload, f"{where} is not a finite number")
                continue
        metadata = event.get("metadata")
        if key in keep:
            facts.lines.append((payload, event["__time"], key, {"value": event.get("value"), "metadata": metadata}, lineno))
        if key in _KEPT_KEYS:
            status = metadata.get("status") if isinstance(metadata, dict) else None
            _record(facts, key, event["__time"], event.get("value"), status, metadata)


def _loads_or_none(facts: LogFacts, payload: str) -> Any:
    try:
        return loads_exactly(payload)
    except ValueError as exc:
        _error(facts, payload, f"not JSON ({exc})")
        return None


def _repair_event(facts: LogFacts, payload: str, event: Any) -> dict | None:
    """Events the hot path could not take as they are: a time given as text or in seconds, or no key."""
    if event is None:
        return None  # already counted as a parse error
    if not isinstance(event, dict) or "key" not in event:
        _error(facts, payload, "JSON without a key")
        return None
    if not isinstance(event["key"], str):
        return None  # parses, so it does not invalidate the run, but names no event
    try:
        if "time_ms" in event:
            raw = event["time_ms"]
            time = finite_time(float(raw) if isinstance(raw, str) else raw)
        else:  # v0.7 Alibaba writes seconds
            raw = event["time_s"]
            time = finite_time((float(raw) if isinstance(raw, str) else raw) * 1000.0, "time_s x 1000")
            facts.n_lines_in_seconds += 1
    except BadNumber as exc:
        _error(facts, payload, f"no usable time_ms ({exc})")
        return None
    except (KeyError, TypeError, ValueError, OverflowError):
        _error(facts, payload, "no usable time_ms")
        return None
    return {**event, "__time": time}


def _parse_mll(text: str, facts: LogFacts, keep: frozenset[str]) -> None:
    for lineno, payload in enumerate(marker_lines(text, TOKENS[MLL])):
        facts.n_marker_lines += 1
        match = _MLL_LINE.match(payload)
        if match is None:
            _error(facts, payload, "does not match the :::MLL line grammar")
            continue
        try:
            seconds = finite_time(float(match.group(1)) * 1000.0, "the time") / 1000.0
        except (BadNumber, ValueError) as exc:
            _error(facts, payload, f"no usable time: {exc}")
            continue
        try:
            body = loads_exactly(match.group(3))
        except ValueError as exc:
            _error(facts, payload, f"not JSON ({exc})")
            continue
        key = match.group(2)
        where = non_finite_in(body) if key in keep or key in _KEPT_KEYS else None
        if where is not None:
            _error(facts, payload, f"{where or 'the value'} is not a finite number")
            continue
        if key in keep:  # the official v0.6 parser keeps the whole JSON body and the time in seconds
            facts.lines.append((payload, seconds, key, body, lineno))
        if key not in _KEPT_KEYS:
            continue
        value = body.get("value") if isinstance(body, dict) else body
        metadata = body.get("metadata") if isinstance(body, dict) else None
        status = metadata.get("status") if isinstance(metadata, dict) else None
        _record(facts, key, seconds * 1000.0, value, status)


def _parse_mlp(text: str, facts: LogFacts) -> None:
    for payload in marker_lines(text, TOKENS[MLP]):
        facts.n_marker_lines += 1
        match = _MLP_LINE.match(payload)
        if match is None:
            _error(facts, payload, "does not match the :::MLPv0.5.0 line grammar")
            continue
        try:
            time = finite_time(float(match.group(2)) * 1000.0, "the timestamp")
        except (BadNumber, ValueError) as exc:
            _error(facts, payload, f"no usable timestamp: {exc}")
            continue
        key = match.group(4)
        if facts.log_benchmark is None:
            facts.log_benchmark = match.group(1)
        if key not in _KEPT_KEYS:
            continue
        raw = match.group(5)
        value: Any = None
        if raw:
            try:
                value = loads_exactly(raw)
            except ValueError:
                value = raw.strip()  # bare values such as `eval_target: 0.749` parse; others stay text
            if non_finite_in([value]) is not None:
                _error(facts, payload, "a value that is not a finite number")
                continue
        status = None
        if key == "run_stop":
            status = _v05_status(value)
        _record(facts, key, time, value, status)


def _v05_status(value: Any) -> str | None:
    """v0.5 run_stop carries {"success": true|"true"|false}; bare run_stop says nothing."""
    if isinstance(value, dict) and "success" in value:
        flag = value["success"]
        if flag is True or (isinstance(flag, str) and flag.strip().lower() == "true"):
            return "success"
        return "failure"
    return None
