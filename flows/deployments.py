"""The two deployments, for `mlperf-scaling serve` (local, no work pool) and mirrored in prefect.yaml."""

from __future__ import annotations

from mlperf_scaling.settings import Settings

WATCH_CRON = "0 6 * * *"  # daily, 06:00 UTC


def build_deployments(settings: Settings, watch_cron: str = WATCH_CRON) -> list:
    from flows.pipeline import mlperf_pipeline
    from flows.watch import watch_releases

    pipeline = mlperf_pipeline.to_deployment(
        name="pipeline",
        description="Ingest, analyse and publish the configured MLPerf Training rounds.",
        parameters={
            "rounds": list(settings.rounds) if settings.rounds else None,  # None: every round the source holds
            "warehouse": str(settings.warehouse),
            "mirror": str(settings.mirror) if settings.mirror else None,
            "remote_base": settings.remote_base,
            "reports": str(settings.reports),
        },
    )
    watch = watch_releases.to_deployment(
        name="watch-releases",
        description="Daily: find new or changed rounds at the remote and run the pipeline for those only.",
        cron=watch_cron,
        parameters={"warehouse": str(settings.warehouse), "remote_base": settings.remote_base, "reports": str(settings.reports)},
    )
    return [pipeline, watch]
