"""The notes a mirror keeps beside its archives: which files the copy lacks (MISSING.txt) or left out (EXCLUDED.txt).

A published repository has neither; a mirror of it may. Paths in them omit `training_results_vX.Y/`.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from mlperf_scaling.rounds import TRAINING, suite_of, version_of


@dataclass
class CopyNotes:
    missing: set[str] = field(default_factory=set)
    excluded: dict[str, str] = field(default_factory=dict)  # path -> reason given by the mirror
    source_commit: str | None = None  # the repository commit the mirror's copy was taken from (MANIFEST.tsv)


def load_copy_notes(folder: Path | None, round_name: str) -> CopyNotes:
    """Read MISSING.txt (`round<TAB>path`), EXCLUDED.txt (`round path reason bytes`) and MANIFEST.tsv for one round."""
    notes = CopyNotes()
    if folder is None:
        return notes
    missing = folder / "MISSING.txt"
    if missing.is_file():
        for line in missing.read_text(encoding="utf-8", errors="replace").splitlines():  # a bad byte spoils one line, not the round
            parts = line.split("\t")
            if len(parts) >= 2 and parts[0] == round_name:
                notes.missing.add(parts[1].strip())
    excluded = folder / "EXCLUDED.txt"
    if excluded.is_file():
        with excluded.open(encoding="utf-8", errors="replace", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row.get("round") == round_name and row.get("path"):
                    notes.excluded[row["path"]] = row.get("reason") or "excluded"
    # each suite has its manifest, whose rounds are named as its repositories name them (MANIFEST_hpc.tsv: v3.0);
    # MISSING.txt and EXCLUDED.txt name Training rounds only (vX.Y), so an HPC round (hpc-vX.Y) never matches their lines
    manifest = folder / ("MANIFEST.tsv" if suite_of(round_name) == TRAINING else f"MANIFEST_{suite_of(round_name)}.tsv")
    if manifest.is_file():
        with manifest.open(encoding="utf-8", errors="replace", newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                if row.get("round") == version_of(round_name) and row.get("source_commit"):
                    notes.source_commit = row["source_commit"].strip()
    return notes


def notes_folder_for(location: str) -> Path | None:
    """A mirror keeps its notes beside the archive or repository, or inside a directory source."""
    path = Path(location)
    if not path.exists():
        return None
    for candidate in (path.parent, path):
        if (candidate / "MISSING.txt").is_file() or (candidate / "EXCLUDED.txt").is_file():
            return candidate
    return None
