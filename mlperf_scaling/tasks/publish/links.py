"""Where the Prefect UI's artifacts point: the reports as served over HTTP (`mlperf-scaling reports`, or beside the
deployments in `mlperf-scaling serve`), never file:// paths, which a browser refuses from an http page."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote


@dataclass(frozen=True)
class ReportLinks:
    """The reports folder and the URL it is served at (ending in /)."""

    folder: Path
    url: str

    @classmethod
    def served(cls, url: str | None, folder: str | Path) -> ReportLinks | None:
        """Links into `folder` at `url`; None when the reports are not served (the artifacts then carry what matters)."""
        return None if not url else cls(Path(folder).resolve(), url.rstrip("/") + "/")

    def to(self, path: str | Path) -> str | None:
        """The URL of a file under the reports folder, or None for one outside it."""
        try:
            relative = Path(path).resolve().relative_to(self.folder)
        except ValueError:
            return None
        return self.url + quote(relative.as_posix())
