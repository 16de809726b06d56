"""A `run` with nothing new, answered before anything heavy starts (no Prefect API, no flow runs).

When every round comes from local sources (a mirror), each one's version (the archive's sha256 or the repository's
commit) is already loaded under the rules installed now, and every report is on disk, there is nothing to do: the
summaries of what the warehouse holds are the answer. Anything else, including any doubt, goes the full way.
"""

from __future__ import annotations

import time
from pathlib import Path

from mlperf_scaling.settings import source_for_round
from mlperf_scaling.tasks.load.outcome import UNCHANGED, RoundOutcome
from mlperf_scaling.tasks.load.versions import is_unchanged, loaded_versions
from mlperf_scaling.tasks.publish.stamp import pages_current
from mlperf_scaling.tasks.source.members import SourceError
from mlperf_scaling.tasks.source.releases import rounds_in_mirror
from mlperf_scaling.tasks.source.resolve import is_network_source, resolve_source, source_version


def unchanged_run(rounds: list[str] | None, mirror: Path | None, remote_base: str, warehouse: Path, reports: Path) -> list[RoundOutcome] | None:
    """The outcomes of a run in which every round is unchanged, or None when the run has work to do."""
    if mirror is None or not mirror.is_dir():
        return None  # rounds at a remote: their versions need the network, which the full run handles with retries
    wanted = rounds or rounds_in_mirror(mirror)
    if not wanted:
        return None
    loaded = loaded_versions(str(warehouse))
    if not pages_current(reports, str(warehouse), loaded):
        return None
    outcomes = []
    for round_name in wanted:
        started = time.perf_counter()
        spec = source_for_round(round_name, mirror, remote_base)
        report = reports / round_name / "index.html"
        try:
            source = resolve_source(spec, round_name)
            if is_network_source(source) or not report.is_file():
                return None
            version = source_version(source)
        except (SourceError, OSError):
            return None
        if not is_unchanged(loaded.get(round_name), version):
            return None
        # the seconds this run spent on the round (checking its version), not those of the run that loaded it
        outcomes.append(RoundOutcome.from_ingestion(loaded[round_name], status=UNCHANGED, message="same version already loaded",
                                                    report=str(report), seconds=time.perf_counter() - started))
    return outcomes
