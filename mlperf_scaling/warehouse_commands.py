"""`query` and `export`: the warehouse read as it is, by SQL or whole, for people and other tools."""

from __future__ import annotations

import argparse
import sys

from mlperf_scaling import terminal


def query(args: argparse.Namespace) -> int:
    import polars as pl

    from mlperf_scaling.terminal import Column, format_value, print_fitted, records
    from mlperf_scaling.warehouse.export import QueryError, run_queries
    from mlperf_scaling.warehouse.read import WarehouseMissing

    try:
        results = run_queries(args.warehouse, args.sql)
    except (WarehouseMissing, QueryError) as exc:
        print(f"mlperf-scaling: {exc}", file=sys.stderr)
        return 2
    if len(results) > 1 and args.output_format in ("csv", "json"):
        print(f"mlperf-scaling: --format {args.output_format} writes one result and the SQL holds {len(results)} statements: "
              "give one (every statement runs with --format table or records)", file=sys.stderr)
        return 2
    if args.output_format == "csv":
        sys.stdout.write(results[0].write_csv())
        return 0
    if args.output_format == "json":
        sys.stdout.write(results[0].write_json() + "\n")
        return 0
    console = terminal.command_console()
    for number, result in enumerate(results, start=1):
        if len(results) > 1:
            console.print(f"[bold]Statement {number} of {len(results)}[/bold]")
        shown = result if args.limit <= 0 else result.head(args.limit)
        columns = [Column(name, text=not (dtype.is_numeric() or dtype == pl.Boolean)) for name, dtype in shown.schema.items()]
        if args.output_format == "records":
            console.print(records(columns, [[format_value(v) for v in row] for row in shown.iter_rows()]))
        else:
            print_fitted(console, columns, shown.rows(), see_all="--format records stacks them; --format csv writes them")
        more = result.height - shown.height
        console.print(f"{result.height:,} row{'s' if result.height != 1 else ''}" + (f" ({more:,} not shown: --limit 0 shows all, --format csv writes them)" if more else ""))
    return 0


def export(args: argparse.Namespace) -> int:
    from mlperf_scaling.failures import faults_named
    from mlperf_scaling.runtime.paths import folder_problem
    from mlperf_scaling.warehouse.export import export_database
    from mlperf_scaling.warehouse.read import WarehouseMissing

    if (problem := folder_problem(args.directory, "DIR")) is not None:  # a folder that cannot be made there: said before any table is read
        print(f"mlperf-scaling: {problem}", file=sys.stderr)
        return 2
    try:
        with faults_named("the export folder", args.directory, "DIR"):
            files = export_database(args.warehouse, args.directory, args.file_format)
    except (WarehouseMissing, FileExistsError) as exc:
        print(f"mlperf-scaling: {exc}", file=sys.stderr)
        return 2
    tables = [f for f in files if f.suffix == f".{args.file_format}"]
    print(f"{len(tables)} tables written to {args.directory} as {args.file_format}, with schema.sql and load.sql "
          f"(DuckDB: IMPORT DATABASE '{args.directory}')")
    return 0
