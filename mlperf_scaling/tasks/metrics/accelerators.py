"""Which accelerator a published name is: vendor and family, curated or inferred from documented name patterns."""

from __future__ import annotations

import polars as pl

from mlperf_scaling.reference.lookup import accelerator_table, classify_accelerator


def accelerator_model_key(name: pl.Expr) -> pl.Expr:
    """One spelling per model for grouping: case, wattage suffixes and spacing removed."""
    return (
        name.str.to_lowercase()
        .str.replace_all(r"\(\s*\d+\s*w\s*\)", "")
        .str.replace_all(r"[\s_]+", " ")
        .str.strip_chars()
    )


def accelerator_families(names: list[str] | None = None) -> pl.DataFrame:
    """Vendor and family of published accelerator names: curated (reference/accelerators.tsv), or inferred from the
    documented name patterns (reference/accelerator_patterns.tsv) for a name not curated yet. Default: the curated names."""
    found = [classify_accelerator(name) for name in (names if names is not None else [row[0] for row in accelerator_table()])]
    return pl.DataFrame(
        {
            "accelerator_model_name": [a.name for a in found],
            "accelerator_vendor": [a.vendor for a in found],
            "accelerator_family": [a.family for a in found],
            "accelerator_family_inferred": [a.inferred for a in found],
        },
        schema={"accelerator_model_name": pl.String, "accelerator_vendor": pl.String, "accelerator_family": pl.String,
                "accelerator_family_inferred": pl.Boolean},
    )
