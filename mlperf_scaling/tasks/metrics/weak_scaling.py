"""MLPerf HPC weak scaling: what each model costs when many instances train at once, and whether that pays.

The official weak score is a tuple (M' models, instance scale S, TTTa minutes to train them all). Three readings make
it an answer to "how many accelerators per model?":
- the effective instance scale: the official S is what each log states (number_of_nodes x accelerators_per_node),
  which several submitters set to the whole machine; where S x M' exceeds the machine, an instance trained on the
  machine's share, T / (M' + pruned);
- the cost per model, in accelerator-hours (processor-hours for a CPU-only system), against the cheapest strong-scaling
  run of the same workload and accelerator group in the round: weak scaling pays where it costs less per model;
- what sharing the machine costs one instance: the strong time at the same scale over the instance's own mean time
  (sharing efficiency), and how much of the window an instance works on average (straggler efficiency).
Strong runs are compared like for like: closed division only (an open result may change the model), and for the
sharing efficiency the same framework release (HPE+LBNL's v3.0 weak logs are 2021 runs on NGC 21.09; its v3.0 strong
runs use 23.09: their ratio is a software gap, not the cost of sharing).
"""

from __future__ import annotations

import polars as pl

from mlperf_scaling.contracts.common import frame_schema
from mlperf_scaling.contracts.enums import WITH_A_SCORE
from mlperf_scaling.contracts.weak_scaling import WeakScalingSchema
from mlperf_scaling.rounds import round_label
from mlperf_scaling.tasks.metrics.accelerators import with_accelerator_classes
from mlperf_scaling.tasks.metrics.efficiency import processors_where_no_accelerators

_SHARED = "the machine's {units} {unit} shared by {instances} instances (the logs' scale, {scale}, is the whole machine)"


def _effective(scale: int | None, models: int, pruned: int, units: int | None, unit: str) -> tuple[float | None, str]:
    instances = models + pruned
    if scale is not None and scale > 0 and (units is None or scale * models <= units):
        return float(scale), "the instance scale the logs state"
    if units:
        return units / instances, _SHARED.format(units=f"{units:,}", unit=unit, instances=instances, scale=scale)
    return None, "unknown: the logs state no usable scale and the systems JSON no size"


