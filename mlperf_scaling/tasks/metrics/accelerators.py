"""Which accelerator a published name is, and which names are one comparable group.

Scaling is measured within one accelerator model and form factor: `H100-SXM` apart from `H100-PCIe` (PCIe and NVL
cards), `A100-PCIe` apart from `A100-SXM`. Family and form factor come from reference/accelerators.tsv, or, for a
name not curated yet, from the documented patterns of reference/accelerator_patterns.tsv (marked inferred). A name
that does not state its form factor (v0.7 "NVIDIA A100") takes it from its system's description where that shows it
(reference/accelerator_systems.tsv), else forms a group that says so: "V100 (form factor not stated)". A name neither
knows forms a group of its own spelling, never mixed with another.
"""

from __future__ import annotations

import polars as pl

from mlperf_scaling.reference.lookup import accelerator_table, classify_accelerator, system_form_factors

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
    if not form_factor:  # the name does not say, nor the system: never mixed with the family's SXM or PCIe parts
        return f"{family} (form factor not stated)"
    if form_factor in ("board", "module", "superchip"):  # one form per family: the family says it all
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


SYSTEM_KEY = ["round", "submitter", "system", "accelerator_model_name"]


def with_accelerator_classes(frame: pl.DataFrame) -> pl.DataFrame:
    """`frame` (rows with round, submitter, system and accelerator_model_name) with the ACCELERATOR_COLUMNS of each
    row's accelerator: from its published name, and where the name states no form factor, from its system's
    description (reference/accelerator_systems.tsv)."""
    names = frame.get_column("accelerator_model_name").drop_nulls().unique().sort().to_list()
    classed = frame.join(accelerator_families(names), on="accelerator_model_name", how="left")
    shown = [row for row in system_form_factors() if classify_accelerator(row.accelerator_model_name).form_factor is None]
    if not shown or not set(SYSTEM_KEY) <= set(frame.columns):
        return classed
    by_system = pl.DataFrame(
        {"round": [r.round for r in shown], "submitter": [r.submitter for r in shown], "system": [r.system for r in shown],
         "accelerator_model_name": [r.accelerator_model_name for r in shown], "_form_factor": [r.form_factor for r in shown],
         "_group": [group_name(classify_accelerator(r.accelerator_model_name).family, r.form_factor, r.accelerator_model_name) for r in shown]},
        schema={**{column: pl.String for column in SYSTEM_KEY}, "_form_factor": pl.String, "_group": pl.String})
    return (classed.join(by_system, on=SYSTEM_KEY, how="left")
            .with_columns(pl.coalesce("accelerator_form_factor", "_form_factor").alias("accelerator_form_factor"),
                          pl.coalesce("_group", "accelerator_group").alias("accelerator_group"))
            .drop("_form_factor", "_group"))
