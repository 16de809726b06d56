"""Which plots are already drawn from which inputs: a content hash per benchmark, stored beside the plots, so a round
whose metric tables and plotting code are unchanged is not drawn again."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

import polars as pl

MANIFEST = ".drawn.json"


@cache
def _code_digest() -> bytes:
    import matplotlib

    from mlperf_scaling.tasks.publish import plot_canvas, plots, trend_plots

    # every module that decides what a figure looks like: a change to any of them draws every figure again
    digest = hashlib.sha256()
    for module in (plot_canvas, plots, trend_plots):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(matplotlib.__version__.encode())
    return digest.digest()


def plot_fingerprint(formats: tuple[str, ...], *frames: pl.DataFrame) -> str:
    """A digest of the plotting code, matplotlib's version, the file formats and the frames' content."""
    digest = hashlib.sha256(_code_digest())
    digest.update(" ".join(formats).encode())
    for frame in frames:
        digest.update(frame.write_csv().encode())
    return digest.hexdigest()


class DrawnPlots:
    """The manifest of a round's plot folder: benchmark -> the fingerprint its plots were drawn from, and their files."""

    def __init__(self, folder: Path):
        self.path = folder / MANIFEST
        try:
            self.entries: dict[str, dict] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.entries = {}

    def unchanged(self, benchmark: str, fingerprint: str) -> dict[str, list[Path]] | None:
        """The plot files of the benchmark if they were drawn from this very fingerprint and are all still there."""
        entry = self.entries.get(benchmark)
        if entry is None or entry.get("fingerprint") != fingerprint:
            return None
        plots = {kind: [self.path.parent / name for name in names] for kind, names in entry["files"].items()}
        return plots if all(p.is_file() for paths in plots.values() for p in paths) else None

    def record(self, benchmark: str, fingerprint: str, plots: dict[str, list[Path]]) -> None:
        self.entries[benchmark] = {"fingerprint": fingerprint, "files": {kind: [p.name for p in paths] for kind, paths in plots.items()}}

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.entries, indent=1, sort_keys=True), encoding="utf-8")
