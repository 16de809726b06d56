"""Contract for `ingestions`: one row per attempt to load a round, with provenance."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class IngestionsSchema(Contract, table="ingestions"):
    """Its columns: contracts/tables/ingestions.yaml."""
