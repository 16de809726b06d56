"""One definition per table: the DDL (with a comment on every table and column), the pandera contract and the README
agree, and every table the pipeline loads has a contract."""

from __future__ import annotations

from conftest import PROJECT

from mlperf_scaling.contracts import TABLE_CONTRACTS
from mlperf_scaling.warehouse.describe import README_END, README_START, describe, readme_section
from mlperf_scaling.warehouse.load import ANALYSIS_TABLES, ROUND_TABLES, TREND_TABLES

# DuckDB's type names for the polars types the contracts use
DUCKDB_TYPE = {"String": "VARCHAR", "Int64": "BIGINT", "Float64": "DOUBLE", "Boolean": "BOOLEAN"}


def _duckdb_type(dtype: str) -> str:
    return "TIMESTAMP" if dtype.startswith("Datetime") else DUCKDB_TYPE[dtype]


def test_the_ddl_and_the_contracts_list_the_same_columns_with_the_same_types():
    tables = {relation.name: relation for relation in describe() if relation.kind == "table"}
    assert set(tables) == set(TABLE_CONTRACTS) | {"warehouse_info"}
    for name, contract in TABLE_CONTRACTS.items():
        columns = contract.to_schema().columns
        ddl = tables[name].columns
        assert [c.name for c in ddl] == list(columns), name
        for column in ddl:
            model = columns[column.name]
            assert column.type == _duckdb_type(str(model.dtype)), (name, column.name)
            assert column.nullable == model.nullable, (name, column.name)


def test_every_table_view_and_column_has_a_comment():
    for relation in describe():
        assert relation.comment, relation.name
        if relation.kind == "table":
            assert all(column.comment for column in relation.columns), [c.name for c in relation.columns if not c.comment]


def test_every_loaded_table_has_a_contract():
    assert set(ROUND_TABLES) | set(ANALYSIS_TABLES) | set(TREND_TABLES) | {"ingestions"} == set(TABLE_CONTRACTS)


def test_the_readme_describes_the_tables_as_the_ddl_does():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert README_START in readme and README_END in readme, "README lacks the generated table reference"
    current = readme[readme.index(README_START): readme.index(README_END) + len(README_END)]
    assert current == readme_section(), "README tables are stale: python -m mlperf_scaling.warehouse.describe"
