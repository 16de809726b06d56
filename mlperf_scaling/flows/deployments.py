"""The two deployments for `mlperf-scaling serve` (local, no work pool), read from prefect.yaml: their descriptions,
parameters and the watch's schedule are written there once, for `prefect deploy` and `serve` alike. Served, they are
named apart (SERVED_SUFFIX), so a `serve` and a `prefect deploy` against one API never overwrite each other."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml

from mlperf_scaling.settings import Settings


def _prefect_yaml() -> Path:
    # in the wheel beside the package (force-included), in a checkout at the project root
    package = Path(str(resources.files("mlperf_scaling")))
    inside = package / "prefect.yaml"
    return inside if inside.is_file() else package.parent / "prefect.yaml"


PREFECT_YAML = _prefect_yaml()


def declared_deployments(path: Path = PREFECT_YAML) -> dict[str, dict]:
    """name -> the deployment as prefect.yaml declares it."""
    return {d["name"]: d for d in yaml.safe_load(path.read_text(encoding="utf-8"))["deployments"]}


def watch_cron(path: Path = PREFECT_YAML) -> str:
    """The daily watch's schedule, as prefect.yaml sets it."""
    return declared_deployments(path)["watch-releases"]["schedules"][0]["cron"]


SERVED_SUFFIX = "-serve"


def build_deployments(settings: Settings, cron: str | None = None, path: Path = PREFECT_YAML) -> list:
    """The pipeline and the watch, with the settings of this process as their parameters."""
    from prefect.deployments.runner import EntrypointType

    from mlperf_scaling.flows.pipeline import mlperf_pipeline
    from mlperf_scaling.flows.watch import watch_releases

    # module paths, as in prefect.yaml: loaded from a file path the flow's module would be `pipeline`, which a Dask
    # worker (handed the flow with each task's context) cannot import
    by_module = EntrypointType.MODULE_PATH

    declared = declared_deployments(path)
    common = {"warehouse": str(settings.warehouse), "remote_base": settings.remote_base, "reports": str(settings.reports)}
    pipeline = mlperf_pipeline.to_deployment(
        name="pipeline" + SERVED_SUFFIX,
        description=declared["pipeline"]["description"],
        parameters={**common, "rounds": settings.rounds, "mirror": str(settings.mirror) if settings.mirror else None},
        entrypoint_type=by_module,
    )
    watch = watch_releases.to_deployment(
        name="watch-releases" + SERVED_SUFFIX,
        description=declared["watch-releases"]["description"],
        cron=cron or watch_cron(path),
        parameters=common,
        entrypoint_type=by_module,
    )
    return [pipeline, watch]
