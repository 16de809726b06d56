"""On a Dask cluster the workers read the round themselves: each opens the source at the path the command resolved
(a folder or an archive on a file system every worker sees) and reads its share of the logs, the k-th of every n.
Only parsed facts travel back through the scheduler, never the logs' bytes.

A folder is read a share at a time: each worker reads only its own files. An archive is a single compressed stream,
so each worker decompresses all of it and parses its share: the decompression is repeated on every worker (see
docs/operations.md for what that costs at 16 and 64 workers).

A worker that cannot see the source (another machine, no shared path) or sees a different file is found at once:
the round is then read here and its logs are sent to the workers, with one warning that says how to avoid it.
"""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack
from pathlib import Path

from mlperf_scaling.runtime.run_context import run_logger
from mlperf_scaling.runtime.runners import READ, submit, worker_count
from mlperf_scaling.tasks.parse.pool import Judge
from mlperf_scaling.tasks.parse.read import RoundFacts, Share, ShareFacts, assemble_round, read_share
from mlperf_scaling.tasks.source.members import Provenance, SourceError
from mlperf_scaling.tasks.source.mirror_notes import CopyNotes
from mlperf_scaling.tasks.source.resolve import ARCHIVE, GIT_URL, Source, open_source


class SourceNotVisible(Exception):
    """A worker cannot read the source at the command's path, or reads a different file there."""


def read_source_share(source: Source, share: Share, size: int | None, judge: Judge | None, max_source_bytes: int) -> ShareFacts:
    """What a `read-share` task run does on a Dask worker: open the source where the command found it and read one
    share, parsing in this process (the worker is the unit of parallel work)."""
    path = Path(source.location)
    where = socket.gethostname()
    if not path.exists():
        raise SourceNotVisible(f"worker on {where} cannot see {source.location}")
    if size is not None and path.stat().st_size != size:
        raise SourceNotVisible(f"worker on {where} sees a different file at {source.location} ({path.stat().st_size} bytes, not {size})")
    with ExitStack() as opened:
        try:  # a worker without git, or one git does not trust with the folder (another user's): the command reads it
            stream = opened.enter_context(open_source(source, max_source_bytes=max_source_bytes))
        except (OSError, SourceError) as exc:
            raise SourceNotVisible(f"worker on {where} cannot open {source.location}: {exc}") from None
        found = read_share(stream, source.round, share, workers=0, judge=judge)
        found.provenance = stream.provenance
    return found


def size_here(source: Source) -> int | None:
    """The archive's size as this command sees it (a worker must see the same), None for a folder."""
    return Path(source.location).stat().st_size if source.kind == ARCHIVE else None


def can_read_on_workers(source: Source) -> bool:
    """A source the workers may open themselves: a path (a git URL is cloned by the command, into its own folder)."""
    return source.kind != GIT_URL


def read_on_workers(source: Source, notes: CopyNotes, judge: Judge | None, max_source_bytes: int) -> tuple[RoundFacts, Provenance] | None:
    """The round's facts and version, read by the cluster's workers from the source itself, a share each; None when a
    worker cannot see it (the caller then reads it here)."""
    started = time.perf_counter()
    n = worker_count()
    size = size_here(source)
    futures = [submit(READ, read_source_share, (source, Share(k, n), size, judge, max_source_bytes)) for k in range(n)]
    try:
        shares = [future.result() for future in futures]
    except SourceNotVisible as exc:
        for future in futures:
            future.cancel()
        run_logger().warning("%s: %s, so this command reads the round and sends its logs to the workers: put the source on a "
                             "path every Dask worker sees to avoid it", source.round, exc)
        return None
    versions = {(found.provenance.commit, found.provenance.sha256) for found in shares if found.provenance is not None}
    seen = {(found.n_files, found.n_logs) for found in shares}  # a folder has no version: its contents must agree
    if len(versions) > 1 or len(seen) > 1:
        run_logger().warning("%s: the Dask workers see different contents at %s (%s), so this command reads the round and "
                             "sends its logs to them", source.round, source.location, sorted(versions) if len(versions) > 1 else
                             f"files and logs per worker: {sorted(seen)}")
        return None
    facts = assemble_round(source.round, shares, notes, time.perf_counter() - started)
    run_logger().info("%s: read by %d Dask workers from %s", source.round, n, source.location)
    provenance = shares[0].provenance or Provenance()
    return facts, provenance
