"""Contract for `paper_claims`."""

from __future__ import annotations

from mlperf_scaling.contracts.common import Contract


class PaperClaimsSchema(Contract, table="paper_claims"):
    """Its columns: contracts/tables/paper_claims.yaml."""
