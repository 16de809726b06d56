"""The commands that serve until stopped: `serve` (the deployments, and the reports beside them) and `reports` (the
reports folder over HTTP, for a browser and the Prefect UI's links)."""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING

from mlperf_scaling.settings import Settings

if TYPE_CHECKING:
    from mlperf_scaling.runtime.report_server import ReportServer


def _report_server(settings: Settings) -> ReportServer | None:
    """The reports folder served at the settings' address (made if absent: the first run writes it), or None once
    the reason it cannot be (the address taken, or not this machine's) is said in one line."""
    from mlperf_scaling.runtime.paths import folder_problem
    from mlperf_scaling.runtime.report_server import ReportServer

    if (problem := folder_problem(settings.reports, "--reports")) is not None:  # the folder's fault, not the address's
        print(f"mlperf-scaling: {problem}", file=sys.stderr)
        return None
    try:
        settings.reports.mkdir(parents=True, exist_ok=True)
        return ReportServer(settings.reports, settings.reports_address)
    except OSError as exc:
        print(f"mlperf-scaling: cannot serve the reports at {settings.reports_address} ({exc.strerror or exc}): "
              "--reports-address HOST:PORT (MLPERF_REPORTS_ADDRESS) picks another", file=sys.stderr)
        return None


def serve_reports(settings: Settings) -> int:
    if (server := _report_server(settings)) is None:
        return 2
    print(f"serving {settings.reports}/ at {server.url} (Ctrl-C stops); for the Prefect UI's links: "
          f"export MLPERF_REPORTS_URL={server.url}", flush=True)
    with server:
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print("mlperf-scaling: reports server stopped (SIGINT)", file=sys.stderr)
            return 130
    return 0


def serve(settings: Settings, cron: str | None) -> int:
    from prefect import serve as serve_deployments

    from mlperf_scaling.flows.deployments import build_deployments
    from mlperf_scaling.runtime.local_api import TemporaryApi, local_runs

    # the reports beside the deployments, and their runs' artifacts linking there (a run is a process started with
    # this one's environment), unless they are served elsewhere already (MLPERF_REPORTS_URL)
    reports = None
    if not settings.reports_url:
        if (reports := _report_server(settings)) is None:
            return 2
        os.environ["MLPERF_REPORTS_URL"] = reports.start().url
    # without a served API, a temporary one of ours with every service (its scheduler makes the scheduled runs), which
    # ends at once with this process; Prefect's own took up to half a minute to stop after Ctrl-C
    api = None if os.environ.get("PREFECT_API_URL") else TemporaryApi(settings.prefect_history_days, serving=True)
    try:
        with local_runs(api):
            deployments = build_deployments(settings, cron)
            if reports is not None:
                print(f"serving {settings.reports}/ at {reports.url}", flush=True)
            print("serving deployments: " + ", ".join(f"{d.flow_name}/{d.name}" for d in deployments) + " (Ctrl-C stops)", flush=True)
            serve_deployments(*deployments)
    except KeyboardInterrupt:  # Ctrl-C: Prefect's serve stops its runner; the interrupt itself is no error to show
        print("mlperf-scaling: serve stopped (SIGINT)", file=sys.stderr)
        return 130
    finally:
        if api is not None:
            api.stop()
        if reports is not None:
            reports.stop()
    return 0
