"""Reference data shipped with the project: benchmark names and run counts, quality targets.

Both live as TSV files in `mlperf_scaling/reference/` so a reviewer can read and diff them.
"""

from __future__ import annotations

import ast
import csv
import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

_ROUND = re.compile(r"^v(\d+)\.(\d+)$")


def round_key(round_name: str) -> tuple[int, int]:
    """`v4.1` -> (4, 1); raises ValueError on anything else."""
    match = _ROUND.match(round_name)
    if match is None:
        raise ValueError(f"not a round name (expected vX.Y): {round_name!r}")
    return int(match.group(1)), int(match.group(2))


def ruleset_for_round(round_name: str) -> str:
    """The training ruleset a round was checked against: v4.1 -> 4.1.0."""
    major, minor = round_key(round_name)
    return f"{major}.{minor}.0"


def _read_tsv(name: str) -> list[dict[str, str]]:
    text = resources.files("mlperf_scaling.reference").joinpath(name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines(), delimiter="\t"))


@dataclass(frozen=True)
class BenchmarkInfo:
    folder: str
    canonical_name: str
    workload: str
    n_required: int
    max_dropped: int
    known: bool = True


@functools.cache
def _benchmark_rows() -> list[dict[str, str]]:
    return _read_tsv("benchmarks.tsv")


def benchmark_info(folder: str, round_name: str) -> BenchmarkInfo:
    """Normalised name, required run count and olympic drop count for a benchmark folder.

    Unknown folders keep their name, require the generic 10 runs and drop one each side,
    as the official summarizer does for any benchmark other than unet3d.
    """
    current = round_key(round_name)
    for row in _benchmark_rows():
        if row["benchmark"] != folder:
            continue
        if current < round_key(row["first_round"]):
            continue
        if row["last_round"] and current > round_key(row["last_round"]):
            continue
        return BenchmarkInfo(
            folder=folder,
            canonical_name=row["canonical_name"],
            workload=row["workload"],
            n_required=int(row["n_required"]),
            max_dropped=int(row["max_dropped"]),
        )
    return BenchmarkInfo(folder, folder, "unknown benchmark", 10, 4 if folder == "unet3d" else 1, known=False)


@dataclass(frozen=True)
class QualityTarget:
    ruleset: str
    benchmark: str
    key: str
    condition: str


@functools.cache
def quality_targets() -> dict[tuple[str, str], QualityTarget]:
    rows = _read_tsv("quality_targets.tsv")
    return {
        (r["ruleset"], r["benchmark"]): QualityTarget(
            r["ruleset"], r["benchmark"], r["key"], r["condition_on_at_least_one_event"]
        )
        for r in rows
    }


def quality_target(round_name: str, benchmark: str) -> QualityTarget | None:
    """The round's quality target for a benchmark folder, or None where the rules had none."""
    targets = quality_targets()
    ruleset = ruleset_for_round(round_name)
    target = targets.get((ruleset, benchmark))
    if target is None:
        canonical = benchmark_info(benchmark, round_name).canonical_name
        target = targets.get((ruleset, canonical))
    return target


# The conditions are MLCommons' own Python expressions; only this grammar is evaluated.
_ALLOWED_NODES = (
    ast.Expression,
    ast.BoolOp,
    ast.And,
    ast.Or,
    ast.Not,
    ast.UnaryOp,
    ast.USub,
    ast.Compare,
    ast.Gt,
    ast.GtE,
    ast.Lt,
    ast.LtE,
    ast.Eq,
    ast.NotEq,
    ast.IfExp,
    ast.Name,
    ast.Load,
    ast.Attribute,
    ast.Constant,
)
_ALLOWED_NAMES = {"value", "global_batch_size"}


class _Fields:
    """Lets `value.BBOX` read a dict value the way the rules file writes it."""

    def __init__(self, mapping: dict[str, Any]):
        self._mapping = mapping

    def __getattr__(self, name: str) -> Any:
        try:
            return self._mapping[name]
        except KeyError:
            raise AttributeError(name) from None


@functools.cache
def _compile_condition(condition: str):
    tree = ast.parse(condition, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            raise ValueError(f"quality condition uses unsupported syntax {type(node).__name__}: {condition}")
        if isinstance(node, ast.Name) and node.id not in _ALLOWED_NAMES:
            raise ValueError(f"quality condition uses unknown name {node.id!r}: {condition}")
    return compile(tree, "<quality target>", "eval")


def meets_target(condition: str, value: Any, global_batch_size: Any) -> bool:
    """True when one event's value satisfies the condition; a value of the wrong shape does not."""
    code = _compile_condition(condition)
    scope = {
        "__builtins__": {},
        "value": _Fields(value) if isinstance(value, dict) else value,
        "global_batch_size": global_batch_size,
    }
    try:
        return bool(eval(code, scope))  # noqa: S307 - grammar checked in _compile_condition
    except (TypeError, AttributeError, ValueError):
        return False


@functools.cache
def accelerator_table() -> tuple[tuple[str, str, str, str, float | None], ...]:
    """The curated accelerator names: (raw name, vendor, family, form factor, memory GB); empty family = unknown."""
    rows = []
    for row in _read_tsv("accelerators.tsv"):
        memory = float(row["memory_gb"]) if row["memory_gb"] else None
        rows.append((row["accelerator_model_name"], row["vendor"], row["family"], row["form_factor"], memory))
    return tuple(rows)
