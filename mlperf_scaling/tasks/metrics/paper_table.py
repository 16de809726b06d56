"""Table I of Cortes, Juiz and Bermejo (arXiv 2509.03263) beside what the warehouse reproduces for MLPerf Training v4.1."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

PAPER_ROUND = "v4.1"


@dataclass(frozen=True)
class PaperRow:
    label: str
    benchmark: str  # folder name in the v4.1 results
    systems: int
    reference_accelerators: int
    reference_time_min: float


# The paper's published values (Table I): systems, reference GPUs, reference time to train.
PAPER_TABLE_I = (
    PaperRow("BERT", "bert", 28, 2, 366.18),
    PaperRow("Llama2 70B LoRA", "llama2_70b_lora", 29, 4, 61.87),
    PaperRow("RetinaNet", "ssd", 26, 2, 172.83),
    PaperRow("Stable Diffusion", "stable_diffusion", 25, 4, 60.52),
)


@dataclass
class Comparison:
    paper: PaperRow
    systems: int
    reference_system: str | None
    reference_accelerators: int | None
    reference_time_min: float | None
    explanations: list[str]


def two_decimals_agree(ours: float, theirs: float) -> str | None:
    if round(ours, 2) == theirs:
        return "same value to the paper's two decimals"
    if int(ours * 100) / 100 == theirs:
        return f"same value, truncated rather than rounded to two decimals ({ours:.4f})"
    return None


def compare(efficiency: pl.DataFrame, exclusions: pl.DataFrame, scores: pl.DataFrame) -> list[Comparison]:
    """Our systems count, reference accelerators and reference time beside the paper's, with what explains a difference."""
    results = []
    for paper in PAPER_TABLE_I:
        group = efficiency.filter(pl.col("benchmark") == paper.benchmark)
        excluded = exclusions.filter(pl.col("benchmark") == paper.benchmark)
        all_scores = scores.filter(pl.col("benchmark") == paper.benchmark)
        notes: list[str] = []
        if group.height == 0:
            results.append(Comparison(paper, 0, None, None, None, ["no analysed systems for this benchmark"]))
            continue
        reference = group.filter(pl.col("is_paper_reference")).row(0, named=True)
        if group.height != paper.systems:
            difference = group.height - paper.systems
            notes.append(f"{abs(difference)} system(s) {'more' if difference > 0 else 'fewer'} than the paper, which does not list its systems")
            for row in excluded.iter_rows(named=True):
                notes.append(f"left out here: {row['submitter']}/{row['system']}: {row['reason']}")
            previews = group.filter(pl.col("availability") == "preview")
            if previews.height:
                notes.append("candidates: preview systems " + ", ".join(f"{r['submitter']}/{r['system']}" for r in previews.iter_rows(named=True)))
            twins = group.group_by("time_to_train_min").agg(pl.format("{}/{}", "submitter", "system").alias("systems")).filter(pl.col("systems").list.len() > 1)
            for row in twins.iter_rows(named=True):
                notes.append("candidates: identical results published twice: " + ", ".join(row["systems"]))
        else:
            notes.append("systems count matches")
        if reference["accelerators"] != paper.reference_accelerators:
            notes.append(f"reference accelerators differ: {reference['accelerators']} here, {paper.reference_accelerators} in the paper")
        agreement = two_decimals_agree(reference["time_to_train_min"], paper.reference_time_min)
        if agreement:
            notes.append(f"reference time: {agreement}")
        else:
            candidates = all_scores.filter(pl.col("accelerators") == paper.reference_accelerators)
            matched = False
            for row in candidates.iter_rows(named=True):
                for column, meaning in (("time_to_train_min", "official score"), ("time_to_train_unscaled_min", "unscaled score")):
                    value = row[column]
                    if value is not None and two_decimals_agree(value, paper.reference_time_min):
                        notes.append(f"reference time: the paper's value is the {meaning} of {row['submitter']}/{row['system']} ({value:.4f})")
                        matched = True
            if not matched:
                notes.append(
                    f"reference time differs by {reference['time_to_train_min'] - paper.reference_time_min:+.3f} min and matches no "
                    f"score of a {paper.reference_accelerators}-accelerator system here (scaled or unscaled): not attributable from the data"
                )
        results.append(Comparison(paper, group.height, f"{reference['submitter']}/{reference['system']}",
                                  reference["accelerators"], reference["time_to_train_min"], notes))
    return results
