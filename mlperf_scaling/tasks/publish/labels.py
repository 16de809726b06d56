"""What plots and pages say, without drawing anything: the note on derived metrics, the plot kinds and formats, the
workload's name. Kept apart from plots.py so that the pages and artifacts need no matplotlib."""

from __future__ import annotations

from mlperf_scaling.reference.lookup import benchmark_name
from mlperf_scaling.settings import DEFAULT_FORMATS, FORMATS
from mlperf_scaling.wrapping import wrap_at_separators

# The pages across rounds, under the reports folder: a run that loads nothing new leaves them as they are, if all are there
CROSS_ROUND_PAGES = ("index.html", "trends/index.html", "why/index.html", "explore.html")

__all__ = ["ALL_GROUPS", "ALL_ROUNDS", "DEFAULT_FORMATS", "FORMATS", "MIN_ENERGY_POINTS", "NOTE", "PLOT_KINDS", "workload_label", "wrapped_name"]

NOTE = "Speedup, efficiency and clusters are derived metrics, not official MLPerf results."
PLOT_KINDS = ("scaling", "time", "energy", "systems", "paper")
MIN_ENERGY_POINTS = 2  # fewer, and the energy plot is a sentence on the page instead
ALL_ROUNDS, ALL_GROUPS = "all rounds", "all groups"  # the explorer's pickers, unpicked

def workload_label(benchmark: str, round_name: str) -> str:
    """The workload of a round's benchmark folder as every page names it: its model, with the canonical name where the
    model's name does not spell it (`RetinaNet` for v4.1's folder ssd, `BERT-large (bert)`); never the folder."""
    return benchmark_name(benchmark, round_name).label


LEGEND_LINE = 40  # characters of a legend's line: longer names go on to the next line, whole


def wrapped_name(name: str, width: int = LEGEND_LINE, indent: str = "   ") -> str:
    """A system's name on lines of at most `width` characters, broken only after a separator or at a space, so that no
    token is cut and every character is kept."""
    return "\n".join(wrap_at_separators(name, width, indent))
