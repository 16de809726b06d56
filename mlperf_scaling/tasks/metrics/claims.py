"""The source papers' claims that MLPerf data can test, each quoted whole with where it stands, the verdict computed on
the quantity the claim speaks of; and, listed apart, the project's own findings.

Two papers: Cortes, Juiz and Bermejo (arXiv 2509.03263; MLPerf Training v4.1, BERT, Llama 2 70B LoRA, RetinaNet and
Stable Diffusion; written in Spanish, its English abstract the arXiv listing's) and CharLLM-PPT (Go et al., arXiv
2509.10371; power, performance and thermal characterisation of distributed LLM training). Only their abstracts, the
first paragraph of Cortes et al.'s introduction and its Table I could be read (docs/why.md): each claim is a whole
sentence of those, verbatim. A claim the data cannot test says so and why. Verdicts: holds, differs (the numbers say
how), untestable (what is missing).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl
from scipy.stats import spearmanr

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.paper_claims import PaperClaimsSchema
from mlperf_scaling.rounds import round_order
from mlperf_scaling.tasks.metrics.paper_table import PAPER_ROUND, PAPER_TABLE_I, compare, two_decimals_agree

CORTES = "arXiv 2509.03263 (Cortes, Juiz, Bermejo)"
CHARLLM = "arXiv 2509.10371 (CharLLM-PPT, Go et al.)"
LANGUAGE_MODELS = ("gpt3", "llama2_70b_lora", "llama31_405b", "llama31_8b", "gpt_oss_20b", "deepseekv3_671b")


@dataclass
class Verdict:
    verdict: str  # holds, differs, untestable
    evidence: str
    ours: float | None = None
    theirs: float | None = None


def _paper_four(efficiency: pl.DataFrame) -> pl.DataFrame:
    return efficiency.filter(pl.col("round") == PAPER_ROUND, pl.col("benchmark").is_in([row.benchmark for row in PAPER_TABLE_I]))


def efficiency_falls_with_gpus(efficiency: pl.DataFrame) -> Verdict:
    """Abstract: more GPUs speed training up but lower efficiency: within each of the four workloads, time and the
    paper's E' both fall as N grows (Spearman rank correlation with N below zero)."""
    four = _paper_four(efficiency)
    if four.height == 0:
        return Verdict("untestable", f"no {PAPER_ROUND} results of the paper's four workloads in the warehouse")
    parts, holds = [], True
    for benchmark, group in sorted(four.group_by("benchmark"), key=lambda item: str(item[0][0])):
        time_rho = float(spearmanr(group["accelerators"], group["time_to_train_min"]).statistic)
        e_rho = float(spearmanr(group["accelerators"], group["paper_e_prime"]).statistic)
        holds &= time_rho < 0 and e_rho < 0
        parts.append(f"{benchmark[0]}: time rho {time_rho:+.2f}, E' rho {e_rho:+.2f} ({group.height} systems)")
    return Verdict("holds" if holds else "differs", "; ".join(parts))


def machines_in_all_four(efficiency: pl.DataFrame) -> Verdict:
    """Only 11 machines appear in all four workloads: the project's count, once attributed to the paper."""
    four = _paper_four(efficiency)
    counts = four.group_by("submitter", "system").agg(pl.col("benchmark").n_unique().alias("n")).filter(pl.col("n") == len(PAPER_TABLE_I))
    names = ", ".join(sorted(f"{r['submitter']}/{r['system']}" for r in counts.iter_rows(named=True)))
    return Verdict("holds" if counts.height == 11 else "differs",
                   f"{counts.height} systems (submitter and system folder) have a result in all four: {names}", counts.height, 11)


