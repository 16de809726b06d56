"""The machinery that makes the pipeline run, and is none of its stages: worker pools and where heavy work is sent
(local pools or Dask), Prefect's temporary API, run names and loggers, interrupts and a quick exit, the garbage
collector's settings, and how big objects pass between tasks. It imports no stage: the stages and flows import it."""
