"""What plots and pages say, without drawing anything: the note on derived metrics, the plot kinds and formats, the
workload's name. Kept apart from plots.py so that the pages and artifacts need no matplotlib."""

from __future__ import annotations

from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.settings import DEFAULT_FORMATS, FORMATS
from mlperf_scaling.wrapping import wrap_at_separators

__all__ = ["ALL_GROUPS", "ALL_ROUNDS", "DEFAULT_FORMATS", "FORMATS", "MIN_ENERGY_POINTS", "NOTE", "PLOT_KINDS", "workload_label", "wrapped_name"]

NOTE = "Speedup, efficiency and clusters are derived metrics, not official MLPerf results."
PLOT_KINDS = ("scaling", "time", "energy", "systems", "paper")
MIN_ENERGY_POINTS = 2  # fewer, and the energy plot is a sentence on the page instead
ALL_ROUNDS, ALL_GROUPS = "all rounds", "all groups"  # the explorer's pickers, unpicked

def workload_label(benchmark: str, round_name: str) -> str:
    """The workload by its model's name: `RetinaNet`, with the folder where it differs: `RetinaNet (ssd)`."""
    model = benchmark_name(benchmark, round_name).model
    return model if model.lower().replace("-", "_") == benchmark else f"{model} ({benchmark})"


LEGEND_LINE = 40  # characters of a legend's line: longer names go on to the next line, whole


def wrapped_name(name: str, width: int = LEGEND_LINE, indent: str = "   ") -> str:
    """A system's name on lines of at most `width` characters, broken only after a separator or at a space, so that no
    token is cut and every character is kept."""
    return "\n".join(wrap_at_separators(name, width, indent))
