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
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402

from mlperf_scaling.tasks.publish.labels import DEFAULT_FORMATS  # noqa: E402

_PAD_IN = 0.08  # between a label and what it labels, and at the figure's edges
_FOOTER_IN = 0.3  # the derived-metrics note along the bottom edge


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


def fit_layout(fig) -> None:
    """Margins that hold every tick label, axis label, title and outside legend, measured from their text alone.

    What `tight_layout` does for these figures, at a quarter of its cost: it lays out every tick of every axis to
    measure the figure, then the save lays them all out again. Axes side by side (the scaling plot) share the height
    and get the space between them that the right one's labels need. A figure with a colour bar keeps tight_layout."""
    axes = [ax for ax in fig.axes if ax.get_subplotspec() is not None]
    if len(axes) != len(fig.axes) or not axes:  # a colour bar's axes: not on the grid
        fig.tight_layout(rect=(0, 0.04, 1, 1))
        return
    renderer = fig.canvas.get_renderer()
    width_in, height_in = fig.get_size_inches()
    tick_size = float(matplotlib.rcParams["ytick.labelsize"] if isinstance(matplotlib.rcParams["ytick.labelsize"], (int, float))
                      else matplotlib.font_manager.FontProperties(size=matplotlib.rcParams["ytick.labelsize"]).get_size_in_points())

    def left_need(ax) -> float:
        labels = _tick_labels(ax.yaxis)
        ticks = max((_text_size_in(renderer, label, tick_size)[0] for label in labels), default=0.0)
        label = ax.yaxis.get_label()
        title = _text_size_in(renderer, label.get_text(), _label_size(label))[1] + _PAD_IN if label.get_text() else 0.0
        return ticks + title + 3.5 / 72 + 2 * _PAD_IN

    def bottom_need(ax) -> float:
        ticks = max((_text_size_in(renderer, label, tick_size)[1] for label in _tick_labels(ax.xaxis)), default=0.0)
        label = ax.xaxis.get_label()
        title = _text_size_in(renderer, label.get_text(), _label_size(label))[1] + _PAD_IN if label.get_text() else 0.0
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

    top = max(top_need(ax) for ax in axes)
    if fig.get_suptitle():
        top += (fig.get_suptitle().count("\n") + 1) * _text_size_in(renderer, "Ag", 11)[1] * 1.25 + _PAD_IN
    left = left_need(axes[0])
    right = right_need(axes[-1])
    bottom = max(bottom_need(ax) for ax in axes) + _FOOTER_IN
    between = max((left_need(ax) for ax in axes[1:]), default=0.0)
    usable = width_in - left - right - between * (len(axes) - 1)
    fig.subplots_adjust(left=left / width_in, right=1 - right / width_in, bottom=bottom / height_in, top=1 - top / height_in,
                        wspace=(between / (usable / len(axes))) if len(axes) > 1 else None)


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
