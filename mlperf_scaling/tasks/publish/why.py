"""reports/why/: why results scale differently. One page per workload (what the cross-validated model says, the
results coloured by scale-up fabric, model FLOPs utilisation per accelerator, generations at matched counts, power
where measured) and an index with the source papers' claims checked against the data and the workloads ranked by
how well they scale."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import polars as pl

from mlperf_scaling.reference.lookup import benchmark_name, canonical_benchmark
from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.claims import PROJECT
from mlperf_scaling.tasks.metrics.context import SINGLE_SOURCE_PEAK, generations_at_matched_n
from mlperf_scaling.tasks.metrics.explain import not_modelled_because
from mlperf_scaling.tasks.publish.labels import NOTE
from mlperf_scaling.tasks.publish.report import figure_files, render_page, write_index

_EXPLANATION_COLUMNS = [("covariate_label", "covariate"), ("known_share", "known for (share)"), ("cv_r2_share", "CV R² it adds"),
                        ("effect", "effect (std.)"), ("direction", "direction")]
_MFU_COLUMNS = [("round", "round"), ("accelerator_family", "accelerator"), ("n", "results"), ("mfu_median", "MFU median"),
                ("mfu_best", "MFU best"), ("peak_precision", "against"), ("precision_from", "precision known from"),
                ("peak_tflops", "peak TFLOP/s"), ("spec_source", "datasheet")]
_GENERATION_COLUMNS = [("round", "round"), ("accelerators", "accelerators"), ("accelerator_family", "accelerator"),
                       ("accelerator_year", "year"), ("best_time_min", "best T (min)"), ("best_mfu", "best MFU")]
_POWER_COLUMNS = [("round", "round"), ("system", "system"), ("measurement", "AC/DC"), ("accelerators", "accelerators"),
                  ("time_to_train_min", "T (min)"), ("peak_kw", "peak kW"), ("mean_kw", "mean kW"), ("peak_to_average", "peak / mean"),
                  ("w_per_accelerator", "W per accelerator"), ("node_imbalance", "node imbalance"), ("switch_share", "switch share"),
                  ("j_per_sample", "J per sample"), ("j_per_token", "J per token"), ("energy_scaling_efficiency", "energy scaling"),
                  ("time_efficiency", "= time eff."), ("power_ratio", "x power ratio"), ("sampling_rule_met", "1 Hz rule met")]
_AC_DC_COLUMNS = [("round", "round"), ("system", "system"), ("accelerators", "accelerators"), ("ac_kw", "AC mean kW"), ("dc_kw", "DC mean kW"),
                  ("dc_over_ac_energy", "DC / AC energy")]
_CLAIM_COLUMNS = [("claim_id", "#"), ("paper", "paper"), ("claim", "claim"), ("location", "where"), ("quantity", "tested on"), ("verdict", "verdict"),
                  ("evidence", "evidence")]
_FINDING_COLUMNS = [("claim_id", "#"), ("claim", "finding"), ("location", "origin"), ("quantity", "tested on"), ("verdict", "verdict"),
                    ("evidence", "evidence")]
_RANK_COLUMNS = [("rank", "rank"), ("workload_label", "workload"), ("parallel_fraction", "Amdahl p (median)"),
                 ("knee_accelerators", "E = threshold at N (median)"), ("groups", "accelerator groups")]


def r2_notes(n_only: float | None, full: float | None, who: str = "") -> dict[str, str]:
    """What a workload's two cross-validated R² mean where they read oddly: below 0, or the covariates making it worse."""
    notes = {}
    head = f"{who}: " if who else ""
    if n_only is not None and n_only < 0:
        notes["cv_r2_n_only_note"] = (f"{head}R² {n_only:.2f}, below 0: from accelerator count and round alone, predictions for an "
                                      "unseen submitter are worse than the mean of every result")
    if full is not None and n_only is not None and full < n_only:
        notes["cv_r2_full_note"] = (f"{head}R² {full:.2f}{', below 0' if full < 0 else ''} with the covariates: worse than the round "
                                    "and count alone; the covariates fit who submitted rather than why it scales")
    elif full is not None and full < 0:
        notes["cv_r2_full_note"] = f"{head}R² {full:.2f}, below 0: worse than the mean of every result"
    return notes


