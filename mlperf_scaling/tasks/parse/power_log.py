"""Read an MLPerf power log into a summary: the integral of its readings over the measurement window.

This is the parse half of energy (bytes to facts, in the parsing workers, where the readings stay); the energy of
a run is computed from the summaries in tasks/score/energy.py, once the run's time to train is known.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import Any

import simdjson

from mlperf_scaling.tasks.parse.numbers import finite_number, finite_time
from mlperf_scaling.tasks.parse.result_log import MLLOG, TOKENS, loads_exactly, marker_lines

_POWER_KEYS = ("power_measurement_start", "power_measurement_stop", "power_reading", "conversion_eff", "interconnect_power_est")


@dataclass
class PowerLog:
    """The power events of one node_*.txt or sw_*.txt file, in file order: (time_ms, key, value)."""

    events: list[tuple[float, str, Any]] = field(default_factory=list)
    n_unparsed: int = 0


_SCANNER = simdjson.Parser()
_KEYS = frozenset(_POWER_KEYS)
# the events whose value is a number the energy is computed from: finite, else the line is unusable
_NUMERIC_KEYS = frozenset({"power_reading", "conversion_eff", "interconnect_power_est"})
_NUMBER = (int, float)  # exact types: a bool is not a reading


def parse_power_log(data: bytes | memoryview) -> PowerLog:
    """Read the power events; lines that do not parse are skipped and counted, as the official tool skips them."""
    log = PowerLog()
    parse: Any = _SCANNER.parse  # simdjson's own types: a document of any shape
    document: Any = None
    events = log.events
    for payload in marker_lines(str(data, "latin-1"), TOKENS[MLLOG], strip=False):
        document = None  # release the previous document, even after a failed line, before the parser is reused
        try:
            document = parse(payload.encode())
            key = document["key"]
            if key in _KEYS:
                # simdjson's numbers are finite and fit a float (it refuses NaN, 1e400 and integers beyond 64 bits), so
                # a number's type is the whole of finite_number's verdict here; anything else takes the exact path
                time, value = document["time_ms"], document.get("value")
                if type(time) not in _NUMBER or (key in _NUMERIC_KEYS and type(value) not in _NUMBER):
                    raise ValueError("not a plain number")
                events.append((float(time), key, float(value) if key in _NUMERIC_KEYS else _plain(value)))
            del document  # the parser is reused only once its last document is gone
            continue
        except (ValueError, KeyError, TypeError, RuntimeError):
            pass
        # what simdjson refuses, json.loads decides (NaN, huge numbers), as the official parser would
        try:
            event = loads_exactly(payload.rstrip())
            key = event["key"]
            if key in _KEYS:
                log.events.append(_event(event["time_ms"], key, event.get("value")))
            else:
                finite_time(event["time_ms"])
        except (ValueError, KeyError, TypeError):  # BadNumber included: NaN, infinities, absurd times or readings
            log.n_unparsed += 1
            continue
    return log


def _event(time: Any, key: str, value: Any) -> tuple[float, str, Any]:
    """A power event whose time and number are finite; BadNumber (a ValueError) otherwise. (v4.0 logs hold 17 negative
    readings, which the published energies integrate as they are.)"""
    if key in _NUMERIC_KEYS:
        value = finite_number(value, key)
    return finite_time(time), key, value


def _plain(value: Any) -> Any:
    """simdjson hands back proxies for objects and arrays; keep plain Python values."""
    return value.as_dict() if hasattr(value, "as_dict") else value.as_list() if hasattr(value, "as_list") else value


@dataclass(frozen=True)
class PowerSummary:
    """What a power log contributes, before the run's time to train is known (computed where the log is parsed)."""

    integral_w_ms: float = 0.0  # sum of power_reading watts x milliseconds since the previous reading
    start_ms: float = 0.0
    stop_ms: float = 0.0
    efficiency: float = 1.0  # conversion_eff; the last one wins for nodes, the first before the estimate for switches
    switch_efficiency: float = 1.0
    interconnect_w: float = 0.0
    problem: str | None = None  # why a node log gives no energy
    # every power_reading in time order (ms, watts): the run's power profile is cut from them once its phases are known;
    # arrays of doubles, compact to send back from a worker
    reading_times_ms: array = field(default_factory=lambda: array("d"))
    reading_watts: array = field(default_factory=lambda: array("d"))


def summarize_power(log: PowerLog) -> PowerSummary:
    """Integrate the readings inside the measurement window, as the official tool does."""
    previous = last = start = stop = 0.0
    total = 0.0
    efficiency = 1.0
    started = stopped = False
    events = sorted(log.events, key=lambda event: event[0])  # stable: ties keep file order, as the official sort
    start_time = next((t for t, key, _ in events if key == "power_measurement_start"), None)
    reading_times, reading_watts = array("d"), array("d")
    for time, key, value in events:
        if key == "power_reading":
            reading_times.append(time)
            reading_watts.append(value)
        if key == "power_measurement_start":
            start = previous = time
            started = True
        # A stop stamped at (or before) the start is a placeholder (v4.0 smc): the readings run on to the last one.
        if key == "power_reading" and started and not stopped:
            total += float(value) * (time - previous)
            previous = time
            last = max(last, time)
        if key == "power_measurement_stop" and not (start_time is not None and time <= start_time):
            stop = time
            stopped = True
        if key == "conversion_eff":
            efficiency = float(value)
    if not stopped:
        stop = last
    problem = None
    if not started:
        problem = "power_measurement_start missing"
    elif stop <= start:
        problem = "no power readings after power_measurement_start"
    switch_efficiency, watts = 1.0, 0.0
    for _, key, value in log.events:  # file order, as the official tool reads a switch log
        if key == "conversion_eff":
            switch_efficiency = float(value)
        if key == "interconnect_power_est":
            watts = float(value)
            break
    return PowerSummary(total, start, stop, efficiency, switch_efficiency, watts, problem, reading_times, reading_watts)
