"""`mlperf-scaling`: the command line over the Prefect flows.

The settings are read once, here (environment, then options), and passed down to the flows.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from pydantic import ValidationError
from rich.console import Console

from mlperf_scaling.runtime import quick_exit  # first of the project's imports: its exit handler must run last
from mlperf_scaling.runtime.interrupts import end_at_once_on_signals
from mlperf_scaling.settings import Settings
from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS

if TYPE_CHECKING:
    from mlperf_scaling.tasks.load.outcome import RoundOutcome

_ENVIRONMENT = """environment (each overridden by its option):
  MLPERF_WAREHOUSE     the DuckDB file (data/mlperf.duckdb)
  MLPERF_REPORTS       the report folder (reports)
  MLPERF_MIRROR        a folder of training_results_vX.Y.tar.gz or git repositories
  MLPERF_ROUNDS        rounds to run, space-separated (unset: every round the source holds)
  MLPERF_REMOTE_BASE   prefix of the round repositories (https://github.com/mlcommons/)
  MLPERF_OFFLINE       1: never use the network (rounds from the mirror only)
  MLPERF_ALLOW_SHRINK  1: a new version of a loaded round may hold far less than the loaded one
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


class _QuietOnClosedPipe(Console):
    """rich exits 1 when its reader goes away (`query ... | head`); the reader has what it asked for: `main` ends well."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def _console() -> Console:
    from mlperf_scaling.terminal import TrimmedLines

    # a pipe or a file gets whole lines, however long the paths in them, and none ends in the blanks rich pads with
    return _QuietOnClosedPipe(file=cast(TextIO, TrimmedLines(sys.stdout)),
                              width=None if sys.stdout.isatty() else max(shutil.get_terminal_size().columns, 200), highlight=False)


def _prepare_environment() -> None:
    # Offline-friendly Prefect defaults; a user's own settings win.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # the temporary local API can need more than Prefect's default start-up timeout on a busy two-core machine
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")


def _print_summaries(outcomes: list[RoundOutcome]) -> int:
    from mlperf_scaling.terminal import Column, print_fitted

    columns = [Column("round", text=True), Column("status", text=True), Column("systems"), Column("runs"), Column("valid runs"),
               Column("scores"), Column("scored"), Column("rejected"), Column("seconds"), Column("source", text=True, drop=1)]
    failed = 0
    rows, notes = [], []
    for o in outcomes:
        failed += o.failed
        rows.append([o.round or "", o.status, f"{o.n_systems:,}", f"{o.n_runs:,}", f"{o.n_valid_runs:,}", f"{o.n_scores:,}",
                     f"{o.n_scored:,}", f"{o.n_rejections:,}", f"{o.seconds:.1f}", o.source])
        if o.message:
            notes.append(f"{o.round}: {o.message}")
    console = _console()
    print_fitted(console, columns, rows, see_all="the ingestions table holds it")
    for note in notes:  # below the table, whole: a long reason must not squeeze the columns
        console.print(note, soft_wrap=True)
    fault = next((o for o in outcomes if o.machine_fault), None)
    if fault is not None:  # the machine refused midway: the one line that says where, and what to do
        print(f"mlperf-scaling: stopped at {fault.round}: {fault.message}", file=sys.stderr)
    return 1 if failed else 0


def _parser(settings: Settings) -> argparse.ArgumentParser:
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
    parser.add_argument("--version", action="version", version=f"mlperf-scaling {_version()}")
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
    serve = commands.add_parser("serve", help="serve the pipeline and the daily watch-releases deployments locally")
    serve.add_argument("--cron", type=arguments.cron, default=None, help="schedule of watch-releases (default: prefect.yaml's, daily at 06:00 UTC)")
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
                      "(default: the group with the most accelerator counts measured); with --model-params, any accelerator with a "
                      "datasheet (TPU v4, V100-SXM)")
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


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mlperf-scaling")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


_OPTIONS = {"warehouse", "reports", "remote_base", "mirror", "rounds", "offline", "allow_shrink"}  # settings that also have a command-line option


def _settings(**options: Any) -> Settings:
    """The environment's settings, with the options given; a bad value says which, in one line, and exits 2."""
    try:
        return Settings(**{name: value for name, value in options.items() if value is not None})
    except ValidationError as exc:
        error = exc.errors()[0]
        name = ".".join(str(part) for part in error["loc"]) or "settings"
        field = name.split(".")[0]
        where = f"MLPERF_{field.upper()}" + (f" or --{field.replace('_', '-')}" if field in _OPTIONS else "")
        # Our validators' own sentence, not pydantic's "Value error, " wrapping of it.
        said = error.get("ctx", {}).get("error") if error["type"] == "value_error" else None
        raise SystemExit(f"mlperf-scaling: {name}: {said or error['msg']} ({where})") from None


def command_line() -> None:
    """The `mlperf-scaling` program: `main` on the process's arguments, then an exit without teardown."""
    code = main()
    quick_exit.arm(code)
    sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    from mlperf_scaling.failures import ExpectedFailure

    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader went away (`query ... | head`): it has what it asked for, so end quietly and well (a pipeline under
        # `set -o pipefail` must not fail for it), and let no flush at exit complain about it again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except ExpectedFailure as exc:  # raised outside any flow (the temporary API did not start): its one line
        print(f"mlperf-scaling: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:  # Prefect's API gone midway (its disk full, its server stopped): one line, if that is it
        from mlperf_scaling.runtime.local_api import api_problem

        problem = api_problem(exc)
        if problem is None:
            raise
        print(f"mlperf-scaling: {problem}", file=sys.stderr)
        return 1


def _main(argv: list[str] | None) -> int:
    try:
        args = _parser(_settings()).parse_args(argv)
        settings = _settings(**{name: getattr(args, name) for name in sorted(_OPTIONS) if hasattr(args, name)})
        if hasattr(args, "rounds"):
            args.rounds = settings.rounds  # as the settings read them: v4.1 for 4.1
        if args.command == "run" and settings.offline and settings.mirror is None:
            raise SystemExit("mlperf-scaling: --offline reads every round from a mirror: give --mirror DIR (or MLPERF_MIRROR)")
        if args.command == "watch" and settings.offline:
            raise SystemExit("mlperf-scaling: watch asks the remote what it publishes, which --offline (MLPERF_OFFLINE) forbids")
        problem = _before_any_work(args) or _cluster_problem(args, settings)
        if problem is not None:
            raise SystemExit(f"mlperf-scaling: {problem}")
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
            return 2
        return stop.code if isinstance(stop.code, int) else 2
    _prepare_environment()
    if args.command == "serve":  # a server stops on Ctrl-C as Prefect's serve decides
        return _command(args, settings)
    with end_at_once_on_signals(args.command):
        return _run(args, settings)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command in _FLOWS:
        unchanged = None
        if args.command == "run" and not args.force:  # answered before anything heavy starts
            from mlperf_scaling.fast_path import unchanged_run

            unchanged = unchanged_run(settings.rounds, settings.mirror, settings.remote_base, settings.warehouse, settings.reports)
        if unchanged is None:
            from mlperf_scaling.runtime.collector import collecting_less
            from mlperf_scaling.runtime.local_api import local_runs, start_early

            with local_runs(start_early(settings.prefect_history_days), _FLOWS[args.command]), collecting_less():  # once the flows and what they use are imported
                return _command(args, settings)
        return _command(args, settings, unchanged)
    return _command(args, settings)


def _before_any_work(args: argparse.Namespace) -> str | None:
    """A mistake in what the user named (a source, the warehouse path), said before Prefect starts or any file is
    written; None when there is none."""
    from mlperf_scaling.warehouse.connection import file_problem

    if getattr(args, "warehouse", None) is not None and (problem := file_problem(args.warehouse)) is not None:
        return problem
    if args.command == "run" and args.mirror is not None and not args.rounds and Path(args.mirror).is_dir():
        from mlperf_scaling.tasks.source.releases import rounds_in_mirror

        try:
            empty = not rounds_in_mirror(Path(args.mirror))
        except OSError as exc:
            return f"--mirror {args.mirror} cannot be read: {exc.strerror or exc}"
        if empty:  # refused here, in one line, not by a task Prefect retries
            return (f"--mirror {args.mirror} holds no training_results_vX.Y.tar.gz or training_results_vX.Y repository "
                    "(name the folder that holds them, or --rounds to fetch rounds it lacks)")
    if (problem := _machine_problem(args)) is not None:
        return problem
    if args.command == "ingest":
        from mlperf_scaling.tasks.source.members import SourceError
        from mlperf_scaling.tasks.source.resolve import source_problem

        if args.round_name is not None and len(args.sources) > 1:
            return "--round names the round of a single source; give one source or none"
        for spec in args.sources:
            try:
                source_problem(str(spec), args.round_name)
            except SourceError as exc:
                return str(exc)
    return None


# The commands that write the warehouse, and those that write reports
_WRITES_WAREHOUSE = {"run", "ingest", "analyze", "trends", "watch"}
_WRITES_REPORTS = {"run", "analyze", "trends", "watch", "explore"}


def _machine_problem(args: argparse.Namespace) -> str | None:
    """Where the command must write and cannot (the warehouse's folder, the reports, Prefect's home), in one line."""
    from mlperf_scaling.runtime.paths import folder_problem

    if args.command in _WRITES_WAREHOUSE and (problem := folder_problem(Path(args.warehouse).parent, "--warehouse's folder")):
        return problem
    if args.command in _WRITES_REPORTS and (problem := folder_problem(args.reports, "--reports")):
        return problem
    if args.command in _FLOWS and not os.environ.get("PREFECT_API_URL"):
        home = os.environ.get("PREFECT_HOME", "~/.prefect")  # where the temporary Prefect API keeps its database
        if (problem := folder_problem(home, "Prefect's home (PREFECT_HOME)")):
            return problem
    if (args.command in _FLOWS or args.command == "serve") and (url := os.environ.get("PREFECT_API_URL")):
        return _served_api_problem(url)
    return None


def _served_api_problem(url: str, timeout_s: float = 10) -> str | None:
    """A served Prefect API named by PREFECT_API_URL must answer before any work: else one line, not Prefect's
    tracebacks after the work has started."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/health", timeout=timeout_s):
            return None
    except urllib.error.HTTPError as exc:
        if exc.code in (401, 403):  # it answers, and asks for the credentials Prefect's client sends
            return None
        said = f"HTTP {exc.code}"
    except (OSError, ValueError) as exc:  # refused, unreachable, timed out, not a URL
        said = str(getattr(exc, "reason", None) or exc)
    return (f"Prefect's API at {url} (PREFECT_API_URL) does not answer ({said}): start it (`prefect server start`), or unset "
            "PREFECT_API_URL to use a temporary one")


def _cluster_problem(args: argparse.Namespace, settings: Settings) -> str | None:
    """A command that runs flows on a named Dask cluster checks it first: the scheduler answers and has a worker."""
    if args.command not in _FLOWS or settings.task_runner != "dask" or not settings.dask_address:
        return None
    from mlperf_scaling.runtime.runners import cluster_problem

    return cluster_problem(settings.dask_address, settings.dask_timeout_s)


# The commands that run flows, and what each imports while a temporary API boots on the other core: the modules of its
# flows, and for `run` what its first analysis and its last pages import (scikit-learn, SciPy, matplotlib, Altair),
# which would otherwise hold up the first round and the end (bench/cpu_by_phase.py measures both)
_FLOWS = {
    "run": ["mlperf_scaling.flows.pipeline", "sklearn.cluster", "sklearn.metrics", "scipy.optimize", "mlperf_scaling.tasks.publish.plots",
            "mlperf_scaling.tasks.publish.explorer"],
    "ingest": ["mlperf_scaling.flows.ingest"],
    "analyze": ["mlperf_scaling.flows.analyze", "mlperf_scaling.flows.publish"],
    "trends": ["mlperf_scaling.flows.analyze"],
    "watch": ["mlperf_scaling.flows.watch"],
}


def _command(args: argparse.Namespace, settings: Settings, unchanged: list[RoundOutcome] | None = None) -> int:
    if args.command == "paper-table":
        return _paper_table(args.round_name, args.warehouse)
    if args.command == "explore":
        return _explore(args.warehouse, args.reports, args.open_page)
    if args.command in ("query", "export"):
        return _query(args) if args.command == "query" else _export(args)
    if args.command == "plan":
        from mlperf_scaling.plan_command import print_plan

        return print_plan(args, _console())
    if args.command == "trends":
        from mlperf_scaling.flows.analyze import analyze_trends

        if (problem := _loaded_rounds_problem(args.warehouse)) is not None:
            print(f"mlperf-scaling: {problem}", file=sys.stderr)
            return 2
        analyze_trends(str(args.warehouse), str(args.reports), settings.plot_formats)
        print(f"report: {Path(args.reports) / 'trends' / 'index.html'}")
        return 0
    if args.command == "serve":
        return _serve(settings, args.cron)
    if args.command == "watch":
        from mlperf_scaling.flows.outcome import result_of
        from mlperf_scaling.flows.watch import watch_releases
        from mlperf_scaling.tasks.source.members import SourceError

        try:
            result = result_of(watch_releases(str(args.warehouse), args.remote_base, str(args.reports), settings=settings, return_state=True))
        except SourceError as exc:  # the remote cannot be reached: an error, never "nothing new"
            print(f"mlperf-scaling: {exc}", file=sys.stderr)
            return 1
        for round_name, action in result.found.items():
            print(f"{round_name:<6} {action}")
        print(f"started: {', '.join(result.started) or 'nothing'}")
        return _print_summaries(result.outcomes) if result.outcomes else 0
    if args.command == "analyze":
        return _analyze(args.round_names or [args.round_name], args.warehouse, args.reports, args.threshold, settings.plot_formats,
                        settings.embed_plots)
    if args.command == "ingest":
        from mlperf_scaling.flows.ingest import ingest_sources
        from mlperf_scaling.flows.outcome import result_of
        from mlperf_scaling.tasks.source.members import SourceError

        try:
            outcomes = result_of(ingest_sources(
                [str(s) for s in args.sources], str(args.warehouse), args.round_name, str(args.notes) if args.notes else None,
                settings=settings, return_state=True,
            ))
        except SourceError as exc:
            print(f"mlperf-scaling: {exc}", file=sys.stderr)
            return 2
    elif unchanged is not None:
        outcomes = unchanged
    else:
        from mlperf_scaling.flows.outcome import result_of
        from mlperf_scaling.flows.pipeline import mlperf_pipeline
        from mlperf_scaling.tasks.source.members import SourceError

        try:
            outcomes = result_of(mlperf_pipeline(
                args.rounds, str(args.warehouse), str(args.mirror) if args.mirror else None, args.remote_base, str(args.reports),
                args.force, settings=settings, return_state=True,
            ))
        except SourceError as exc:  # no round could even be listed (the remote cannot be reached)
            print(f"mlperf-scaling: {exc}", file=sys.stderr)
            return 1
    status = _print_summaries(outcomes)
    print(f"warehouse: {args.warehouse}")
    for outcome in outcomes:
        if outcome.report:
            print(f"report {outcome.round}: {outcome.report}")
    reports = Path(getattr(args, "reports", settings.reports))
    trends = reports / "trends" / "index.html"
    if args.command == "run" and trends.is_file():
        print(f"across rounds: {trends}")
        if (explorer := reports / "explore.html").is_file():
            print(f"explorer: {explorer} (interactive; `mlperf-scaling explore --open`)")
    if args.command == "run" and (front := reports / "index.html").is_file():
        # last, where the eye lands: the page to open first, which links every other
        print(f"open first: {front} (the answer per workload, and a link to every report)")
    return status


def _serve(settings: Settings, cron: str | None) -> int:
    from prefect import serve

    from mlperf_scaling.flows.deployments import build_deployments
    from mlperf_scaling.runtime.local_api import TemporaryApi, local_runs

    # without a served API, a temporary one of ours with every service (its scheduler makes the scheduled runs), which
    # ends at once with this process; Prefect's own took up to half a minute to stop after Ctrl-C
    api = None if os.environ.get("PREFECT_API_URL") else TemporaryApi(settings.prefect_history_days, serving=True)
    try:
        with local_runs(api):
            deployments = build_deployments(settings, cron)
            print("serving deployments: " + ", ".join(f"{d.flow_name}/{d.name}" for d in deployments) + " (Ctrl-C stops)", flush=True)
            serve(*deployments)
    except KeyboardInterrupt:  # Ctrl-C: Prefect's serve stops its runner; the interrupt itself is no error to show
        print("mlperf-scaling: serve stopped (SIGINT)", file=sys.stderr)
        return 130
    finally:
        if api is not None:
            api.stop()
    return 0


def _loaded_rounds_problem(warehouse: Path, round_name: str | None = None) -> str | None:
    """Why the warehouse cannot serve this command (missing, written by another version, without the round), or None;
    read-only, so a mistake leaves nothing behind (no lock file, no warehouse)."""
    from mlperf_scaling.rounds import round_key
    from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

    if round_name is not None:
        try:
            round_key(round_name)
        except ValueError as exc:
            return f"--round: {exc}"
    try:
        (rounds,) = read_queries(warehouse, "round_overview")
    except WarehouseMissing as exc:
        return str(exc)
    loaded = rounds["round"].to_list()
    if not loaded:
        return f"the warehouse at {warehouse} holds no round yet: run `mlperf-scaling run` or `ingest` first"
    if round_name is not None and round_name not in loaded:
        return f"{round_name} is not in the warehouse at {warehouse} (it holds {', '.join(loaded)}): ingest it first"
    return None


def _explore(warehouse: Path, reports: Path, open_page: bool) -> int:
    from mlperf_scaling.failures import faults_named

    if (problem := _loaded_rounds_problem(warehouse)) is not None:
        print(f"mlperf-scaling: {problem}", file=sys.stderr)
        return 2
    from mlperf_scaling.tasks.publish.steps import write_explorer_pages

    with faults_named("the reports", reports, "--reports (MLPERF_REPORTS)"):
        pages = write_explorer_pages(str(warehouse), str(reports))
    print(f"explorer: {pages[0]} (every round) and {len(pages) - 1} round pages beside their reports; data: {pages[0].parent / 'explore.json'}")
    if open_page:
        import webbrowser

        if not webbrowser.open(pages[0].resolve().as_uri()):
            print(f"mlperf-scaling: no web browser to open here: open {pages[0].resolve().as_uri()}", file=sys.stderr)
            return 1
    return 0


def _analyze(round_names: list[str], warehouse: Path, reports: Path, threshold: float = 0.5,
             plot_formats: tuple[str, ...] = DEFAULT_FORMATS, embed_plots: bool = False) -> int:
    for round_name in round_names:  # every round checked before any is analysed
        if (problem := _loaded_rounds_problem(warehouse, round_name)) is not None:
            print(f"mlperf-scaling: {problem}", file=sys.stderr)
            return 2
    from mlperf_scaling.failures import faults_named
    from mlperf_scaling.flows.analyze import analyze_round
    from mlperf_scaling.flows.publish import publish_round
    from mlperf_scaling.tasks.publish.steps import write_explorer_pages

    for round_name in dict.fromkeys(round_names):
        analysis = analyze_round(round_name, str(warehouse), threshold)
        published = publish_round(round_name, str(warehouse), str(reports), plot_formats, embed_plots)
        print(f"{round_name}: {analysis.efficiency.height} systems analysed, {analysis.exclusions.height} score rows left out")
        print(f"report: {published.report}")
    with faults_named("the reports", reports, "--reports (MLPERF_REPORTS)"):
        write_explorer_pages(str(warehouse), str(reports))  # the explorer shows the new analysis too
    return 0


def _query(args: argparse.Namespace) -> int:
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
    console = _console()
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


def _export(args: argparse.Namespace) -> int:
    from mlperf_scaling.failures import faults_named
    from mlperf_scaling.warehouse.export import export_database
    from mlperf_scaling.warehouse.read import WarehouseMissing

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


def _paper_table(round_name: str, warehouse: Path) -> int:
    from mlperf_scaling.tasks.metrics.paper_table import PAPER_ROUND, compare
    from mlperf_scaling.terminal import Column, print_fitted
    from mlperf_scaling.warehouse.read import WarehouseMissing, read_queries

    if round_name != PAPER_ROUND:
        print(f"mlperf-scaling: the paper analysed {PAPER_ROUND} only", file=sys.stderr)
        return 2
    try:
        efficiency, exclusions, scores = read_queries(warehouse, "round_efficiency", "round_exclusions", "round_scores", round=round_name)
    except WarehouseMissing as exc:
        print(f"mlperf-scaling: {exc}", file=sys.stderr)
        return 2
    if efficiency.height == 0:
        print(f"mlperf-scaling: no analysis of {round_name} in {warehouse}: run `mlperf-scaling analyze --round {round_name}`", file=sys.stderr)
        return 2
    columns = [Column("benchmark", text=True), Column("systems"), Column("paper systems"), Column("ref N"), Column("paper ref N"),
               Column("ref T (min)"), Column("paper ref T"), Column("reference system", text=True, drop=1)]
    rows: list[list[str]] = []
    notes: list[str] = []
    for c in compare(efficiency, exclusions, scores):
        rows.append([c.paper.label, f"{c.systems:,}", f"{c.paper.systems:,}", f"{c.reference_accelerators or 0:,}",
                     f"{c.paper.reference_accelerators:,}", f"{c.reference_time_min or 0:.3f}", f"{c.paper.reference_time_min:.2f}",
                     c.reference_system or "-"])
        notes.extend(f"{c.paper.label}: {note}" for note in c.explanations)
    console = _console()
    # the notes under the table, whole: in a column they made it wider than any terminal
    print_fitted(console, columns, rows, title=f"Table I of arXiv 2509.03263 (MLPerf Training {PAPER_ROUND}) against this warehouse",
                 see_all="a wider terminal shows it")
    for note in notes:
        console.print(f"- {note}")
    return 0


if __name__ == "__main__":
    command_line()