def fit_text(n_only: float, full: float, folds: int) -> str:
    """The page's sentence on how well the model predicts a submitter it has not seen, in words a negative R² needs."""
    alone = (f"From accelerator count and round alone, a model explains {n_only * 100:.0f} % of the variance of log "
             f"accelerator-minutes for a submitter it has not seen ({folds} folds grouped by submitter)" if n_only >= 0 else
             f"From accelerator count and round alone, a model predicts log accelerator-minutes for a submitter it has not seen "
             f"worse than their mean does (cross-validated R² {n_only:.2f}, below 0; {folds} folds grouped by submitter)")
    if full >= n_only:
        covariates = f"with the covariates below, it explains {full * 100:.0f} %" if full >= 0 else f"with the covariates below, R² {full:.2f}"
    elif full >= 0:
        covariates = f"with the covariates below, {full * 100:.0f} %: worse than the round and count alone"
    else:
        covariates = f"with the covariates below, R² {full:.2f}, below 0: worse than the round and count alone"
    return f"{alone}; {covariates}."


def in_row_order(value: object) -> tuple:
    """A cell as rows are ordered: numbers as numbers (8, 16, 128, not 128, 16, 8), then text, then blanks."""
    if isinstance(value, bool) or value is None:
        return (2, 0.0, str(value))
    if isinstance(value, int | float):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def single_source_marked(row: dict, cell: str, flag: str) -> dict:
    """A row whose MFU (`cell`) is against a peak only one unverified source supports (`flag`), with the note that says
    so on that cell: shown on hover and numbered under the table."""
    if not row.get(flag) or row.get(cell) is None:
        return row
    peak = f"{row['peak_tflops']:,.0f} TFLOP/s {row['peak_precision']}, " if row.get("peak_tflops") and row.get("peak_precision") else ""
    family = row.get("accelerator_family") or "this accelerator"
    return {**row, f"{cell}_note": f"{row['round']} {family}: MFU against a {SINGLE_SOURCE_PEAK} ({peak}its row in "
                                   "reference/accelerator_specs.tsv says which): the MFU is only as sure as that peak"}


def precision_from(sources: pl.Series) -> str:
    """Where the precision of a row's results is known from, the assumed ones named first: "2 assumed; config file 5"."""
    counts = {kind: n for kind, n in Counter(sources.to_list()).most_common()}
    weak = [f"{counts.pop(kind)} {kind}" for kind in ("assumed", "round's configs") if kind in counts]
    return "; ".join(filter(None, [", ".join(weak), ", ".join(f"{kind} {n}" for kind, n in counts.items())]))


def _workload_page(workload: str, explanations: pl.DataFrame, context: pl.DataFrame, figure: dict | None, power_figure: dict | None,
                   across_rounds: bool = False) -> str:
    model = explanations.filter(pl.col("workload") == workload)
    summary = model.row(0, named=True) if model.height else None
    mfu = (context.filter(pl.col("mfu").is_not_null()).group_by("round", "accelerator_family")
           .agg(pl.len().alias("n"), pl.col("mfu").median().alias("mfu_median"), pl.col("mfu").max().alias("mfu_best"),
                pl.col("peak_precision").first(), pl.col("peak_tflops").first(), pl.col("spec_source").first(),
                pl.col("peak_single_source").any().alias("single_source"),
                pl.col("precision_source").fill_null("unknown").alias("sources"))
           .with_columns(pl.col("sources").map_elements(precision_from, return_dtype=pl.String).alias("precision_from")).drop("sources"))
    power = (context.filter(pl.col("peak_w").is_not_null())
             .with_columns((pl.col("peak_w") / 1000).alias("peak_kw"), (pl.col("mean_w") / 1000).alias("mean_kw"))
             .sort("round", "system", "accelerators"))
    generations = generations_at_matched_n(context).with_columns(pl.col("accelerator_year").cast(pl.String))  # a year, not a count
    # the same system and runs measured at the wall (AC) and at the PSUs (DC): v4.0 smc-ac-power and smc-dc-power
    both = power.filter(pl.col("measurement") == "AC").join(power.filter(pl.col("measurement") == "DC"), on=["round", "system", "accelerators"], suffix="_dc")
    ac_dc = both.select("round", "system", "accelerators", (pl.col("mean_w") / 1000).alias("ac_kw"), (pl.col("mean_w_dc") / 1000).alias("dc_kw"),
                        (pl.col("energy_j_dc") / pl.col("energy_j")).alias("dc_over_ac_energy"))
    by_round = lambda frame: sorted(frame.to_dicts(), key=lambda row: (round_order(row["round"]), *map(in_row_order, row.values())))  # noqa: E731
    mfu_rows = [single_source_marked(row, "mfu_median", "single_source") for row in by_round(mfu)]
    generation_rows = [single_source_marked(row, "best_mfu", "best_mfu_single_source") for row in by_round(generations)]
    name = canonical_benchmark(workload)
    said = fit_text(summary["cv_r2_n_only"], summary["cv_r2_full"], summary["folds"]) if summary else ""
    not_modelled = "" if summary else not_modelled_because(context).removeprefix("not cross-validated: ")
    return render_page("why_workload.html.j2", workload=workload, title=name.label, task=name.task, summary=summary, fit_text=said,
                       explanations=model.sort("cv_r2_share", descending=True).to_dicts(), explanation_columns=_EXPLANATION_COLUMNS,
                       figure=figure, power_figure=power_figure, mfu=mfu_rows, mfu_columns=_MFU_COLUMNS,
                       generations=generation_rows, generation_columns=_GENERATION_COLUMNS,
                       power=power.to_dicts(), power_columns=_POWER_COLUMNS, ac_dc=by_round(ac_dc), ac_dc_columns=_AC_DC_COLUMNS, note=NOTE,
                       across_rounds=across_rounds, not_modelled=not_modelled)


