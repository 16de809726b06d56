"""A run's power over time, from its node logs and its phases: mean, peak, peak-to-average, each phase's mean power,
the imbalance between nodes, and whether the readings meet the sampling rule.

A reading covers the time since the previous one (the rules' integral: reading x duration since the previous
reading), so the system's power at an instant is, on each node, the first reading at or after it, summed over the
nodes on a one-second grid over the timed portion (run_start to run_stop). The sampling rule is MLCommons'
training_policies/power_measurement.adoc: "at least once every second distributed evenly throughout the timed portion
of a run" and "max(a run, 60 power samples)".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlperf_scaling.tasks.parse.power_log import PowerSummary

GRID_MS = 1000.0
RULE_INTERVAL_S = 1.0
RULE_MIN_READINGS = 60
# a meter that reads every second drifts by a few milliseconds: 5 % beyond a second is still once a second
RULE_TOLERANCE = 1.05


@dataclass(frozen=True)
class PowerProfile:
    mean_w: float | None = None
    peak_w: float | None = None
    peak_to_average: float | None = None
    train_mean_w: float | None = None
    eval_mean_w: float | None = None
    eval_time_share: float | None = None
    init_mean_w: float | None = None
    node_imbalance: float | None = None
    readings_per_node_min: int | None = None
    sampling_interval_median_s: float | None = None
    sampling_interval_max_s: float | None = None
    sampling_rule_met: bool | None = None
    profile_note: str | None = None


def _eval_mask(grid: np.ndarray, phases: list[tuple[str, float]]) -> np.ndarray:
    """Grid points inside an evaluation: each eval_start paired with the next eval_stop."""
    intervals = []
    opened: float | None = None
    for key, time in sorted(phases, key=lambda phase: phase[1]):
        if key == "eval_start":
            opened = time
        elif key == "eval_stop" and opened is not None:
            intervals.append((opened, time))
            opened = None
    if not intervals:
        return np.zeros(grid.shape, dtype=bool)
    starts, stops = np.array(intervals).T  # ordered and disjoint: inside when more have started than stopped
    return np.searchsorted(starts, grid, side="right") > np.searchsorted(stops, grid, side="right")


def _held(times: np.ndarray, watts: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Each grid instant's power on one node: the first reading at or after it (the last reading past the end)."""
    index = np.minimum(np.searchsorted(times, grid, side="left"), len(times) - 1)
    return watts[index]


def power_profile(nodes: list[PowerSummary], run_start_ms: float, run_stop_ms: float, phases: list[tuple[str, float]]) -> PowerProfile:
    """The run's power profile; fields stay null, and profile_note says why, where the readings cannot tell."""
    # watts as the energy counts them: times the node's conversion efficiency (AC read, DC reported)
    series = [(np.frombuffer(node.reading_times_ms, dtype=float), np.frombuffer(node.reading_watts, dtype=float) * node.efficiency)
              for node in nodes]
    series = [(times, watts) for times, watts in series if len(times)]
    if not series or run_stop_ms <= run_start_ms:
        return PowerProfile(profile_note="no power readings" if not series else "the run has no timed portion")
    notes: list[str] = []
    grid = np.arange(run_start_ms, run_stop_ms, GRID_MS)
    per_node = np.vstack([_held(times, watts, grid) for times, watts in series])
    system = per_node.sum(axis=0)
    mean = float(system.mean())
    covered = [(times[0] <= run_start_ms + GRID_MS) and (times[-1] >= run_stop_ms - GRID_MS) for times, _ in series]
    if not all(covered):
        notes.append(f"{covered.count(False)} of {len(covered)} node logs do not cover the whole run: their nearest readings stand in")
    evaluating = _eval_mask(grid, phases)
    eval_mean = float(system[evaluating].mean()) if evaluating.any() else None
    train_mean = float(system[~evaluating].mean()) if (~evaluating).any() else None
    init_start = min((time for key, time in phases if key == "init_start"), default=None)
    init_mean = None
    if init_start is not None and init_start < run_start_ms:
        if all(times[0] <= init_start + GRID_MS for times, _ in series):
            init_grid = np.arange(init_start, run_start_ms, GRID_MS)
            init_mean = float(np.vstack([_held(times, watts, init_grid) for times, watts in series]).sum(axis=0).mean())
        else:
            notes.append("power measurement starts after init_start: no initialisation power")
    node_means = per_node.mean(axis=1)
    imbalance = float((node_means.max() - node_means.min()) / node_means.mean()) if len(series) > 1 and node_means.mean() > 0 else None

    counts, intervals = [], []
    for times, _ in series:
        timed = times[(times >= run_start_ms) & (times <= run_stop_ms)]
        counts.append(len(timed))
        intervals.append(np.diff(timed))
    gaps = np.concatenate(intervals) / 1000.0
    median_gap = float(np.median(gaps)) if len(gaps) else None
    max_gap = float(gaps.max()) if len(gaps) else None
    rule_met = None
    if median_gap is not None:
        rule_met = bool(median_gap <= RULE_INTERVAL_S * RULE_TOLERANCE and min(counts) >= RULE_MIN_READINGS)
        if not rule_met:
            notes.append(f"sampling rule not met: a reading every {median_gap:.2f} s (median), {min(counts)} readings on the "
                         f"sparsest node (the rule: once a second, at least {RULE_MIN_READINGS})")
    return PowerProfile(
        mean_w=mean,
        peak_w=float(system.max()),
        peak_to_average=float(system.max()) / mean if mean > 0 else None,
        train_mean_w=train_mean,
        eval_mean_w=eval_mean,
        eval_time_share=float(evaluating.mean()),
        init_mean_w=init_mean,
        node_imbalance=imbalance,
        readings_per_node_min=min(counts),
        sampling_interval_median_s=median_gap,
        sampling_interval_max_s=max_gap,
        sampling_rule_met=rule_met,
        profile_note="; ".join(notes) or None,
    )
