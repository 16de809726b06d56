"""Read a system description (systems/*.json or v0.5 entry.json) leniently into one flat record.

Accepts what the published rounds contain: numbers as strings, floats or ints, trailing commas,
typo keys, placeholders, the old `nodes[]` schema and v0.6 NVIDIA's `key: {json}` lines.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from typing import Any

from mlperf_scaling.tasks.parse.system_covariates import SystemCovariates, system_covariates
from mlperf_scaling.tasks.parse.tpu_slices import counted_in_chips, tpu_generation

# Typos and spellings found in the published files, mapped to the schema's key.
_KEY_ALIASES = {
    "divison": "division",
    "sumitter": "submitter",
    "number of nodes": "number_of_nodes",
    "num_nodes": "number_of_nodes",
    "org": "submitter",
}
_PLACEHOLDERS = {"", "n/a", "na", "none", "-", "null", "tbd", "core_count"}
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_V06_LINE = re.compile(r"^\s*([A-Za-z0-9_ -]+)\s*:\s*(\{.*\})\s*$")

_STATUS = {
    "available": "available",
    "onprem": "available on-premise",
    "on-prem": "available on-premise",
    "on-premise": "available on-premise",
    "on premise": "available on-premise",
    "available on premise": "available on-premise",
    "available on-premise": "available on-premise",
    "available onprem": "available on-premise",
    "cloud": "available cloud",
    "available cloud": "available cloud",
    "available in cloud": "available cloud",
    "preview": "preview",
    "research": "research",
    "rdi": "research",
}


class SystemsJsonError(ValueError):
    """The file cannot be read as a system description; the message says why, for a person."""


@dataclass
class SystemRecord:
    submitter_declared: str | None
    division: str | None
    division_raw: str | None
    availability: str | None
    status_raw: str | None
    system_name: str | None
    number_of_nodes: int | None
    accelerators_per_node: int | None
    accelerators: int | None
    accelerator_model_name: str | None
    host_processor_model_name: str | None
    host_processors_per_node: int | None
    framework: str | None
    notes: str | None  # what was repaired or guessed while reading
    covariates: SystemCovariates | None = None  # the hardware and software that explain scaling, typed


def _clean_text(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        value = str(value)
    value = value.strip()
    return None if value.lower() in _PLACEHOLDERS else value


# No system has come near a million nodes or accelerators; a count beyond it is an error in the file, and would
# overflow the warehouse's 64-bit integers once multiplied.
MAX_COUNT = 1_000_000


def parse_count(value: Any) -> int | None:
    """'8', 8, 8.0, ' 8 ' -> 8; placeholders -> None; anything else, or a count beyond MAX_COUNT, raises ValueError."""
    count = _whole_number(value)
    if count is not None and count < 0:
        raise ValueError(f"negative: {_shown(value)}")
    if count is not None and count > MAX_COUNT:
        raise ValueError(f"out of range (0 to {MAX_COUNT:,}): {_shown(value)}")
    return count


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) else f"{value:.3g}" if value.bit_length() < 1000 else "an integer of over 300 digits"
    return text if len(text) <= 40 else text[:37] + "..."


def _whole_number(value: Any) -> int | None:
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not value.is_integer():  # NaN and infinity included
            raise ValueError(f"not a whole number: {_shown(value)}")
        return int(value)
    text = _clean_text(value)
    if text is None:
        return None
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"not a number: {_shown(value)}") from None
    if not number.is_integer():
        raise ValueError(f"not a whole number: {_shown(value)}")
    return int(number)


def _load_document(text: str) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    try:
        document = json.loads(text)
    except RecursionError:
        raise SystemsJsonError("systems JSON is nested too deeply to read") from None
    except json.JSONDecodeError as first_error:
        repaired = _TRAILING_COMMA.sub(r"\1", text)
        try:
            document = json.loads(repaired)
            notes.append("trailing commas removed")
        except json.JSONDecodeError:
            document = _load_v06_lines(text)
            if document is None:
                raise SystemsJsonError(f"systems JSON is not JSON ({first_error})") from None
            notes.append("read as v0.6 'key: {json}' lines")
    except ValueError as exc:  # not a syntax error: e.g. an integer longer than Python converts (4,300 digits)
        raise SystemsJsonError(f"systems JSON holds a value that cannot be read: {str(exc)[:120]}") from None
    if not isinstance(document, dict):
        raise SystemsJsonError(f"systems JSON is not an object but a {type(document).__name__}")
    return document, notes


def _load_v06_lines(text: str) -> dict[str, Any] | None:
    """v0.6 NVIDIA: each line `key: {"value": ..., "metadata": ...}`; `entry` is a Python repr."""
    document: dict[str, Any] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _V06_LINE.match(line)
        if match is None:
            return None
        try:
            document[match.group(1).strip()] = json.loads(match.group(2)).get("value")
        except (json.JSONDecodeError, AttributeError, RecursionError):
            return None
    entry = document.pop("entry", None)
    if isinstance(entry, str):
        try:
            entry = ast.literal_eval(entry)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            entry = None
    if isinstance(entry, dict):
        for key, value in entry.items():
            document.setdefault(key, value)
    return document or None


def _old_schema_nodes(document: dict[str, Any]) -> list[dict[str, Any]]:
    nodes = document.get("nodes")
    if isinstance(nodes, str):
        try:
            nodes = ast.literal_eval(nodes)
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            return []
    if isinstance(nodes, dict):
        nodes = [nodes]
    return [n for n in nodes or [] if isinstance(n, dict)]


def parse_system(data: bytes) -> SystemRecord:
    """Parse a system description; raises SystemsJsonError when it cannot be used at all."""
    if not data.strip():
        raise SystemsJsonError("systems JSON is empty")
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    raw, notes = _load_document(text)
    document: dict[str, Any] = {}
    for raw_key, value in raw.items():
        key = _KEY_ALIASES.get(raw_key.strip(), raw_key.strip())
        if key != raw_key:
            notes.append(f"key {raw_key!r} read as {key!r}")
        if key in document and document[key] != value:
            # two spellings of one key that disagree: keep the first, and say so
            notes.append(f"contradicting values for {key}: {document[key]!r} kept, {value!r} ignored")
            continue
        document.setdefault(key, value)

    nodes_old = _old_schema_nodes(document)
    number_of_nodes: int | None
    accelerators: int | None
    per_node: int | None
    if nodes_old and "accelerators_per_node" not in document:
        # old schema: accelerators = sum over node groups of num_nodes x num_accelerators
        number_of_nodes = accelerators = 0
        per_node = None
        try:
            for group in nodes_old:
                group_nodes = parse_count(group.get("num_nodes")) or 0
                group_accelerators = parse_count(group.get("num_accelerators")) or 0
                number_of_nodes += group_nodes
                accelerators += group_nodes * group_accelerators
                per_node = group_accelerators if per_node is None else per_node
        except ValueError as exc:
            raise SystemsJsonError(f"systems JSON has an unusable node or accelerator count: {exc}") from None
        model = _clean_text(nodes_old[0].get("accelerator"))
        host = _clean_text(nodes_old[0].get("cpu"))
        notes.append("old schema: accelerators from nodes[]")
        host_per_node = None
    else:
        try:
            number_of_nodes = parse_count(document.get("number_of_nodes"))
            per_node = parse_count(document.get("accelerators_per_node"))
            host_per_node = parse_count(document.get("host_processors_per_node"))
        except ValueError as exc:
            raise SystemsJsonError(f"systems JSON has an unusable node or accelerator count: {exc}") from None
        accelerators = None if number_of_nodes is None or per_node is None else number_of_nodes * per_node
        if accelerators is None:
            missing = [k for k, v in (("number_of_nodes", number_of_nodes), ("accelerators_per_node", per_node)) if v is None]
            notes.append(f"accelerator count unknown: {' and '.join(missing)} missing")
        model = _clean_text(document.get("accelerator_model_name"))
        host = _clean_text(document.get("host_processor_model_name"))
    if accelerators is not None and accelerators > MAX_COUNT:
        raise SystemsJsonError(f"systems JSON has an unusable node or accelerator count: {number_of_nodes:,} nodes x "
                               f"{per_node:,} accelerators is beyond {MAX_COUNT:,}")
    system_name = _clean_text(document.get("system_name") or document.get("platform") or document.get("hardware"))
    if model is not None and model.strip().lower() == "tpu" and (generation := tpu_generation(system_name)):
        # v0.7 and v1.0 name the accelerator of their TPU v4 systems "TPU"; the system's name says which
        notes.append(f"accelerator {model!r} read as {generation!r} from the system name {system_name!r}")
        model = generation
    chips, how = counted_in_chips(model, system_name, accelerators, number_of_nodes)
    if how is not None:
        notes.append(how)
        accelerators = chips
        if number_of_nodes:
            per_node = chips // number_of_nodes if chips is not None and chips % number_of_nodes == 0 else None

    division_raw = _clean_text(document.get("division"))
    division = None
    if division_raw is not None:
        division = division_raw.lower()
        division = {"close": "closed"}.get(division, division)
    status_raw = _clean_text(document.get("status"))
    availability = None if status_raw is None else _STATUS.get(status_raw.lower(), status_raw.lower())
    return SystemRecord(
        submitter_declared=_clean_text(document.get("submitter")),
        division=division,
        division_raw=division_raw,
        availability=availability,
        status_raw=status_raw,
        system_name=system_name,
        number_of_nodes=number_of_nodes,
        accelerators_per_node=per_node,
        accelerators=accelerators,
        accelerator_model_name=model,
        host_processor_model_name=host,
        host_processors_per_node=host_per_node,
        framework=_clean_text(document.get("framework")),
        notes="; ".join(notes) or None,
        # the old schema keeps memory and network cards per node group: the first group's, under the file's own keys
        covariates=system_covariates({**nodes_old[0], **document} if nodes_old else document, per_node, accelerators, model),
    )