def write_why_pages(folder: Path, explanations: pl.DataFrame, claims: pl.DataFrame, ranking: pl.DataFrame, context: pl.DataFrame,
                    plots: dict[str, dict[str, list[Path]]], across_rounds: frozenset[str] = frozenset()) -> Path:
    """reports/why/index.html and a page per workload (`plots`: each workload's figure files by kind; `across_rounds`:
    the workloads the trends page has a section for, which a page links); returns the index."""
    folder.mkdir(parents=True, exist_ok=True)
    workloads = []
    for workload in sorted(context["benchmark_canonical"].unique().to_list()):
        results = context.filter(pl.col("benchmark_canonical") == workload, pl.col("accelerators") > 0)
        if results.height == 0:
            continue
        figures = {kind: figure_files(paths) for kind, paths in plots.get(workload, {}).items()}
        page = folder / f"{workload}.html"
        page.write_text(_workload_page(workload, explanations, results, figures.get("why"), figures.get("power"),
                                        workload in across_rounds), encoding="utf-8")
        model = explanations.filter(pl.col("workload") == workload)
        label = canonical_benchmark(workload).label
        # no R² is never a blank: both cells say so, the first with why (its note)
        blank = {} if model.height else {"cv_r2_n_only": "not fitted", "cv_r2_full": "not fitted",
                                         "cv_r2_n_only_note": f"{label}: {not_modelled_because(results)}"}
        workloads.append({"workload": label, "workload_href": page.name, "n_results": results.height,
                          "cv_r2_n_only": model["cv_r2_n_only"][0] if model.height else None,
                          "cv_r2_full": model["cv_r2_full"][0] if model.height else None,
                          **(r2_notes(model["cv_r2_n_only"][0], model["cv_r2_full"][0], label) if model.height else blank)})
    ranks = sorted(ranking.to_dicts(), key=lambda row: (-round_order(row["round"]), row["rank"]))
    rounds: list[dict] = []
    for row in ranks:
        if not rounds or rounds[-1]["round"] != row["round"]:
            rounds.append({"round": row["round"], "rows": []})
        rounds[-1]["rows"].append({**row, "workload_label": benchmark_name(row["benchmark"], row["round"]).label})
    return write_index(folder, render_page("why.html.j2", workloads=workloads, claims=claims.filter(pl.col("paper") != PROJECT).to_dicts(), claim_columns=_CLAIM_COLUMNS,
                                     findings=claims.filter(pl.col("paper") == PROJECT).to_dicts(), finding_columns=_FINDING_COLUMNS,
                                           rounds=rounds, rank_columns=_RANK_COLUMNS, note=NOTE))
