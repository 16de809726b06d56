"""The reports folder served over HTTP, so that a click in the Prefect UI opens a report: a browser refuses file://
links from an http page. Python's own threaded file server, read-only, on one address."""

from __future__ import annotations

import functools
import socket
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from mlperf_scaling.settings import DEFAULT_ADDRESS, split_address


class _QuietFiles(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args) -> None:  # noqa: A002  # the base class's name
        pass  # a line per request would bury the command's own output


class ReportServer:
    """Serves `folder` at `address` from a daemon thread once started; `url` is where its files are."""

    def __init__(self, folder: Path, address: str = DEFAULT_ADDRESS):
        host, port = split_address(address)
        # OSError here (the port taken, the host not this machine's) is the caller's to say in one line
        self._server = ThreadingHTTPServer((host, port), functools.partial(_QuietFiles, directory=str(folder)))
        self._server.daemon_threads = True
        bound_port = self._server.server_address[1]
        # every interface: the name other machines reach this one by, for the links a UI elsewhere opens
        shown = host if host not in ("0.0.0.0", "") else socket.getfqdn()  # noqa: S104
        self.url = f"http://{shown}:{bound_port}/"
        self._thread = threading.Thread(target=self._server.serve_forever, name="report-server", daemon=True)

    def start(self) -> ReportServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> ReportServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