def table_one(efficiency: pl.DataFrame, exclusions: pl.DataFrame, scores: pl.DataFrame) -> list[tuple[str, Verdict]]:
    """Table I: per workload, the systems counted, the reference's GPUs and its time."""
    round_rows = lambda frame: frame.filter(pl.col("round") == PAPER_ROUND)  # noqa: E731
    out = []
    for comparison in compare(round_rows(efficiency), round_rows(exclusions), round_rows(scores)):
        paper = comparison.paper
        same = (comparison.systems == paper.systems and comparison.reference_accelerators == paper.reference_accelerators
                and comparison.reference_time_min is not None and two_decimals_agree(comparison.reference_time_min, paper.reference_time_min) is not None)
        evidence = (f"{comparison.systems} systems (paper {paper.systems}); reference {comparison.reference_system} with "
                    f"{comparison.reference_accelerators} accelerators (paper {paper.reference_accelerators}), "
                    f"{comparison.reference_time_min or float('nan'):.2f} min (paper {paper.reference_time_min:.2f}); "
                    + "; ".join(comparison.explanations))
        out.append((f"Table I, {paper.label}: {paper.systems} systems, reference {paper.reference_accelerators} GPUs, "
                    f"{paper.reference_time_min} min", Verdict("holds" if same else "differs", evidence, comparison.systems, paper.systems)))
    return out


def multi_node_costs(efficiency: pl.DataFrame) -> Verdict:
    """Introduction: communication and synchronisation between nodes lower each accelerator's performance. The
    performance of each accelerator is its throughput, not its convergence: within a workload and accelerator group,
    the throughput part of efficiency (samples per accelerator-minute against the reference's) on several nodes against
    one."""
    four = _paper_four(efficiency).filter(pl.col("number_of_nodes").is_not_null(), pl.col("throughput_part").is_not_null())
    four = four.with_columns((pl.col("number_of_nodes") > 1).alias("multi"))
    both = four.group_by("benchmark", "accelerator_group").agg(
        pl.col("throughput_part").filter(~pl.col("multi")).median().alias("single"),
        pl.col("throughput_part").filter(pl.col("multi")).median().alias("several"),
    ).drop_nulls(["single", "several"])
    if both.height == 0:
        return Verdict("untestable", "no workload and accelerator with a throughput part on one node and on several")
    lower = both.filter(pl.col("several") < pl.col("single")).height
    parts = [f"{r['benchmark']} {r['accelerator_group']}: one node {r['single']:.2f}, several {r['several']:.2f}"
             for r in both.sort("benchmark", "accelerator_group").iter_rows(named=True)]
    return Verdict("holds" if lower == both.height else "differs",
                   f"median throughput per accelerator (throughput part) lower on several nodes in {lower} of {both.height} (workload, "
                   "accelerator) pairs: " + "; ".join(parts), lower / both.height, 1.0)


def configurations_on_the_front(efficiency: pl.DataFrame) -> Verdict:
    """Abstract: some configurations optimise performance, GPU use and efficiency together. Within each of the four
    workloads, the systems on the Pareto front of time against accelerator-hours, and the ones it dominates."""
    four = _paper_four(efficiency)
    if four.height == 0:
        return Verdict("untestable", f"no {PAPER_ROUND} results of the paper's four workloads in the warehouse")
    parts, holds = [], True
    for (benchmark,), group in sorted(four.group_by("benchmark"), key=lambda item: str(item[0][0])):
        front = int(group["is_pareto"].sum())
        holds &= 1 <= front < group.height
        parts.append(f"{benchmark}: {front} of {group.height} systems on the front")
    return Verdict("holds" if holds else "differs", "; ".join(parts))


def capacity_does_not_decide(context: pl.DataFrame) -> Verdict:
    """CharLLM-PPT abstract: performance is not determined solely by hardware capacity. At the same accelerator, count
    and round, the slowest system's time over the fastest's."""
    cells = (context.filter(pl.col("accelerator_group").is_not_null())
             .group_by("round", "benchmark", "accelerator_group", "accelerators")
             .agg(pl.len().alias("n"), (pl.col("time_to_train_min").max() / pl.col("time_to_train_min").min()).alias("spread"))
             .filter(pl.col("n") >= 2))
    if cells.height == 0:
        return Verdict("untestable", "no two systems share an accelerator, count and round")
    wide = cells.filter(pl.col("spread") > 1.10).height
    median = float(cells["spread"].median())  # type: ignore[arg-type]
    worst = cells.sort("spread", descending=True).row(0, named=True)
    # the claim holds when equal hardware differs by over 10 % in at least one cell in four
    return Verdict("holds" if wide >= cells.height / 4 else "differs",
                   f"in {wide} of {cells.height} cells (same round, benchmark, accelerator and count) the slowest system takes over 10 % "
                   f"longer than the fastest; median spread x{median:.2f}; widest x{worst['spread']:.2f} ({worst['round']} "
                   f"{worst['benchmark']}, {worst['accelerators']} {worst['accelerator_group']})", median)


