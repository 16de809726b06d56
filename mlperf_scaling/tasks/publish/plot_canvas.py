"""The canvas every plot is drawn on: matplotlib set up headless, a figure reused per kind of plot, its margins fitted
to what its labels need, and its files written (SVG, PNG on request).

Imported before any figure is made (tasks/publish/plots.py imports it first): the backend and the SVG settings hold
for every figure.
"""

from __future__ import annotations

import threading
import weakref
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: files only
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text in the SVG: searchable, selectable, smaller
matplotlib.rcParams["svg.hashsalt"] = "mlperf-scaling"  # ids from a fixed salt, not uuid4: the same figure, the same bytes
# titles at a fixed height: no axis here has tick labels on top, and finding whether one does lays out every axis once
# more before each save (the same files, a few percent less time to draw)
matplotlib.rcParams["axes.titley"] = 1.0

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter, NullLocator  # noqa: E402

from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS  # noqa: E402

_PAD_IN = 0.08  # between a label and what it labels, and at the figure's edges
_FOOTER_IN = 0.3  # at least, for the derived-metrics note along the bottom edge
FOOTER_COLOUR = "#555555"

# How big a plot's text looks on its page. Matplotlib writes a figure W inches wide as an SVG `width="{72 W}pt"` with
# `viewBox="0 0 {72 W} {72 H}"`: one user unit is one point of the figure, and a font of s points is written
# `font-size: {s}px`, px being those user units. The page sets the image's width to D CSS px
# (base.html.j2: `figure img { width: 100% }`), which scales the viewBox by D / (72 W): the text renders at
#     s * D / (72 W) CSS px.
# (CSS's 1 pt = 96/72 px enters only where an SVG is shown at its own width, D = 96 W: no page here does that.)
# D at a 1,280 px viewport, from base.html.j2: the body holds 1,200 px of content (max-width; its 2 x 1rem padding
# fits beside it); a round's plots sit in a grid of minmax(520px, 1fr) columns with a 1rem gap, so two columns of
# (1,200 - 16) / 2 = 592 px, the scaling and time plots across both (figure.scaling, figure.time); a trend, why or
# power plot is alone across the body. tests/test_plot_legibility.py derives the same widths from the CSS.
SHOWN_PX = {"scaling": 1200.0, "time": 1200.0, "energy": 592.0, "systems": 592.0, "paper": 592.0, "trend": 1200.0, "why": 1200.0,
            "power": 1200.0}
MIN_TEXT_PX = 10.0  # the smallest text a reader is asked to read, in CSS px at that viewport
SMALLEST_PT = 8.0  # the smallest font in any plot (legends, notes on points, the footer): figures are as narrow as it needs


def shown_text_px(points: float, figure_width_in: float, kind: str) -> float:
    """CSS px of a `points` font in a figure `figure_width_in` wide, where the page shows a plot of `kind`."""
    return points * SHOWN_PX[kind] / (72 * figure_width_in)


def widest_figure_in(kind: str) -> float:
    """The widest figure of `kind` whose SMALLEST_PT text still renders at MIN_TEXT_PX on its page."""
    return SMALLEST_PT * SHOWN_PX[kind] / (72 * MIN_TEXT_PX)


# (renderer type, dpi, text, size) -> inches. One font throughout, so the same text measures the same in every figure:
# tick labels and axis titles repeat from figure to figure, and FreeType lays each out at a cost
_MEASURED: dict[tuple[str, float, str, float], tuple[float, float]] = {}


def _text_size_in(renderer, text: str, size: float) -> tuple[float, float]:
    """Width and height, in inches, of one line of text at a font size, as the renderer lays it out."""
    from matplotlib.font_manager import FontProperties

    key = (type(renderer).__name__, float(renderer.dpi), text, float(size))
    found = _MEASURED.get(key)
    if found is None:
        if len(_MEASURED) > 10_000:
            _MEASURED.clear()
        width, height, _ = renderer.get_text_width_height_descent(text, FontProperties(size=size), ismath="$" in text)
        found = _MEASURED[key] = (width / renderer.dpi, height / renderer.dpi)
    return found


def _tick_labels(axis) -> list[str]:
    low, high = sorted(axis.get_view_interval())
    locations = [value for value in axis.get_major_locator()() if low <= value <= high]
    return [label for label in axis.get_major_formatter().format_ticks(locations) if label]


def _label_size(text) -> float:
    return float(matplotlib.font_manager.FontProperties(size=text.get_fontsize()).get_size_in_points())


def _lines_height_in(renderer, text: str, size: float) -> float:
    """Height, in inches, of text of one or more lines, at matplotlib's line spacing (1.2)."""
    lines = text.split("\n")
    return max(_text_size_in(renderer, line, size)[1] for line in lines) * (1 + 1.2 * (len(lines) - 1))


def _wrapped(renderer, text: str, size: float, width_in: float) -> list[str]:
    """`text` on lines no wider than `width_in`, broken at spaces only."""
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        if line and _text_size_in(renderer, candidate, size)[0] > width_in:
            lines.append(line)
            line = word
        else:
            line = candidate
    return [*lines, line]


