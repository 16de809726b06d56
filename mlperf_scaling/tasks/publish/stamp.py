"""Whether the pages across rounds (the front page, trends, why, the explorer) were made from the rounds the warehouse
holds now: a stamp of each round's loaded version, written once they were all made. A run that found nothing new remakes
them when the stamp differs: a run before it that failed while making them, or rounds loaded by `ingest` alone."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mlperf_scaling.tasks.load.versions import loaded_versions
from mlperf_scaling.tasks.publish.labels import CROSS_ROUND_PAGES

STAMP = ".cross_round.json"


def rounds_stamp(warehouse: str, loaded: dict[str, dict] | None = None) -> str:
    """A digest of every loaded round's source version and the rules that judged it (`loaded`: loaded_versions, if
    read already)."""
    versions = {round_name: [row.get("source_sha256"), row.get("source_commit"), row.get("rules_package")]
                for round_name, row in (loaded if loaded is not None else loaded_versions(warehouse)).items()}
    return hashlib.sha256(json.dumps(versions, sort_keys=True, default=str).encode()).hexdigest()


def pages_current(reports: str | Path, warehouse: str, loaded: dict[str, dict] | None = None) -> bool:
    """Every page across rounds is there, made from the rounds loaded now."""
    folder = Path(reports)
    if not all((folder / page).is_file() for page in CROSS_ROUND_PAGES):
        return False
    try:
        return json.loads((folder / STAMP).read_text(encoding="utf-8")).get("rounds") == rounds_stamp(warehouse, loaded)
    except (OSError, ValueError, AttributeError):
        return False


def stamp_pages(reports: str | Path, warehouse: str) -> None:
    """Record that the pages across rounds were all made from the rounds loaded now."""
    (Path(reports) / STAMP).write_text(json.dumps({"rounds": rounds_stamp(warehouse)}) + "\n", encoding="utf-8")
