"""What a new version of a round changes: the scores added, removed and changed against the version loaded, each with
why when the files or the rules say (its logs added, removed or rewritten, its scaling.json, the rules package).

MLCommons' results repositories diff their summary on every change; here the diff is a table, `score_changes`, kept
across loads, and a Prefect artifact of the load that made it.
"""

from __future__ import annotations

import math

import polars as pl

KEY = ["submitter", "system", "benchmark", "scaling_mode"]  # HPC: strong and weak of one system and benchmark are two scores
SAME = 1e-9  # minutes: a time that moves less than this has not changed (the conformance suite's tolerance)


def _files(runs: pl.DataFrame) -> dict[tuple, dict[str, str | None]]:
    found: dict[tuple, dict[str, str | None]] = {}
    for row in runs.iter_rows(named=True):
        found.setdefault(tuple(row[k] for k in KEY), {})[row["file_name"]] = row["sha256"]
    return found


def _files_said(old: dict[str, str | None], new: dict[str, str | None]) -> str | None:
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    rewritten = sorted(name for name in set(old) & set(new) if old[name] != new[name])
    parts = [f"{len(names)} {what} ({', '.join(names[:3])}{', ...' if len(names) > 3 else ''})"
             for what, names in (("logs added", added), ("logs removed", removed), ("logs rewritten", rewritten)) if names]
    return "; ".join(parts) or None


def _moved(old: float | None, new: float | None) -> bool:
    if old is None or new is None:
        return (old is None) != (new is None)
    return not math.isclose(old, new, rel_tol=0, abs_tol=SAME)


def _minutes(row: dict) -> float | None:
    """A score's time: to train (strong), or to train all its models (MLPerf HPC weak scaling)."""
    return row["time_to_train_all_min"] if row.get("scaling_mode") == "weak" else row["time_to_train_min"]


def score_changes(old_scores: pl.DataFrame, old_runs: pl.DataFrame, new_scores: pl.DataFrame, new_runs: pl.DataFrame,
                  old_rules: str | None, new_rules: str | None) -> pl.DataFrame:
    """One row per score added, removed or changed (its time, its status or its scaling factor), with why."""
    old_by = {tuple(r[k] for k in KEY): r for r in old_scores.iter_rows(named=True)}
    new_by = {tuple(r[k] for k in KEY): r for r in new_scores.iter_rows(named=True)}
    old_files, new_files = _files(old_runs), _files(new_runs)
    rules_said = f"rules package changed: {old_rules} -> {new_rules}" if old_rules and new_rules and old_rules != new_rules else None
    rows = []
    for key in sorted(set(old_by) | set(new_by)):
        old, new = old_by.get(key), new_by.get(key)
        if old is not None and new is not None:
            if not (_moved(_minutes(old), _minutes(new)) or old["status"] != new["status"]
                    or _moved(old["scaling_factor"], new["scaling_factor"]) or old.get("number_of_models") != new.get("number_of_models")):
                continue
            change = "changed"
        else:
            change = "added" if old is None else "removed"
        why = [said for said in (_files_said(old_files.get(key, {}), new_files.get(key, {})), rules_said) if said]
        if old is not None and new is not None and _moved(old["scaling_factor"], new["scaling_factor"]):
            why.append(f"scaling.json: {old['scaling_factor']} -> {new['scaling_factor']}")
        if not why:
            why.append("the same logs and rules: the scoring changed" if change == "changed" else
                       "the system's folder is new" if change == "added" else "the system's folder is gone")
        rows.append({
            **dict(zip(KEY, key, strict=True)), "change": change,
            "old_time_to_train_min": _minutes(old) if old else None, "new_time_to_train_min": _minutes(new) if new else None,
            "old_status": old["status"] if old else None, "new_status": new["status"] if new else None,
            "old_scaling_factor": old["scaling_factor"] if old else None, "new_scaling_factor": new["scaling_factor"] if new else None,
            "why": "; ".join(why),
        })
    schema = {"submitter": pl.String, "system": pl.String, "benchmark": pl.String, "scaling_mode": pl.String, "change": pl.String,
              "old_time_to_train_min": pl.Float64, "new_time_to_train_min": pl.Float64, "old_status": pl.String, "new_status": pl.String,
              "old_scaling_factor": pl.Float64, "new_scaling_factor": pl.Float64, "why": pl.String}
    return pl.DataFrame(rows, schema=schema)


def changes_markdown(round_name: str, changes: pl.DataFrame, previous: str, current: str) -> str:
    """The changes of one load in Markdown, a list item each (a table of names and reasons is wider than the Prefect
    UI's pane, about 830 px)."""
    counts = {kind: int((changes["change"] == kind).sum()) for kind in ("added", "removed", "changed")}
    lines = [f"# {round_name}: what changed", "", f"From {previous} to {current}: {counts['changed']} scores changed, "
             f"{counts['added']} added, {counts['removed']} removed (table `score_changes`).", ""]
    for row in changes.head(50).iter_rows(named=True):
        old = "-" if row["old_time_to_train_min"] is None else f"{row['old_time_to_train_min']:,.3f}"
        new = "-" if row["new_time_to_train_min"] is None else f"{row['new_time_to_train_min']:,.3f}"
        lines.append(f"- **{row['submitter']}/{row['system']}/{row['benchmark']}** {row['change']}: {old} -> {new} min ({row['why']})")
    if changes.height > 50:
        lines.append(f"\n{changes.height - 50} more in the table.")
    return "\n".join(lines) + "\n"
