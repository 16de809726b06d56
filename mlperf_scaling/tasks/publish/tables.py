"""The CSV files of a report: each table as published beside the page, for any tool to read."""

from __future__ import annotations

from pathlib import Path

import polars as pl


def write_tables(folder: Path, tables: dict[str, pl.DataFrame]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        frame.write_csv(path)
        paths.append(path)
    return paths
