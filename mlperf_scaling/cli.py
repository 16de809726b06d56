"""`mlperf-scaling`: the command line over the Prefect flows."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from mlperf_scaling.settings import Settings


def _prepare_environment() -> None:
    # Offline-friendly Prefect defaults; a user's own settings win.
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def _print_summaries(summaries: list[dict]) -> int:
    header = f"{'round':<6} {'status':<9} {'systems':>7} {'runs':>6} {'valid':>6} {'scores':>6} {'scored':>6} {'rejected':>8} {'seconds':>7}  source"
    print(header)
    print("-" * len(header))
    failed = 0
    for s in summaries:
        failed += s["status"] == "failed"
        print(
            f"{s['round']:<6} {s['status']:<9} {s['n_systems']:>7} {s['n_runs']:>6} {s['n_valid_runs']:>6} "
            f"{s['n_scores']:>6} {s['n_scored']:>6} {s['n_rejections']:>8} {s['seconds']:>7.1f}  {s['source']}"
        )
        if s["status"] == "failed" or s.get("message"):
            print(f"       {s['message']}")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    settings = Settings()
    parser = argparse.ArgumentParser(prog="mlperf-scaling", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    ingest = commands.add_parser("ingest", help="ingest one or more sources into the warehouse")
    ingest.add_argument("sources", nargs="+", metavar="SOURCE", help="git URL, local git repository, directory or .tar.gz")
    ingest.add_argument("--round", dest="round_name", help="round of the source (default: from its name training_results_vX.Y)")
    ingest.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    ingest.add_argument("--notes", type=Path, help="folder holding MISSING.txt / EXCLUDED.txt for the source (default: beside it)")

    run = commands.add_parser("run", help="the main job: ingest every configured round")
    run.add_argument(
        "--rounds", nargs="+", default=list(settings.rounds) if settings.rounds else None,
        help="rounds, e.g. v4.1 v5.1 (default: every round the source holds: each training_results_vX.Y of the mirror, "
        "or every round published at the remote)",
    )
    run.add_argument("--mirror", type=Path, default=settings.mirror, help="folder of training_results_vX.Y.tar.gz or git repos; else the public repos")
    run.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    run.add_argument("--remote-base", default=settings.remote_base, help="prefix of the round repositories")
    run.add_argument("--reports", type=Path, default=settings.reports, help=f"report folder (default {settings.reports})")
    run.add_argument("--force", action="store_true", help="re-ingest rounds whose source version is already loaded")

    analyze = commands.add_parser("analyze", help="redo the analysis and the report of a round from the warehouse alone")
    analyze.add_argument("--round", dest="round_name", required=True, help="round, e.g. v4.1")
    analyze.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    analyze.add_argument("--reports", type=Path, default=settings.reports, help=f"report folder (default {settings.reports})")
    analyze.add_argument("--threshold", type=float, default=0.5, help="efficiency threshold for the fitted knee, besides 0.5 (default 0.5)")

    trends = commands.add_parser("trends", help="redo the cross-round view (reports/trends/) from the warehouse")
    trends.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    trends.add_argument("--reports", type=Path, default=settings.reports, help=f"report folder (default {settings.reports})")

    watch = commands.add_parser("watch", help="run watch-releases once: process new and changed rounds at the remote")
    watch.add_argument("--remote-base", default=settings.remote_base, help=f"prefix of the round repositories (default {settings.remote_base}); a folder of git repositories works too")
    watch.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")
    watch.add_argument("--reports", type=Path, default=settings.reports, help=f"report folder (default {settings.reports})")

    serve = commands.add_parser("serve", help="serve the pipeline and the daily watch-releases deployments locally")
    serve.add_argument("--cron", default=None, help="schedule of watch-releases (default: daily, 06:00 UTC)")

    paper = commands.add_parser("paper-table", help="Table I of arXiv 2509.03263 beside this warehouse's values")
    paper.add_argument("--round", dest="round_name", default="v4.1", help="the paper's round (v4.1)")
    paper.add_argument("--warehouse", type=Path, default=settings.warehouse, help=f"DuckDB file (default {settings.warehouse})")

    args = parser.parse_args(argv)
    _prepare_environment()
    if args.command == "paper-table":
        return _paper_table(args.round_name, args.warehouse)
    if args.command == "trends":
        from flows.analyze import analyze_trends

        print(f"report: {analyze_trends(str(args.warehouse), str(args.reports))['report']}")
        return 0
    if args.command == "serve":
        return _serve(settings, args.cron)
    if args.command == "watch":
        from flows.watch import watch_releases

        result = watch_releases(str(args.warehouse), args.remote_base, str(args.reports))
        for round_name, action in result["found"].items():
            print(f"{round_name:<6} {action}")
        print(f"started: {', '.join(result['started']) or 'nothing'}")
        return _print_summaries(result["summaries"]) if result["summaries"] else 0
    if args.command == "analyze":
        if not 0 < args.threshold < 1:
            print("mlperf-scaling: --threshold must be between 0 and 1", file=sys.stderr)
            return 2
        return _analyze(args.round_name, args.warehouse, args.reports, args.threshold)
    if args.command == "ingest":
        from flows.ingest import ingest_sources
        from tasks.sources import SourceError

        try:
            summaries = ingest_sources(
                [str(s) for s in args.sources], str(args.warehouse), args.round_name, str(args.notes) if args.notes else None
            )
        except SourceError as exc:
            print(f"mlperf-scaling: {exc}", file=sys.stderr)
            return 2
    else:
        from flows.pipeline import mlperf_pipeline

        summaries = mlperf_pipeline(
            args.rounds, str(args.warehouse), str(args.mirror) if args.mirror else None, args.remote_base, str(args.reports), args.force
        )
    status = _print_summaries(summaries)
    print(f"warehouse: {args.warehouse}")
    for summary in summaries:
        if summary.get("report"):
            print(f"report {summary['round']}: {summary['report']}")
    trends = Path(getattr(args, "reports", settings.reports)) / "trends" / "index.html"
    if args.command == "run" and trends.is_file():
        print(f"across rounds: {trends}")
    return status


def _serve(settings: Settings, cron: str | None) -> int:
    from prefect import serve

    from flows.deployments import WATCH_CRON, build_deployments

    deployments = build_deployments(settings, cron or WATCH_CRON)
    print("serving deployments: " + ", ".join(f"{d.flow_name}/{d.name}" for d in deployments) + " (Ctrl-C stops)")
    serve(*deployments)
    return 0


def _analyze(round_name: str, warehouse: Path, reports: Path, threshold: float = 0.5) -> int:
    if not warehouse.exists():
        print(f"mlperf-scaling: no warehouse at {warehouse}: run `mlperf-scaling run` or `ingest` first", file=sys.stderr)
        return 2
    from flows.analyze import analyze_round, publish_round

    result = analyze_round(round_name, str(warehouse), threshold)
    published = publish_round(round_name, str(warehouse), str(reports))
    print(f"{round_name}: {result['n_systems']} systems analysed, {result['n_excluded']} score rows left out")
    print(f"report: {published['report']}")
    return 0


def _paper_table(round_name: str, warehouse: Path) -> int:
    from tasks.paper_table import PAPER_ROUND, compare, render
    from warehouse.connection import connect
    from warehouse.read import read_query

    if round_name != PAPER_ROUND:
        print(f"mlperf-scaling: the paper analysed {PAPER_ROUND} only", file=sys.stderr)
        return 2
    if not warehouse.exists():
        print(f"mlperf-scaling: no warehouse at {warehouse}", file=sys.stderr)
        return 2
    connection = connect(warehouse, read_only=True)
    try:
        efficiency = read_query(connection, "round_efficiency", round=round_name)
        exclusions = read_query(connection, "round_exclusions", round=round_name)
        scores = read_query(connection, "round_scores", round=round_name)
    finally:
        connection.close()
    if efficiency.height == 0:
        print(f"mlperf-scaling: no analysis of {round_name} in {warehouse}: run `mlperf-scaling analyze --round {round_name}`", file=sys.stderr)
        return 2
    print(render(compare(efficiency, exclusions, scores)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
