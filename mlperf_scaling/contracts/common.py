"""The contracts' common ground: a table's columns read from its declaration (contracts/tables/<table>.yaml), the checks
every table shares, and the frame schema each contract implies.

A declaration holds the table's `description`, its `unique` key (the primary key) and, per column in order, its `type`
(str, int, float, bool, datetime; json: a JSON document, text in Python and JSON in DuckDB; round: a round name vX.Y; folder: a folder name of 1 to 512 characters), `nullable:
true` where a value may be missing, its checks (gt, ge, lt, le; isin: the values, or the name of an enum of
contracts/enums.py; matches: a regular expression; min_length) and its `description`. The pandera contract, the DDL
with its comments (warehouse/ddl.py) and the documentation's table reference are all made from it: adding a column
touches its producer and its declaration, nothing else. Checks across columns stay in Python, on the contract.
"""

from __future__ import annotations

import datetime as dt
import functools
from importlib import resources
from typing import Any

import pandera.polars as pa
import polars as pl
import yaml

from mlperf_scaling.contracts import enums
from mlperf_scaling.rounds import ROUND_PATTERN

_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "datetime": dt.datetime, "round": str, "folder": str, "json": str}
_FIELD_CHECKS = {"gt", "ge", "lt", "le"}


@functools.cache
def declaration(table: str) -> dict[str, Any]:
    """The table's declaration, as written in contracts/tables/<table>.yaml."""
    text = resources.files("mlperf_scaling.contracts").joinpath("tables", f"{table}.yaml").read_text(encoding="utf-8")
    return yaml.safe_load(text)


def _field(table: str, name: str, spec: dict[str, Any]) -> tuple[Any, Any]:
    """(annotation, pandera Field) of one declared column."""
    unknown = set(spec) - {"type", "nullable", "description", "isin", "matches", "min_length", *_FIELD_CHECKS}
    if unknown or spec.get("type") not in _TYPES or not spec.get("description"):
        raise ValueError(f"{table}.{name}: a column needs a known type and a description (unknown keys: {sorted(unknown)})")
    kind = spec["type"]
    options: dict[str, Any] = {key: spec[key] for key in _FIELD_CHECKS & set(spec)}
    if kind == "round":
        options["str_matches"] = ROUND_PATTERN
    elif kind == "folder":
        options["str_length"] = {"min_value": 1, "max_value": 512}
    if "matches" in spec:
        options["str_matches"] = spec["matches"]
    if "min_length" in spec:
        options["str_length"] = {"min_value": spec["min_length"]}
    if "isin" in spec:
        allowed = spec["isin"]
        options["isin"] = [member.value for member in getattr(enums, allowed)] if isinstance(allowed, str) else list(allowed)
    nullable = bool(spec.get("nullable", False))
    annotation = _TYPES[kind] | None if nullable else _TYPES[kind]
    return annotation, pa.Field(nullable=nullable, description=spec["description"], **options)


def frame_schema(model: type[pa.DataFrameModel]) -> dict[str, pl.DataType]:
    """The polars schema of a table, from its contract: the one place its columns are listed in Python."""
    return {name: column.dtype.type for name, column in model.to_schema().columns.items()}


class Contract(pa.DataFrameModel):
    """A warehouse table's contract: exactly its declared columns (strict), values coerced to their types, and no number
    that is not one: every floating-point value is finite or null, in every table. A subclass names its table
    (`class ScoresSchema(Contract, table="scores")`) and gets the declared columns, description and key."""

    class Config:
        strict = True
        coerce = True

    def __init_subclass__(cls, table: str | None = None, **kwargs: Any) -> None:
        if table is not None:
            declared = declaration(table)
            annotations = dict(cls.__dict__.get("__annotations__", {}))
            for name, spec in declared["columns"].items():
                annotation, field = _field(table, name, spec)
                annotations[name] = annotation
                field.__set_name__(cls, name)  # as the class body would have
                setattr(cls, name, field)
            cls.__annotations__ = annotations
            config = {"description": declared["description"], **({"unique": declared["unique"]} if declared.get("unique") else {})}
            setattr(cls, "Config", type("Config", (), config))  # noqa: B010  # pandera reads the class's own Config
        super().__init_subclass__(**kwargs)

    @pa.dataframe_check(error="every floating-point value is finite (no NaN, no infinity)")
    def floats_are_finite(cls, data) -> pl.LazyFrame:
        floats = [name for name, dtype in data.lazyframe.collect_schema().items() if dtype.is_float()]
        if not floats:
            return data.lazyframe.select(pl.lit(True).alias("finite"))
        return data.lazyframe.select(pl.all_horizontal([pl.col(name).is_finite().fill_null(True) for name in floats]).alias("finite"))
