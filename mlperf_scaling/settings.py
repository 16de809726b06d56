"""The settings of a run, read once at an entry point (the CLI, a served or deployed flow) and passed down.

Every value has a default and an `MLPERF_*` environment variable (e.g. `MLPERF_WAREHOUSE`, `MLPERF_ROUNDS="v4.1
v5.1"`); command-line options override both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from mlperf_scaling.rounds import normal_round, repository_name

PUBLIC_REMOTE_BASE = "https://github.com/mlcommons/"
# What the pages show: SVG, text kept as text, drawn in 0.6 of a PNG's CPU (no rasterising, no compression) and half
# its bytes; PNG too with MLPERF_PLOT_FORMATS="svg png" (each format drawn costs its own rendering)
DEFAULT_FORMATS = ("svg",)
FORMATS = ("svg", "png")  # the ones there are, the first drawn is the one shown
DEFAULT_ADDRESS = "127.0.0.1:8765"  # where the reports are served over HTTP unless told


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="MLPERF_", extra="ignore")

    warehouse: Path = Field(Path("data/mlperf.duckdb"), description="the DuckDB file")
    reports: Path = Field(Path("reports"), description="where reports are written")
    mirror: Path | None = Field(None, description="a folder of training_results_vX.Y.tar.gz or git repositories")
    remote_base: str = Field(PUBLIC_REMOTE_BASE, description="prefix of the round repositories")
    # None: every round the source holds (each training_results_vX.Y of the mirror, or every round published)
    rounds: Annotated[list[str] | None, NoDecode] = Field(None, description="rounds to run, space-separated")
    # the pages show SVG; PNG too on request: each format drawn costs its own rendering
    plot_formats: Annotated[tuple[str, ...], NoDecode] = Field(DEFAULT_FORMATS, description="plot file formats, space-separated: svg, png")
    # Plots in the Prefect UI: named and linked in each round's summary, or embedded as image artifacts, tens of kB of
    # base64 each, which every main job then sends and Prefect's database keeps
    artifact_images: Literal["link", "embed"] = Field("link", description="plots in the Prefect UI: link (where the reports are served) or embed (image artifacts)")
    # The reports over HTTP, for the Prefect UI's links (a browser opens no file:// link from an http page): where they
    # are served, and where `mlperf-scaling reports` and `serve` serve them. No URL: the artifacts carry what matters.
    reports_url: str | None = Field(None, pattern=r"^https?://[^\s/]+(/\S*)?$",
                                    description="the URL the reports folder is served at, e.g. http://127.0.0.1:8765/ (the Prefect UI links there)")
    reports_address: str = Field(DEFAULT_ADDRESS, description="HOST:PORT that `reports` and `serve` serve the reports folder at (port 0: any free one)")
    offline: bool = Field(False, description="never use the network: every round from the mirror (or a local source)")
    # A new version of a loaded round with no systems or runs, or with a quarter fewer scores, is refused unless allowed.
    allow_shrink: bool = Field(False, description="load a new version of a round even when it holds much less than the loaded one")
    # Network steps: a bound on each git call, and how often and how soon a failed one is tried again.
    network_timeout_s: float = Field(60, gt=0, description="seconds allowed for one git ls-remote")
    clone_timeout_s: float = Field(900, gt=0, description="seconds allowed for one clone")
    network_retries: int = Field(2, ge=0, description="retries of a failed network step")
    retry_delay_s: float = Field(10, ge=0, description="seconds between retries")
    # Worker processes for parsing and for drawing (each its own pool); None: every CPU this process may use.
    workers: int | None = Field(None, ge=1, le=1024, description="worker processes per pool (default: the CPUs this process may use)")
    # Where parsing batches and figures run (mlperf_scaling.runtime.runners): this machine's pools, or Prefect tasks on Dask.
    task_runner: Literal["local", "dask"] = Field("local", description="local (the worker pools) or dask (Prefect tasks on a Dask cluster)")
    dask_address: str | None = Field(None, pattern=r"^(tcp|tls|ucx|ws|wss)://[^\s/:]+:\d{1,5}$",
                                     description="scheduler of a running Dask cluster, e.g. tcp://10.0.0.5:8786 (none: a local one)")
    # Before any work, the scheduler must answer and show a worker within this long, or the command stops in one line.
    dask_timeout_s: float = Field(10, gt=0, description="seconds the Dask scheduler has to answer with at least one worker")
    # The temporary Prefect API's database keeps the flow runs of this many days (Prefect's vacuum, at each start).
    prefect_history_days: float = Field(7, gt=0, description="days of flow runs the temporary Prefect API keeps (at least an hour)")
    # A published round expands to under 1 GiB; far beyond that is a decompression bomb, not data.
    max_source_bytes: int = Field(16 * 1024**3, gt=0, description="the most a source may expand to")

    @property
    def embed_plots(self) -> bool:
        """Whether the plots go to the Prefect UI as image artifacts rather than as links to their files."""
        return self.artifact_images == "embed"

    @field_validator("plot_formats", mode="before")
    @classmethod
    def _split_formats(cls, value: object) -> object:
        formats = tuple(value.split()) if isinstance(value, str) else tuple(value) if isinstance(value, (list, tuple)) else value
        if isinstance(formats, tuple):
            unknown = [f for f in formats if f not in FORMATS]
            if unknown or not formats or len(set(formats)) < len(formats):
                raise ValueError(f"svg, png or both; not {' '.join(formats) or 'nothing'}")
        return formats

    @field_validator("reports_address")
    @classmethod
    def _host_and_port(cls, value: str) -> str:
        split_address(value)  # ValueError saying what is wrong
        return value

    @field_validator("mirror")
    @classmethod
    def _mirror_exists(cls, value: Path | None) -> Path | None:
        # a mirror that is not there must not quietly turn into downloads from GitHub
        if value is not None and not value.is_dir():
            raise ValueError(f"no such folder: {str(value)!r}")
        return value

    @field_validator("rounds", mode="before")
    @classmethod
    def _split_rounds(cls, value: object) -> object:
        if isinstance(value, str):
            value = value.split()
        if isinstance(value, list):
            return [normal_round(round_name) for round_name in value] or None  # raises ValueError with the round named
        return value


def split_address(address: str) -> tuple[str, int]:
    """`host:port` as a host and a port number; ValueError saying what is wrong."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 <= int(port) < 65536:  # 0: any free port
        raise ValueError(f"{address!r} is not HOST:PORT (e.g. {DEFAULT_ADDRESS})")
    return host, int(port)


def source_for_round(round_name: str, mirror: Path | None, remote_base: str = PUBLIC_REMOTE_BASE) -> str:
    """The mirror's archive or git repository for a round when present, else the public repository."""
    if mirror is not None:
        for candidate in (mirror / f"{repository_name(round_name)}.tar.gz", mirror / repository_name(round_name)):
            if candidate.exists():
                return str(candidate)
    return remote_base + repository_name(round_name)