def weak_scaling_table(weak: pl.DataFrame, efficiency: pl.DataFrame, systems: pl.DataFrame | None = None) -> pl.DataFrame:
    """One row per scored weak result of a round (`round_weak_scores`), read beside the round's strong efficiency rows
    (closed division) and its systems (their framework)."""
    framework = ({(r["submitter"], r["system"]): r["framework"] for r in systems.select("submitter", "system", "framework").iter_rows(named=True)}
                 if systems is not None and systems.height else {})
    schema = frame_schema(WeakScalingSchema)
    scored = weak.filter(pl.col("status").is_in([s.value for s in WITH_A_SCORE]) & pl.col("number_of_models").is_not_null())
    if scored.height == 0:
        return pl.DataFrame(schema=schema)
    classed = with_accelerator_classes(processors_where_no_accelerators(scored)).with_columns(
        pl.col("accelerator_group").fill_null("unknown accelerator"))
    rows = []
    for row in classed.iter_rows(named=True):
        unit = row["scale_unit"]
        models, pruned, window = row["number_of_models"], row["n_pruned"] or 0, row["time_to_train_all_min"]
        units = row["accelerators"] or None
        scale, source = _effective(row["instance_scale"], models, pruned, units, unit)
        if scale is None:
            continue
        per_model = scale * (models + pruned) * window / 60 / models
        strong = efficiency.filter((pl.col("benchmark_canonical") == row["benchmark_canonical"])
                                   & (pl.col("accelerator_group") == row["accelerator_group"]))
        if row["division"] != "closed":  # efficiency holds closed results only; an open weak result is not compared with them
            strong = strong.clear()
        at_scale = strong.filter(pl.col("accelerators") == round(scale)) if float(scale).is_integer() else strong.clear()
        own = framework.get((row["submitter"], row["system"]))
        same_software = [r["time_to_train_min"] for r in at_scale.iter_rows(named=True)
                         if own is not None and framework.get((r["submitter"], r["system"])) == own]
        strong_time = min(same_software, default=None)
        strong_hours = strong["accelerator_hours"].min() if strong.height else None
        mean = row["mean_instance_min"]
        rows.append({
            "round": row["round"], "benchmark": row["benchmark"], "benchmark_canonical": row["benchmark_canonical"],
            "submitter": row["submitter"], "system": row["system"], "division": row["division"],
            "accelerator_model_name": row["accelerator_model_name"], "accelerator_group": row["accelerator_group"],
            "scale_unit": unit, "machine_units": units, "number_of_models": models, "n_pruned": pruned,
            "instance_scale": row["instance_scale"], "effective_instance_scale": scale, "instance_scale_source": source,
            "time_to_train_all_min": window, "models_per_minute": row["models_per_minute"], "mean_instance_min": mean,
            "straggler_efficiency": mean / window if mean else None, "unit_hours_per_model": per_model,
            "strong_time_at_scale_min": strong_time,
            "sharing_efficiency": strong_time / mean if strong_time and mean else None,
            "strong_best_unit_hours": strong_hours,
            "weak_saves_pct": 100 * (1 - per_model / strong_hours) if strong_hours else None,
            "_why_no_sharing": (None if strong_time is not None or not at_scale.height
                                else f"the strong runs at {round(scale):,} used other software than this result's {own or 'unstated framework'}"),
            "_open": row["division"] != "closed",
        })
    if not rows:
        return pl.DataFrame(schema=schema)
    table = pl.DataFrame(rows, schema={**{k: v for k, v in schema.items() if k not in ("is_cheapest_per_model", "sentence")},
                                       "_why_no_sharing": pl.String, "_open": pl.Boolean})
    table = table.with_columns(
        (pl.col("unit_hours_per_model") == pl.col("unit_hours_per_model").min().over("round", "benchmark_canonical", "accelerator_group"))
        .alias("is_cheapest_per_model"))
    return table.with_columns(pl.Series("sentence", [_sentence(r) for r in table.iter_rows(named=True)], dtype=pl.String)).select(list(schema))


def _sentence(row: dict) -> str:
    unit = row["scale_unit"]
    scale = row["effective_instance_scale"]
    scale_text = f"{scale:,.0f}" if float(scale).is_integer() else f"{scale:,.1f}"
    mean = f" (an instance took {row['mean_instance_min']:.1f} min on average)" if row["mean_instance_min"] else ""
    text = (f"{round_label(row['round'])} {row['benchmark']}, {row['submitter']}/{row['system']}: {row['number_of_models']:,} models "
            f"of {scale_text} {row['accelerator_group']} {unit} each, all trained within {row['time_to_train_all_min']:.1f} min{mean} "
            f"({row['models_per_minute']:.2f} models/min), {row['unit_hours_per_model']:,.1f} {unit[:-1]}-hours per model")
    if row["sharing_efficiency"] is not None:
        text += (f"; alone at {scale_text}, with the same software, the best strong run took {row['strong_time_at_scale_min']:.1f} min "
                 f"(sharing efficiency {row['sharing_efficiency']:.2f})")
    elif row["_why_no_sharing"]:
        text += f"; no sharing efficiency: {row['_why_no_sharing']}"
    if row["weak_saves_pct"] is not None:
        verdict = "less" if row["weak_saves_pct"] > 0 else "more"
        text += (f"; {abs(row['weak_saves_pct']):.0f} % {verdict} per model than the cheapest strong run of the group in the round "
                 f"({row['strong_best_unit_hours']:,.1f} {unit[:-1]}-hours)")
    elif row["_open"]:
        text += "; open division (its model may differ): not compared with the closed strong runs"
    else:
        text += "; no strong-scaling run of the group in the round to compare with"
    return text + "."
