"""One definition per column: the tables' declarations make the pandera contracts, the DDL (with a comment on every table
and column) and docs/tables.md, and every table the pipeline loads has a contract."""

from __future__ import annotations

import pytest
from conftest import PROJECT

from mlperf_scaling.contracts import TABLE_CONTRACTS
from mlperf_scaling.warehouse.ddl import column_type, table_ddl
from mlperf_scaling.warehouse.describe import describe, tables_page
from mlperf_scaling.warehouse.load import ANALYSIS_TABLES, HISTORY_TABLES, ROUND_TABLES, TREND_TABLES


def test_the_tables_are_their_contracts():
    """The DDL is generated from the contracts: DuckDB holds exactly their columns, types, nullability, comments and keys."""
    tables = {relation.name: relation for relation in describe() if relation.kind == "table"}
    assert set(tables) == set(TABLE_CONTRACTS) | {"warehouse_info"}
    for name, contract in TABLE_CONTRACTS.items():
        schema = contract.to_schema()
        assert tables[name].comment == schema.description
        assert [(c.name, c.nullable, c.comment) for c in tables[name].columns] == [
            (column_name, column.nullable, column.description) for column_name, column in schema.columns.items()], name
        assert [c.type.lower() for c in tables[name].columns] == [column_type(name, column_name, column.dtype) for column_name, column in schema.columns.items()]


def test_a_column_added_to_a_contract_is_a_column_of_the_table():
    import pandera.polars as pa

    from mlperf_scaling.contracts.plan_backtest import PlanBacktestSchema

    class Wider(PlanBacktestSchema):
        seconds_saved: float | None = pa.Field(nullable=True, description="what a new column would say")

    ddl = table_ddl("plan_backtest", Wider)
    assert "    seconds_saved" in ddl and "comment on column plan_backtest.seconds_saved is 'what a new column would say';" in ddl
    assert "primary key (round, benchmark, accelerator_group, accelerators, model)" in ddl
    with pytest.raises(ValueError, match="plan_backtest.undescribed has no description"):
        table_ddl("plan_backtest", type("Bare", (PlanBacktestSchema,), {"__annotations__": {"undescribed": int}, "undescribed": pa.Field()}))


def test_every_table_view_and_column_has_a_comment():
    for relation in describe():
        assert relation.comment, relation.name
        if relation.kind == "table":
            assert all(column.comment for column in relation.columns), [c.name for c in relation.columns if not c.comment]


def test_every_loaded_table_has_a_contract():
    assert set(ROUND_TABLES) | set(ANALYSIS_TABLES) | set(TREND_TABLES) | set(HISTORY_TABLES) | {"ingestions"} == set(TABLE_CONTRACTS)


def test_the_documentation_describes_the_tables_as_the_ddl_does():
    page = PROJECT / "docs" / "tables.md"
    assert page.is_file(), "docs/tables.md is missing: python -m mlperf_scaling.warehouse.describe docs/tables.md"
    assert page.read_text(encoding="utf-8") == tables_page(), "docs/tables.md is stale: python -m mlperf_scaling.warehouse.describe docs/tables.md"
