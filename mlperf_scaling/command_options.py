"""The command line's words: every command, its options and what each takes, and the program's version.

The values are checked by their types as they are parsed (mlperf_scaling/arguments.py); what a command then does is
mlperf_scaling/cli.py's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from mlperf_scaling.settings import Settings

_ENVIRONMENT = """environment (each overridden by its option):
  MLPERF_WAREHOUSE     the DuckDB file (data/mlperf.duckdb)
  MLPERF_REPORTS       the report folder (reports)
  MLPERF_MIRROR        a folder of training_results_vX.Y.tar.gz or git repositories
  MLPERF_ROUNDS        rounds to run, space-separated (unset: every round the source holds)
  MLPERF_REMOTE_BASE   prefix of the round repositories (https://github.com/mlcommons/)
  MLPERF_OFFLINE       1: never use the network (rounds from the mirror only)
  MLPERF_ALLOW_SHRINK  1: a new version of a loaded round may hold far less than the loaded one
  MLPERF_REPORTS_URL   the URL the reports folder is served at (`reports`, `serve`): the Prefect UI's artifacts link there
  MLPERF_REPORTS_ADDRESS  HOST:PORT that `reports` and `serve` serve the reports at (127.0.0.1:8765)
  MLPERF_PLOT_FORMATS  plot files: svg (default; text kept as text), or "svg png" for PNG copies too
  MLPERF_WORKERS       worker processes for parsing and for drawing (default: every CPU this process may use)
  MLPERF_TASK_RUNNER   local (default: this machine's worker pools) or dask (each batch and figure a Prefect task)
  MLPERF_DASK_ADDRESS  the scheduler of a Dask cluster for MLPERF_TASK_RUNNER=dask, e.g. tcp://10.0.0.5:8786 (default: a
                       local cluster); it must answer with a worker within MLPERF_DASK_TIMEOUT_S (10) before any work
  MLPERF_PREFECT_HISTORY_DAYS  days of flow runs the temporary Prefect API keeps in its database (7)
  MLPERF_NETWORK_TIMEOUT_S, MLPERF_CLONE_TIMEOUT_S, MLPERF_NETWORK_RETRIES, MLPERF_RETRY_DELAY_S, MLPERF_MAX_SOURCE_BYTES
"""


_ALLOW_SHRINK = ("load a new version of a loaded round even if it has no systems or runs, or a quarter fewer scored rows "
                 "(refused otherwise, and the loaded version stays; MLPERF_ALLOW_SHRINK)")


def parser(settings: Settings) -> argparse.ArgumentParser:
    from mlperf_scaling import arguments
    from mlperf_scaling.arguments import OneLineParser

    warehouse = OneLineParser(add_help=False)
    warehouse.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    reports = OneLineParser(add_help=False)
    reports.add_argument("--reports", type=Path, default=settings.reports, help=f"report folder (default {settings.reports})")
    remote = OneLineParser(add_help=False)
    remote.add_argument("--remote-base", default=settings.remote_base,
                        help=f"prefix of the round repositories (default {settings.remote_base}); a folder of git repositories works too")

    parser = OneLineParser(prog="mlperf-scaling", description=__doc__.splitlines()[0], epilog=_ENVIRONMENT,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"mlperf-scaling {program_version()}")
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", parents=[warehouse], help="ingest one or more sources into the warehouse")
    ingest.add_argument("sources", nargs="+", metavar="SOURCE", help="git URL, local git repository, directory or .tar.gz")
    ingest.add_argument("--round", dest="round_name", type=arguments.round_name, help="round of the source (default: from its name training_results_vX.Y)")
    ingest.add_argument("--notes", type=Path, help="folder holding MISSING.txt / EXCLUDED.txt for the source (default: beside it)")
    ingest.add_argument("--offline", action="store_true", default=None, help="refuse git URLs: local sources only (MLPERF_OFFLINE)")
    ingest.add_argument("--allow-shrink", action="store_true", default=None, help=_ALLOW_SHRINK)

    run = commands.add_parser("run", parents=[warehouse, reports, remote], help="the main job: ingest, analyse and publish every round")
    run_rounds = run.add_mutually_exclusive_group()
    run_rounds.add_argument(
        "--rounds", nargs="+", default=settings.rounds, metavar="ROUND",
        help="rounds, e.g. v4.1 v5.1 (default: every round the source holds: each training_results_vX.Y of the mirror, "
        "or every round published at the remote)",
    )
    run_rounds.add_argument("--round", dest="rounds", type=arguments.one_round, metavar="ROUND", help="one round, e.g. v4.1")
    run.add_argument("--mirror", type=Path, default=settings.mirror, help="folder of training_results_vX.Y.tar.gz or git repos; else the public repos")
    run.add_argument("--force", action="store_true", help="re-ingest rounds whose source version is already loaded")
    run.add_argument("--offline", action="store_true", default=None, help="never use the network: every round from --mirror (MLPERF_OFFLINE)")
    run.add_argument("--allow-shrink", action="store_true", default=None, help=_ALLOW_SHRINK)

    analyze = commands.add_parser("analyze", parents=[warehouse, reports], help="redo the analysis and the report of a round from the warehouse alone")
    analyze_rounds = analyze.add_mutually_exclusive_group(required=True)
    analyze_rounds.add_argument("--round", dest="round_name", type=arguments.round_name, help="round, e.g. v4.1")
    analyze_rounds.add_argument("--rounds", dest="round_names", nargs="+", type=arguments.round_name, metavar="ROUND",
                                help="several rounds, each analysed in turn, e.g. v4.1 v5.1")
    analyze.add_argument("--threshold", type=arguments.fraction, default=0.5, help="efficiency threshold for the fitted knee, besides 0.5 (default 0.5)")

    commands.add_parser("trends", parents=[warehouse, reports], help="redo the cross-round view (reports/trends/) from the warehouse")
    commands.add_parser("watch", parents=[warehouse, reports, remote], help="run watch-releases once: process new and changed rounds at the remote")
    address = OneLineParser(add_help=False)
    address.add_argument("--reports-address", metavar="HOST:PORT", default=None,
                         help=f"where the reports are served over HTTP (default {settings.reports_address}; MLPERF_REPORTS_ADDRESS)")
    serve = commands.add_parser("serve", parents=[reports, address],
                                help="serve the pipeline and the daily watch-releases deployments locally, and the reports over HTTP")
    serve.add_argument("--cron", type=arguments.cron, default=None, help="schedule of watch-releases (default: prefect.yaml's, daily at 06:00 UTC)")
    commands.add_parser("reports", parents=[reports, address],
                        help="serve the reports folder over HTTP, for a browser and the Prefect UI's links (MLPERF_REPORTS_URL)")
    plan = commands.add_parser(
        "plan", parents=[warehouse], help="how many accelerators for a benchmark: measured evidence first, predictions with calibrated intervals",
        description="How many accelerators should I train BENCHMARK on? From the warehouse: the measured configurations of one "
        "comparable accelerator group, the best time per count (measured, or predicted with a 90 % interval calibrated on the "
        "backtest), and a recommendation in one sentence.",
    )
    plan.add_argument("benchmark", metavar="BENCHMARK", nargs="?",
                      help="benchmark folder or name across rounds, e.g. llama2_70b_lora, bert; or, instead, --model-params")
    model = plan.add_argument_group(
        "a language model that is not a benchmark", "time, accelerator-hours, energy and cost at the MLPerf pace (the model FLOPs "
        "utilisation the measured language models reached on the accelerator) and in production (that pace times what public "
        "production runs took beyond it), each with an interval backtested on cases it never saw")
    model.add_argument("--model-params", type=arguments.positive_number, metavar="P", help="parameters, e.g. 70e9 (with --tokens and --accelerator)")
    model.add_argument("--tokens", type=arguments.positive_number, metavar="T", help="training tokens, e.g. 2e12")
    model.add_argument("--active-params", type=arguments.positive_number, metavar="P", help="parameters per token of a mixture of experts (default: all)")
    model.add_argument("--seq-len", type=arguments.positive_number, metavar="S", default=8192, help="sequence length in tokens (default 8192)")
    model.add_argument("--precision", choices=["bf16", "fp16", "fp8", "int8", "fp4", "nvfp4", "mxfp4"],
                       help="the training's precision, any the accelerator's datasheet has (default: bf16, or fp16 on a chip without it)")
    model.add_argument("--global-batch-tokens", type=arguments.positive_number, metavar="B",
                       help="tokens per optimiser step, e.g. 4e6 (default: what public runs of the model's size used); it bounds "
                       "the count: at most one sequence per data-parallel replica")
    plan.add_argument("--accelerator", help="comparable group, e.g. H100-SXM, A100-PCIe, TPU v5p; a family (B200) when it has one "
                      "(default: the newest accelerator generation measured at 3 counts or more in a round, enough to fit); with "
                      "--model-params, any accelerator with a datasheet (TPU v4, V100-SXM)")
    plan_rounds = plan.add_mutually_exclusive_group()
    plan_rounds.add_argument("--round", dest="round_name", type=arguments.plan_round, default="best",
                             help="round, e.g. v4.1; best (default): the round that measured the group best (most accelerator "
                             "counts); latest: the newest round with it")
    plan_rounds.add_argument("--rounds", dest="round_names", nargs="+", type=arguments.round_name, metavar="ROUND",
                             help="several rounds, e.g. v3.1 v4.1: of these, the one that measured the group best")
    plan.add_argument("--deadline", type=arguments.deadline, help="time to train you need, e.g. 30m, 2h, 90s, 1h30m: the smallest count "
                      "that meets it (whole nodes, below, between and above the measured counts), on its measured time or, where "
                      "nobody measured it, on its interval's upper end")
    plan.add_argument("--max-accelerators", type=arguments.count, help="accelerators you have: no answer above it; below the smallest "
                      "count measured, a prediction")
    plan.add_argument("--accelerators", type=arguments.count, metavar="N",
                      help="also answer at N accelerators: the measurement where measured, else the prediction with its interval")
    plan.add_argument("--global-batch", type=arguments.positive_number, metavar="B", help="the global batch the prediction at N assumes (default: "
                      "the batch per accelerator of the measured configurations)")
    plan.add_argument("--price-per-accelerator-hour", type=arguments.price, metavar="USD", help="adds the cost of a training run")
    plan.add_argument("--threshold", type=arguments.fraction, default=0.5, help="efficiency still worth paying for (default 0.5)")
    plan.add_argument("--format", dest="output_format", choices=["table", "csv", "json"], default="table",
                      help="table (default, fitted to the terminal); csv: one row per measured, fitted, recommended and predicted "
                      "configuration; json: the whole plan")
    query = commands.add_parser("query", parents=[warehouse], help="run read-only SQL queries on the warehouse and print their results")
    query.add_argument("sql", metavar="SQL", help="e.g. \"select * from latest_recommendations where benchmark = 'bert'\"")
    query.add_argument("--format", dest="output_format", choices=["table", "records", "csv", "json"], default="table",
                       help="table (default: fitted to the terminal, one block per row when it cannot fit), records (one block "
                       "per row), csv or json (one statement)")
    query.add_argument("--limit", type=arguments.row_limit, default=50, help="rows printed as a table (default 50; 0: all)")
    export = commands.add_parser("export", parents=[warehouse], help="write every table as Parquet or CSV files, for any tool")
    export.add_argument("directory", type=Path, metavar="DIR", help="a new or empty folder")
    export.add_argument("--format", dest="file_format", choices=["parquet", "csv"], default="parquet", help="file format (default parquet)")
    explore = commands.add_parser("explore", parents=[warehouse, reports],
                                  help="rebuild the interactive explorer (reports/explore.html and one per round) from the warehouse alone")
    explore.add_argument("--open", dest="open_page", action="store_true", help="open it in the web browser")
    paper = commands.add_parser("paper-table", parents=[warehouse], help="Table I of arXiv 2509.03263 beside this warehouse's values")
    paper.add_argument("--round", dest="round_name", type=arguments.round_name, default="v4.1", help="the paper's round (v4.1)")
    return parser


def program_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlperf-scaling")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"