def _place_footer(fig, renderer, footer: str) -> float:
    """The note along the bottom edge, on as many lines as the figure's width needs; the height it takes, in inches."""
    if not footer:
        return _FOOTER_IN
    width_in, height_in = fig.get_size_inches()
    text = "\n".join(_wrapped(renderer, footer, SMALLEST_PT, width_in * 0.98))
    fig.text(0.01, 0.01, text, fontsize=SMALLEST_PT, color=FOOTER_COLOUR, va="bottom")
    return max(_FOOTER_IN, 0.01 * height_in + _lines_height_in(renderer, text, SMALLEST_PT) + 2 * _PAD_IN)


def fit_layout(fig, footer: str = "") -> None:
    """Margins that hold every tick label, axis label, title and outside legend, measured from their text alone, and
    `footer` along the bottom edge, wrapped to the figure's width. A legend anchored under its axes (upper center,
    `bbox_to_anchor=(0.5, -0.1)`: see legend_under) is moved to just under the axis's label, the margin made for it.

    What `tight_layout` does for these figures, at a quarter of its cost: it lays out every tick of every axis to
    measure the figure, then the save lays them all out again. Axes side by side (the scaling plot) share the height
    and get the space between them that the right one's labels need. A figure with a colour bar keeps tight_layout."""
    axes = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    renderer = fig.canvas.get_renderer()
    width_in, height_in = fig.get_size_inches()
    footer_in = _place_footer(fig, renderer, footer)
    if len(axes) != len(fig.axes) or not axes:  # a colour bar's axes: not on the grid
        fig.tight_layout(rect=(0, footer_in / height_in, 1, 1))
        return
    tick_size = float(matplotlib.rcParams["ytick.labelsize"] if isinstance(matplotlib.rcParams["ytick.labelsize"], (int, float))
                      else matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["ytick.labelsize"]).get_size_in_points())

    def left_need(ax) -> float:
        labels = _tick_labels(ax.yaxis)
        ticks = max((_text_size_in(renderer, label, tick_size)[0] for label in labels), default=0.0)
        label = ax.yaxis.get_label()
        title = _lines_height_in(renderer, label.get_text(), _label_size(label)) + _PAD_IN if label.get_text() else 0.0
        return ticks + title + 3.5 / 72 + 2 * _PAD_IN

    def bottom_need(ax) -> float:
        ticks = max((_text_size_in(renderer, label, tick_size)[1] for label in _tick_labels(ax.xaxis)), default=0.0)
        label = ax.xaxis.get_label()
        title = _lines_height_in(renderer, label.get_text(), _label_size(label)) + _PAD_IN if label.get_text() else 0.0
        return ticks + title + 3.5 / 72 + 2 * _PAD_IN

    def top_need(ax) -> float:
        title = ax.title.get_text()
        lines = title.count("\n") + 1 if title else 0
        return lines * _text_size_in(renderer, "Ag", ax.title.get_fontsize())[1] * 1.25 + (6 / 72 + _PAD_IN if title else _PAD_IN)

    def right_need(ax) -> float:
        # the last x tick label is centred on the axes' right edge: half of it hangs over
        labels = _tick_labels(ax.xaxis)
        overhang = _text_size_in(renderer, labels[-1], tick_size)[0] / 2 + _PAD_IN if labels else _PAD_IN
        legend = ax.get_legend()
        if legend is None or legend.get_bbox_to_anchor().x0 <= ax.get_window_extent(renderer).x1 + 1:
            return overhang
        return max(overhang, legend.get_window_extent(renderer).width / renderer.dpi + 0.25)

    def legend_below(ax):
        legend = ax.get_legend()
        return legend if legend is not None and legend.get_bbox_to_anchor().y1 <= ax.get_window_extent(renderer).y0 + 1 else None

    def below_need(ax) -> float:
        legend = legend_below(ax)
        return legend.get_window_extent(renderer).height / renderer.dpi + _PAD_IN if legend is not None else 0.0

    top = max(top_need(ax) for ax in axes)
    if fig.get_suptitle():
        top += (fig.get_suptitle().count("\n") + 1) * _text_size_in(renderer, "Ag", 11)[1] * 1.25 + _PAD_IN
    left = left_need(axes[0])
    right = right_need(axes[-1])
    bottom = max(bottom_need(ax) + below_need(ax) for ax in axes) + footer_in
    between = max((left_need(ax) for ax in axes[1:]), default=0.0)
    usable = width_in - left - right - between * (len(axes) - 1)
    fig.subplots_adjust(left=left / width_in, right=1 - right / width_in, bottom=bottom / height_in, top=1 - top / height_in,
                        wspace=(between / (usable / len(axes))) if len(axes) > 1 else None)
    for ax in axes:  # its top just under the axis's label, centred on the figure
        legend = legend_below(ax)
        if legend is not None:
            legend.set_bbox_to_anchor((0.5, (bottom - bottom_need(ax)) / height_in), transform=fig.transFigure)


