"""What plots and pages say, without drawing anything: the note on derived metrics, the plot kinds and formats, the
workload's name. Kept apart from plots.py so that the pages and artifacts need no matplotlib."""

from __future__ import annotations

from mlperf_scaling.reference.lookup import benchmark_name

NOTE = "Speedup, efficiency and clusters are derived metrics, not official MLPerf results."
# What the pages show: SVG, text kept as text, drawn in 0.6 of a PNG's CPU (no rasterising, no compression) and half
# its bytes; PNG too with MLPERF_PLOT_FORMATS="svg png" (each format drawn costs its own rendering)
DEFAULT_FORMATS = ("svg",)
FORMATS = ("svg", "png")  # the ones there are, the first drawn is the one shown
PLOT_KINDS = ("scaling", "time", "energy", "systems", "paper")
MIN_ENERGY_POINTS = 2  # fewer, and the energy plot is a sentence on the page instead
ALL_ROUNDS, ALL_GROUPS = "all rounds", "all groups"  # the explorer's pickers, unpicked

def workload_label(benchmark: str, round_name: str) -> str:
    """The workload by its model's name: `RetinaNet`, with the folder where it differs: `RetinaNet (ssd)`."""
    model = benchmark_name(benchmark, round_name).model
    return model if model.lower().replace("-", "_") == benchmark else f"{model} ({benchmark})"
