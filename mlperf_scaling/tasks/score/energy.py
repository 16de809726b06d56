"""Energy to train from power-log summaries, as the MLCommons result summarizer computes it.

Per run: each node file gives conversion efficiency x the integral of `power_reading` watts over the
measurement window, scaled to the run's time to train; each switch file gives conversion efficiency x
`interconnect_power_est` watts x time to train. A benchmark's energy score is the olympic average of its
runs' energies taken in the order of the runs' times (the runs dropped for time are dropped for energy),
times the scaling factor.
"""

from __future__ import annotations

from mlperf_scaling.tasks.parse.power_log import PowerSummary
from mlperf_scaling.tasks.score.olympic import olympic_mean


class EnergyError(ValueError):
    """A power log that gives no energy; the message says why."""


def node_energy_j(node: PowerSummary, time_to_train_ms: float) -> float:
    """Joules of one node over the run: the reading-weighted integral, scaled from the measurement window to the run."""
    if node.problem is not None:
        raise EnergyError(node.problem)
    return node.efficiency * node.integral_w_ms * time_to_train_ms / (node.stop_ms - node.start_ms) / 1000


def switch_energy_j(switch: PowerSummary, time_to_train_ms: float) -> float:
    """Joules of one switch over the run: its estimated interconnect power for the time to train."""
    return switch.switch_efficiency * switch.interconnect_w * time_to_train_ms / 1000


def run_energy_j(nodes: list[PowerSummary], switches: list[PowerSummary], time_to_train_ms: float) -> tuple[float, float]:
    """(node joules, switch joules) of one run; raises EnergyError when it has no usable node log."""
    if not nodes:
        raise EnergyError("no node power log for this run")
    return (
        sum(node_energy_j(node, time_to_train_ms) for node in nodes),
        sum(switch_energy_j(switch, time_to_train_ms) for switch in switches),
    )


def energy_score(times_min: list[float], energies_j: list[float], n_invalid: int, max_dropped: int) -> float | None:
    """Olympic average of run energies in the order of the runs' times (unscaled)."""
    order = sorted(range(len(times_min)), key=lambda i: times_min[i])
    return olympic_mean([energies_j[i] for i in order], n_invalid, max_dropped)
