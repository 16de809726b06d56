"""The CSV files of a report: each table as published beside the page, for any tool to read."""

from __future__ import annotations

from pathlib import Path

import polars as pl

# digits a CSV keeps of a float: all a measurement has, none of the arithmetic's last-bit noise (0.30000000000000004)
SIGNIFICANT = 12


def write_tables(folder: Path, tables: dict[str, pl.DataFrame]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, frame in tables.items():
        path = folder / f"{name}.csv"
        frame.with_columns(pl.col(pl.Float64, pl.Float32).round_sig_figs(SIGNIFICANT)).write_csv(path)
        paths.append(path)
    return paths