def legend_under(ax, handles: list, labels: list[str], most_columns: int = 3, **options):
    """A legend under the axes, centred on the figure, in as many columns (up to `most_columns`) as the figure's width
    holds: fit_layout puts it under the axis's label. The figure grows by the legend's height: the axes keep theirs."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    for ncols in range(max(1, min(most_columns, len(labels))), 0, -1):
        legend = ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncols=ncols, fontsize=SMALLEST_PT, **options)
        if legend.get_window_extent(renderer).width <= fig.get_size_inches()[0] * renderer.dpi * 0.98:
            break
    width_in, height_in = fig.get_size_inches()
    fig.set_size_inches(width_in, height_in + legend.get_window_extent(renderer).height / renderer.dpi + _PAD_IN)
    return legend


def save_figure(fig, folder: Path, stem: str, formats: tuple[str, ...] = DEFAULT_FORMATS) -> list[Path]:
    """Each format asked for, once: the page shows the SVG (vector, text kept as text) where it is drawn."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{stem}.{suffix}" for suffix in formats]
    # tight_layout() leaves a placeholder layout engine behind, which makes savefig draw the whole figure once more
    # (without rendering) before drawing it for real; the layout is already done
    fig.set_layout_engine(None)
    for path in paths:
        # no date in the files: the same figure gives the same bytes
        fig.savefig(path, dpi=110, metadata={"Software": None} if path.suffix == ".png" else {"Date": None})
    if fig not in _REUSED:
        plt.close(fig)
    return paths


_SCAFFOLDS = threading.local()  # per thread: one figure is not to be drawn from two threads at once
_REUSED: weakref.WeakSet = weakref.WeakSet()  # the figures kept for reuse: not closed after saving


def scaffold(kind: str, figsize: tuple[float, float], ncols: int = 1, sharex: bool = False):
    """`plt.subplots(1, ncols, figsize=..., sharex=...)` for one kind of plot, with the figure reused from the last plot
    of that kind drawn in this thread, emptied back to what a new one holds.

    A new figure costs its Axes and every tick again (a fifth of a plot's drawing: each tick is five artists); the
    same figure keeps them. What it draws is the same to the byte as a new figure's
    (tests/test_analysis.py::test_a_reused_figure_draws_the_same_bytes_as_a_new_one). The figure is not closed after
    saving and is not in pyplot's list of open figures. A colour bar's figure (energy) is always new."""
    kept = _SCAFFOLDS.__dict__.setdefault("figures", {})
    fig = kept.get(kind)
    if fig is None:
        fig, _ = plt.subplots(1, ncols, figsize=figsize, sharex=sharex)
        plt.close(fig)  # out of pyplot's registry, which leaves the figure a bare canvas: it gets its own again
        FigureCanvasAgg(fig)
        kept[kind] = fig
        _REUSED.add(fig)
    else:
        cleared(fig)
        fig.set_size_inches(figsize)
    return fig, (fig.axes[0] if ncols == 1 else fig.axes)


def cleared(fig) -> None:
    """Back to the state of a new figure: no artists, linear scales, limits (0, 1) autoscaled, default margins."""
    from matplotlib.transforms import Bbox

    for text in list(fig.texts):  # the footer and the suptitle
        text.remove()
    for ax in fig.axes:
        for container in list(ax.containers):  # error bars: the container and its lines
            container.remove()
        for artist in [*ax.collections, *ax.lines, *ax.patches, *ax.texts, *ax.images, *ax.artists, *ax.tables]:
            artist.remove()
        if ax.get_legend() is not None:
            ax.get_legend().remove()
        ax.set_title("")
        ax.set_xlabel("")
        ax.set_ylabel("")
        ax.dataLim = Bbox.null()
        ax.ignore_existing_data_limits = True
        ax.set_xscale("linear")  # the default locators and formatters, as a new Axes has
        ax.set_yscale("linear")
        ax.viewLim  # noqa: B018  # settles the autoscaling the scales asked for, before the limits a new Axes has
        ax.set_xlim(0, 1, auto=True)
        ax.set_ylim(0, 1, auto=True)
    # where the last figure's axes were: the layout measures text at the axes' place, and a float's last bit shows
    fig.subplotpars.reset()  # matplotlib's default margins, then the axes moved to them
    fig.subplots_adjust(**fig.subplotpars.to_dict())


def log2_axis(axis, values, most: int = 12) -> None:
    """Powers of two as ticks, labelled as plain counts; at most `most` of them (a narrow axis holds fewer)."""
    low, high = max(min(values), 1), max(values)
    exponents = range(int(np.floor(np.log2(low))), int(np.ceil(np.log2(high))) + 1)
    ticks = [2**e for e in exponents]
    if len(ticks) > most:  # keep labels apart on wide ranges
        ticks = ticks[:: int(np.ceil(len(ticks) / most))]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{int(v):,}"))


def plain_log_axis(axis) -> None:
    """A log axis labelled 1, 2, 5, 10, 20, ... rather than in powers."""
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())