def fewer_bigger_gpus(context: pl.DataFrame) -> Verdict:
    """CharLLM-PPT abstract: scale-up systems with fewer, higher-memory GPUs can outperform scale-out systems. On the
    language models: the best H200 at N against the best H100 at 2N of the same round."""
    best = (context.filter(pl.col("benchmark").is_in(LANGUAGE_MODELS), pl.col("accelerator_group").is_in(["H200-SXM", "H100-SXM"]))
            .group_by("round", "benchmark", "accelerator_group", "accelerators").agg(pl.col("time_to_train_min").min().alias("t")))
    h200 = best.filter(pl.col("accelerator_group") == "H200-SXM")
    h100 = best.filter(pl.col("accelerator_group") == "H100-SXM").with_columns((pl.col("accelerators") // 2).alias("half"))
    pairs = h200.join(h100, left_on=["round", "benchmark", "accelerators"], right_on=["round", "benchmark", "half"], suffix="_h100")
    if pairs.height == 0:
        return Verdict("untestable", "no round has a language model on H200 at N and on H100 at 2N")
    wins = pairs.filter(pl.col("t") <= pl.col("t_h100"))
    parts = [f"{r['round']} {r['benchmark']}: {r['accelerators']} H200 {r['t']:.1f} min vs {r['accelerators_h100']} H100 {r['t_h100']:.1f} min"
             for r in pairs.sort("round", "benchmark", "accelerators").iter_rows(named=True)]
    # The sentence says both: fewer, larger GPUs can be ahead (tuned, communication-bound), and more, smaller ones are
    # ahead otherwise. It holds where the pairs show both; where every pair goes one way, the other half of the
    # sentence is not seen, and the verdict says so rather than reading the absence as support.
    if 0 < wins.height < pairs.height:
        verdict, reading = "holds", "scale-up ahead in some pairs, scale-out in the others, as the sentence says"
    elif wins.height == 0:
        verdict, reading = "differs", ("scale-out ahead in every pair: fewer, larger GPUs never outperform here, so the sentence's "
                                       "'can outperform' is not seen, only its 'in other cases' (MLPerf systems are tuned for time "
                                       "to train at their own scale, which may not be the communication-bound regime it means)")
    else:
        verdict, reading = "differs", "scale-up ahead in every pair: the sentence's 'in other cases, scale-out ... superior' is not seen"
    return Verdict(verdict, f"H200 at N as fast as H100 at 2N in {wins.height} of {pairs.height} pairs ({reading}): " + "; ".join(parts),
                   wins.height / pairs.height)


def tensor_with_pipeline(context: pl.DataFrame) -> Verdict:
    """CharLLM-PPT abstract: tensor with pipeline parallelism underuses bandwidth. Where runs log both degrees, the MFU
    of results with TP > 1 and PP > 1 against the others of the same workload."""
    known = context.filter(pl.col("tensor_parallelism").is_not_null(), pl.col("pipeline_parallelism").is_not_null(), pl.col("mfu").is_not_null())
    known = known.with_columns(((pl.col("tensor_parallelism") > 1) & (pl.col("pipeline_parallelism") > 1)).alias("both"))
    sides = known.group_by("benchmark").agg(pl.col("mfu").filter(pl.col("both")).median().alias("both"),
                                            pl.col("mfu").filter(~pl.col("both")).median().alias("other")).drop_nulls()
    if sides.height == 0:
        return Verdict("untestable", "no workload has results with and without TP x PP and an MFU: the logs state parallelism from v6.0 on")
    lower = sides.filter(pl.col("both") < pl.col("other")).height
    parts = [f"{r['benchmark']}: MFU {r['both']:.2f} with TP and PP, {r['other']:.2f} without" for r in sides.iter_rows(named=True)]
    return Verdict("holds" if lower == sides.height else "differs", "; ".join(parts))


def micro_batch_power(context: pl.DataFrame) -> Verdict:
    """CharLLM-PPT abstract: larger micro-batches cause peak power excursions. Where results of one workload at one count
    and accelerator group differ in micro-batch and have a power profile: the rank correlation of micro-batch with
    peak-to-average power within them (across counts, a larger system's excursions would be taken for the batch's)."""
    known = context.filter(pl.col("micro_batch_size").is_not_null(), pl.col("peak_to_average").is_not_null())
    cell = ["benchmark", "accelerators", "accelerator_group"]
    varied = known.filter(pl.col("micro_batch_size").n_unique().over(cell) > 1)
    if varied.height < 4:
        return Verdict("untestable", f"{known.height} results have both a micro-batch (logged from v6.0, or in their config file) "
                                     f"and power logs (v4.0, v4.1 and v5.0), and {varied.height} of them differ in micro-batch at one "
                                     "workload, count and accelerator")
    centred = varied.with_columns(pl.col("micro_batch_size").rank().over(cell).alias("batch_rank"),
                                  pl.col("peak_to_average").rank().over(cell).alias("power_rank"))
    rho = float(spearmanr(centred["batch_rank"], centred["power_rank"]).statistic)
    return Verdict("holds" if rho > 0 else "differs", f"rank correlation {rho:+.2f} over {varied.height} results, within workload and count", rho)


def lora_draws_less(context: pl.DataFrame) -> Verdict:
    """The project's finding, in neither paper: LoRA fine-tuning draws less power than pretraining. Watts per accelerator of Llama 2 70B LoRA against GPT-3 pretraining at the same count, same round,
    accelerator and AC/DC."""
    power = context.filter(pl.col("w_per_accelerator").is_not_null())
    lora = power.filter(pl.col("benchmark") == "llama2_70b_lora")
    pretraining = power.filter(pl.col("benchmark") == "gpt3")
    pairs = lora.join(pretraining, on=["round", "accelerator_group", "accelerators", "measurement"], suffix="_gpt3")
    if pairs.height == 0:
        return Verdict("untestable", "no round measured the power of LoRA fine-tuning and GPT-3 pretraining on the same accelerators and count")
    lower = pairs.filter(pl.col("w_per_accelerator") < pl.col("w_per_accelerator_gpt3")).height
    parts = [f"{r['round']} {r['accelerators']} {r['accelerator_group']} ({r['measurement']}): LoRA {r['w_per_accelerator']:.0f} W, "
             f"GPT-3 {r['w_per_accelerator_gpt3']:.0f} W per accelerator" for r in pairs.iter_rows(named=True)]
    return Verdict("holds" if lower == pairs.height else "differs", "; ".join(parts))


PROJECT = "this project"
# the papers' sentences, verbatim (docs/why.md says where they were read)
_CORTES_SPEEDUP = ("While the massive use of GPUs can significantly speed up training times, this approach has a negative impact on "
                   "efficiency.")
_CORTES_CONFIGURATIONS = ("In this article, we present a detailed analysis of the times reported by MLPerf Training v4.1 on four workloads: "
                          "BERT, Llama2 LoRA, RetinaNet, and Stable Diffusion, showing that there are configurations that optimise the "
                          "relationship between performance, GPU usage, and efficiency.")
_CORTES_BREAK_EVEN = "The results point to a break-even point that allows training times to be reduced while maximising efficiency."
_CORTES_NODES = ("Sin embargo, la ampliación masiva de recursos no siempre se traduce en una mejora proporcional de la eficiencia, "
                 "puesto que la sobrecarga de comunicación y la sincronización entre nodos suelen afectar negativamente el rendimiento "
                 "de cada acelerador. (However, the massive scaling of resources does not always translate into a proportional "
                 "improvement in efficiency, since communication overhead and synchronisation between nodes usually hurt the "
                 "performance of each accelerator: the project's translation.)")
_CHARLLM_CAPACITY = "Our findings show that performance is not determined solely by scaling hardware capacity."
_CHARLLM_SCALE_UP = ("Scale-up systems with fewer, higher-memory GPUs can outperform scale-out systems in communication-bound regimes, "
                     "but only under carefully tuned configurations; in other cases, scale-out deployments achieve superior throughput.")
_CHARLLM_PARALLELISM = ("We also show that certain parallelism combinations, such as tensor with pipeline, lead to bandwidth "
                        "underutilization due to inefficient data chunking, while increasing microbatch sizes beyond a certain point "
                        "induces bursty execution and peak power excursions that worsen thermal throttling.")


def claims_table(efficiency: pl.DataFrame, context: pl.DataFrame, exclusions: pl.DataFrame, scores: pl.DataFrame) -> pl.DataFrame:
    """Every claim of the papers, quoted whole with its verdict, then the project's own findings; the numbers come from
    this warehouse."""
    # (whose, claim, where, what it speaks of, verdict)
    rows: list[tuple[str, str, str, str, Verdict]] = [
        (CORTES, _CORTES_SPEEDUP, "abstract, sentence 2", "time to train and the paper's efficiency E' against the GPU count",
         efficiency_falls_with_gpus(efficiency)),
        (CORTES, _CORTES_CONFIGURATIONS, "abstract, sentence 3", "time against accelerator-hours: configurations on the Pareto front",
         configurations_on_the_front(efficiency)),
        (CORTES, _CORTES_BREAK_EVEN, "abstract, sentence 4", "the count where efficiency starts to fall (the paper's break-even point)",
         Verdict("untestable", "the paper defines its break-even point in its body, which could not be read; the knee the fits give "
                               "per group (scaling_fits.knee_threshold) is this project's, not the paper's")),
        *[(CORTES, claim, "Table I", "systems counted, the reference's GPUs and its time", verdict)
          for claim, verdict in table_one(efficiency, exclusions, scores)],
        (CORTES, _CORTES_NODES, "introduction, paragraph 1, sentence 3 (in Spanish)",
         "the performance of each accelerator: throughput per accelerator, on one node and on several", multi_node_costs(efficiency)),
        (CHARLLM, _CHARLLM_CAPACITY, "abstract, sentence 5", "time to train at equal accelerator, count and round",
         capacity_does_not_decide(context)),
        (CHARLLM, _CHARLLM_SCALE_UP, "abstract, sentence 6", "throughput of fewer, larger GPUs (H200 at N) against more (H100 at 2N)",
         fewer_bigger_gpus(context)),
        (CHARLLM, _CHARLLM_PARALLELISM, "abstract, sentence 7 (its first part)",
         "utilisation of results with tensor and pipeline parallelism against the others", tensor_with_pipeline(context)),
        (CHARLLM, _CHARLLM_PARALLELISM, "abstract, sentence 7 (its second part)", "peak-to-average power against micro-batch size",
         micro_batch_power(context)),
        (PROJECT, "LoRA fine-tuning draws less power per accelerator than pretraining.", "the project's finding; in neither paper",
         "watts per accelerator, Llama 2 70B LoRA against GPT-3 at the same accelerator, count and round", lora_draws_less(context)),
        (PROJECT, "Only 11 machines appear in all four of the paper's v4.1 workloads.",
         "the project's count, once attributed to Cortes et al.; not in the parts of the paper that could be read",
         "systems (submitter and system folder) with a result in all four workloads", machines_in_all_four(efficiency)),
    ]
    schema = frame_schema(PaperClaimsSchema)
    return pl.DataFrame([{"paper": paper, "claim_id": i + 1, "claim": claim, "location": where, "quantity": quantity, "verdict": v.verdict,
                          "evidence": v.evidence, "ours": v.ours, "theirs": v.theirs}
                         for i, (paper, claim, where, quantity, v) in enumerate(rows)], schema=schema)


def workload_ranking(fits: pl.DataFrame) -> pl.DataFrame:
    """Workloads ranked by scalability per round: the median over accelerator groups of the Amdahl parallel fraction
    p (higher scales further) and of the count where efficiency falls to the threshold."""
    amdahl = fits.filter(pl.col("model") == "amdahl", pl.col("p").is_not_null())
    ranked = (amdahl.group_by("round", "benchmark")
              .agg(pl.col("p").median().alias("parallel_fraction"), pl.col("knee_threshold").median().alias("knee_accelerators"),
                   pl.len().alias("groups"))
              .with_columns(pl.col("parallel_fraction").rank("ordinal", descending=True).over("round").cast(pl.Int64).alias("rank")))
    order = sorted(ranked["round"].unique().to_list(), key=round_order)
    return ranked.with_columns(pl.col("round").replace_strict({r: i for i, r in enumerate(order)}, return_dtype=pl.Int64).alias("_order")) \
        .sort("_order", "rank").drop("_order")
