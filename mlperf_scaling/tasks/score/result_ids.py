"""Result IDs: the row numbers the official summarizer gives a round's systems.

mlperf-logging's result summarizer writes its spreadsheet (`_summaries_to_xlsx`) one row per system, numbered
`<round>-NNNN` from 0 by one counter: the closed division, then the open; in each, the sections available on-premise,
available in the cloud, preview, then research (RDI); in each section, the summary's sort order, which compares every
column in turn (the availability as the file spells it, the submitter the file names, the system name, the node count as
text, and so on to the benchmark times). All the benchmarks of a system share its ID.

A system the summarizer leaves out of its sheets gets none: a systems JSON it cannot decode or that lacks a field it
reads, or a division not spelled `closed` or `open` (v0.7's "Closed", v1.0's "close"). One departure: an availability
its configuration rejects (v3.1's "Available on premise", which stops the summarizer) is placed as the pipeline
normalises it. The IDs MLCommons published for v3.1 and v5.1 do not follow this numbering (docs/data.md).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# the summarizer's sections in its order, each with the availabilities (as the pipeline normalises them) that its
# configuration maps there
SECTIONS: tuple[tuple[str, str], ...] = tuple(
    (division, section) for division in ("closed", "open") for section in ("on-premise", "cloud", "preview", "research")
)
_SECTION_OF = {
    "available on-premise": "on-premise", "available": "on-premise",
    "available cloud": "cloud",
    "preview": "preview",
    "research": "research", "research, development, or internal (rdi)": "research", "development": "research", "internal": "research",
}


# the fields the summarizer reads from a systems JSON; without one of them it prints an error and skips the system
SUMMARY_FIELDS = (
    "division", "status", "submitter", "system_name", "host_processor_model_name", "number_of_nodes", "host_processor_core_count",
    "host_processors_per_node", "accelerator_model_name", "accelerators_per_node", "framework", "hw_notes", "sw_notes",
)
# what the systems JSON reader notes when the file as written is not valid JSON, or a key was read under another name
_UNREADABLE_NOTES = ("trailing commas removed", "read as v0.6")
_RENAMED_KEY = re.compile(r"key '[^']*' read as '([^']*)'")


@dataclass(frozen=True)
class SummaryRow:
    """One system as the summarizer's summary holds it: what its sort reads, and the section it falls in."""

    submitter: str  # the submitter folder
    system: str  # the system folder
    division: str | None  # as written: the summarizer's sheets take only "closed" and "open"
    availability: str | None  # normalised
    sort_key: tuple
    left_out: str | None = None  # why the summarizer leaves the system out of its sheets


def _text(value: Any) -> str:
    # pandas' astype(str) as the summarizer applies it: a number from JSON is written as Python writes it
    return "" if value is None else str(value)


def _count(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _pretty_system_name(document: Mapping[str, Any]) -> str:
    # a v0.6 Google TPU system is named by its chips, as the summarizer shows it
    name = _text(document.get("system_name"))
    if name == "tpu-v3":
        return f"TPUv3.{_count(document.get('accelerators_per_node')) * 2}"
    return name


def _pretty_framework(framework: str) -> str:
    if "TensorFlow" in framework:
        commit_hash = re.search(r" commit hash = .*", framework)
        if commit_hash:
            return framework.replace(commit_hash.group(0), "")
    return framework


def _time_key(minutes: float | None) -> tuple[int, float]:
    # a benchmark the system did not run sorts last, as pandas puts a missing value
    if minutes is None or math.isnan(minutes):
        return (1, 0.0)
    return (0, minutes)


def _left_out(document: Mapping[str, Any], reading_notes: str | None) -> str | None:
    notes = reading_notes or ""
    if not document or any(note in notes for note in _UNREADABLE_NOTES):
        return "the summarizer cannot decode the systems JSON"
    renamed = set(_RENAMED_KEY.findall(notes))
    missing = [key for key in SUMMARY_FIELDS if key not in document or key in renamed]
    if missing:
        return f"the systems JSON lacks {', '.join(missing)}, which the summarizer reads"
    return None


def summary_row(
    submitter: str,
    system: str,
    availability: str | None,
    description_json: str | None,
    reading_notes: str | None,
    times: Iterable[float | None],
) -> SummaryRow:
    """A system's row: the systems JSON as read (and the reader's notes on what it repaired), its normalised
    availability, and its score per benchmark in the ruleset's order."""
    document: dict[str, Any] = json.loads(description_json) if description_json else {}
    nodes = document.get("number_of_nodes")
    declared_submitter = _text(document.get("submitter")) or submitter
    accelerator = _text(document.get("accelerator_model_name"))
    sort_key = (
        _text(document.get("division")),
        _text(document.get("status")),
        declared_submitter,
        _pretty_system_name(document),
        _text(nodes),
        _text(document.get("host_processor_model_name")),
        _count(document.get("host_processors_per_node")) * _count(nodes),
        "TPUv3" if accelerator == "tpu-v3" else accelerator,
        _count(document.get("accelerators_per_node")) * _count(nodes),
        _pretty_framework(_text(document.get("framework"))),
        ";".join(s for s in (_text(document.get("hw_notes")), _text(document.get("sw_notes"))) if s),
        _text(document.get("private_id")),
        *(_time_key(t) for t in times),
        f"{declared_submitter}/systems/{system}.json",
    )
    division = document.get("division")
    return SummaryRow(submitter, system, division if isinstance(division, str) else None, availability, sort_key,
                      _left_out(document, reading_notes))


def result_ids(round_name: str, rows: Iterable[SummaryRow]) -> dict[tuple[str, str], str]:
    """(submitter, system) -> `X.Y-NNNN`, numbered as the summarizer's spreadsheet numbers its rows.

    A system the summarizer leaves out, or whose division or availability it cannot place, gets none.
    """
    prefix = round_name.removeprefix("v")[:3]
    ordered = sorted(rows, key=lambda row: row.sort_key)
    ids: dict[tuple[str, str], str] = {}
    index = 0
    for division, section in SECTIONS:
        for row in ordered:
            if row.left_out is None and row.division == division and _SECTION_OF.get(row.availability or "") == section:
                ids[(row.submitter, row.system)] = f"{prefix}-{index:04}"
                index += 1
    return ids
