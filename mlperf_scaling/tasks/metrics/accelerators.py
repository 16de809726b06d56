"""Which accelerator a published name is, and which names are one comparable group.

Scaling is measured within one accelerator model and form factor: `H100-SXM` apart from `H100-PCIe` (PCIe and NVL
cards), `A100-PCIe` apart from `A100-SXM`. Family and form factor come from reference/accelerators.tsv, or, for a
name not curated yet, from the documented patterns of reference/accelerator_patterns.tsv (marked inferred). A name
neither knows forms a group of its own spelling, never mixed with another.
"""

from __future__ import annotations

import polars as pl

from mlperf_scaling.reference.lookup import accelerator_table, classify_accelerator

ACCELERATOR_COLUMNS = {
    "accelerator_model_name": pl.String,
    "accelerator_vendor": pl.String,
    "accelerator_family": pl.String,
    "accelerator_form_factor": pl.String,
    "accelerator_group": pl.String,
    "accelerator_family_inferred": pl.Boolean,
}


def group_name(family: str | None, form_factor: str | None, name: str) -> str:
    """The comparable group of an accelerator: `H100-SXM`, `TPU v5p`, or the name itself when the family is unknown."""
    if family is None:
        return f"unknown: {name}"
    if form_factor in (None, "", "board", "module", "superchip"):  # one form per family: the family says it all
        return family
    return f"{family}-{form_factor}"


def accelerator_families(names: list[str] | None = None) -> pl.DataFrame:
    """Vendor, family, form factor and comparable group of published accelerator names: curated, or inferred from the
    documented name patterns for a name not curated yet. Default: the curated names."""
    found = [classify_accelerator(name) for name in (names if names is not None else [row[0] for row in accelerator_table()])]
    return pl.DataFrame(
        {
            "accelerator_model_name": [a.name for a in found],
            "accelerator_vendor": [a.vendor for a in found],
            "accelerator_family": [a.family for a in found],
            "accelerator_form_factor": [a.form_factor for a in found],
            "accelerator_group": [group_name(a.family, a.form_factor, a.name) for a in found],
            "accelerator_family_inferred": [a.inferred for a in found],
        },
        schema=ACCELERATOR_COLUMNS,
    )
