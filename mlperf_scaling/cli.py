"""`mlperf-scaling`: the command line over the Prefect flows.

The settings are read once, here (environment, then options), and passed down to the flows.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from mlperf_scaling import terminal
from mlperf_scaling.runtime import quick_exit  # before Prefect, multiprocessing or the API register exit handlers: it runs last
from mlperf_scaling.runtime.interrupts import end_at_once_on_signals
from mlperf_scaling.serve_commands import serve, serve_reports
from mlperf_scaling.settings import Settings
from mlperf_scaling.warehouse_commands import export, query

if TYPE_CHECKING:
    from mlperf_scaling.tasks.load.outcome import RoundOutcome


def _parser(settings: Settings) -> argparse.ArgumentParser:
    from mlperf_scaling.command_options import parser  # after quick_exit, whose exit handler must be registered first

    return parser(settings)


def _unquoted_benchmark(parser: argparse.ArgumentParser, benchmark: str, argv: list[str]) -> None:
    """`plan --model-params ... --deadline 5 minutes` reads `minutes` as a BENCHMARK: say the quotes it needs."""
    from mlperf_scaling.arguments import subparser, unquoted_value

    plan = subparser(parser, "plan")
    if plan is not None and (quoted := unquoted_value(plan, argv, benchmark)) is not None:
        raise SystemExit(f"mlperf-scaling: {benchmark}: not an option; a value with a space is quoted: {quoted}")


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
    console = terminal.command_console()
    print_fitted(console, columns, rows, see_all="the ingestions table holds it")
    for note in notes:  # below the table, whole: a long reason must not squeeze the columns
        console.print(note, soft_wrap=True)
    fault = next((o for o in outcomes if o.machine_fault), None)
    if fault is not None:  # the machine refused midway: the one line that says where, and what to do
        print(f"mlperf-scaling: stopped at {fault.round}: {fault.message}", file=sys.stderr)
    return 1 if failed else 0


_OPTIONS = {"warehouse", "reports", "remote_base", "mirror", "rounds", "offline", "allow_shrink", "reports_address"}  # settings that also have a command-line option


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
        parser = _parser(_settings())
        args = parser.parse_args(argv)
        if args.command == "plan" and args.benchmark is not None and args.model_params is not None:
            _unquoted_benchmark(parser, args.benchmark, list(sys.argv[1:] if argv is None else argv))
        settings = _settings(**{name: getattr(args, name) for name in sorted(_OPTIONS) if hasattr(args, name)})
        if hasattr(args, "rounds"):
            args.rounds = settings.rounds  # as the settings read them: v4.1 for 4.1
        if args.command == "run" and settings.offline and settings.mirror is None:
            raise SystemExit("mlperf-scaling: --offline reads every round from a mirror: give --mirror DIR (or MLPERF_MIRROR)")
        if args.command == "watch" and settings.offline:
            raise SystemExit("mlperf-scaling: watch asks the remote what it publishes, which --offline (MLPERF_OFFLINE) forbids")
        problem = _before_any_work(args) or _rounds_problem(args, settings) or _cluster_problem(args, settings)
        if problem is not None:
            raise SystemExit(f"mlperf-scaling: {problem}")
    except SystemExit as stop:
        if isinstance(stop.code, str):
            print(stop.code, file=sys.stderr)
            return 2
        return stop.code if isinstance(stop.code, int) else 2
    except KeyboardInterrupt:  # Ctrl-C while a check asked the network: nothing was started or written
        print("mlperf-scaling: interrupted before any work (SIGINT)", file=sys.stderr)
        return 130
    _prepare_environment()
    if args.command in ("serve", "reports"):  # a server stops on Ctrl-C as it decides
        return _command(args, settings)
    with end_at_once_on_signals(args.command):
        return _run(args, settings)


def _run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command in _FLOWS:
        unchanged = None
        # answered before anything heavy starts; against a served API the run is made all the same, so that the UI an
        # operator watches shows every check, a finding of nothing new included (the server is up: it costs seconds)
        if args.command == "run" and not args.force and not os.environ.get("PREFECT_API_URL"):
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
    if args.command in ("run", "watch"):
        from mlperf_scaling.tasks.source.releases import remote_base_problem

        if (problem := remote_base_problem(args.remote_base)) is not None:
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


def _rounds_problem(args: argparse.Namespace, settings: Settings) -> str | None:
    """A round asked of `run` that the mirror lacks and the remote does not have (or may not be asked): one line
    before anything is written, not a failed round in the warehouse."""
    if args.command != "run" or not settings.rounds:
        return None
    from mlperf_scaling.tasks.source.releases import unknown_round_problem

    return unknown_round_problem(settings.rounds, settings.mirror, settings.remote_base, settings.offline, settings.network_timeout_s)


def _machine_problem(args: argparse.Namespace) -> str | None:
    """Where the command must write and cannot (the warehouse's folder, the reports, Prefect's home), in one line."""
    from mlperf_scaling.runtime.paths import folder_problem, tree_problem

    if args.command in _WRITES_WAREHOUSE and (problem := folder_problem(Path(args.warehouse).parent, "--warehouse's folder")):
        return problem
    if args.command in _WRITES_REPORTS and (problem := folder_problem(args.reports, "--reports") or tree_problem(args.reports, "--reports")):
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
        return query(args) if args.command == "query" else export(args)
    if args.command == "plan":
        from mlperf_scaling.plan_command import print_plan

        return print_plan(args, terminal.command_console())
    if args.command == "trends":
        from mlperf_scaling.flows.analyze import analyze_trends

        if (problem := _loaded_rounds_problem(args.warehouse)) is not None:
            print(f"mlperf-scaling: {problem}", file=sys.stderr)
            return 2
        analyze_trends(str(args.warehouse), str(args.reports), settings.plot_formats, reports_url=settings.reports_url)
        print(f"report: {Path(args.reports) / 'trends' / 'index.html'}")
        return 0
    if args.command == "serve":
        return serve(settings, args.cron)
    if args.command == "reports":
        return serve_reports(settings)
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
        return _analyze(args.round_names or [args.round_name], args.warehouse, args.reports, args.threshold, settings)
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


def _analyze(round_names: list[str], warehouse: Path, reports: Path, threshold: float, settings: Settings) -> int:
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
        published = publish_round(round_name, str(warehouse), str(reports), settings.plot_formats, settings.embed_plots, settings.reports_url)
        print(f"{round_name}: {analysis.efficiency.height} systems analysed, {analysis.exclusions.height} score rows left out")
        print(f"report: {published.report}")
    with faults_named("the reports", reports, "--reports (MLPERF_REPORTS)"):
        write_explorer_pages(str(warehouse), str(reports))  # the explorer shows the new analysis too
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
    console = terminal.command_console()
    # the notes under the table, whole: in a column they made it wider than any terminal
    print_fitted(console, columns, rows, title=f"Table I of arXiv 2509.03263 (MLPerf Training {PAPER_ROUND}) against this warehouse",
                 see_all="a wider terminal shows it")
    for note in notes:
        console.print(f"- {note}")
    return 0


if __name__ == "__main__":
    command_line()
