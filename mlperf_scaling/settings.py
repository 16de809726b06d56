"""Settings read once: where the warehouse lives, which rounds the main job ingests, where they come from."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

PUBLIC_REMOTE_BASE = "https://github.com/mlcommons/"


@dataclass(frozen=True)
class Settings:
    warehouse: Path = field(default_factory=lambda: Path(os.environ.get("MLPERF_WAREHOUSE", "data/mlperf.duckdb")))
    # None: every round the source holds (each training_results_vX.Y of the mirror, or every round published)
    rounds: tuple[str, ...] | None = field(
        default_factory=lambda: tuple(os.environ["MLPERF_ROUNDS"].split()) or None if os.environ.get("MLPERF_ROUNDS") else None
    )
    mirror: Path | None = field(default_factory=lambda: Path(os.environ["MLPERF_MIRROR"]) if os.environ.get("MLPERF_MIRROR") else None)
    remote_base: str = field(default_factory=lambda: os.environ.get("MLPERF_REMOTE_BASE", PUBLIC_REMOTE_BASE))
    reports: Path = field(default_factory=lambda: Path(os.environ.get("MLPERF_REPORTS", "reports")))
    # Network steps: a bound on each git call, and how often and how soon a failed one is tried again.
    network_timeout_s: float = field(default_factory=lambda: float(os.environ.get("MLPERF_NETWORK_TIMEOUT_S", "60")))
    clone_timeout_s: float = field(default_factory=lambda: float(os.environ.get("MLPERF_CLONE_TIMEOUT_S", "900")))
    network_retries: int = field(default_factory=lambda: int(os.environ.get("MLPERF_NETWORK_RETRIES", "2")))
    retry_delay_s: float = field(default_factory=lambda: float(os.environ.get("MLPERF_RETRY_DELAY_S", "10")))


def repository_name(round_name: str) -> str:
    return f"training_results_{round_name}"


def source_for_round(round_name: str, mirror: Path | None, remote_base: str = PUBLIC_REMOTE_BASE) -> str:
    """The mirror's archive or git repository for a round when present, else the public repository."""
    if mirror is not None:
        for candidate in (mirror / f"{repository_name(round_name)}.tar.gz", mirror / repository_name(round_name)):
            if candidate.exists():
                return str(candidate)
    return remote_base + repository_name(round_name)
