"""Matplotlib's text layout, computed once per distinct text and kept.

`Text._get_layout` (the box, lines and offsets of a text, before it is placed) is pure Python and runs twice for every
text drawn, once to measure it for the layout and once to draw it: a fifth of a figure's drawing here, for a few hundred
distinct strings (tick labels above all) repeated over hundreds of figures. Its result depends only on what the key below
holds, not on where the text stands, so the same text gives the same layout, and the figures the same bytes
(tests/test_analysis.py::test_a_figure_draws_the_same_bytes_with_the_layout_kept_or_not). Texts that wrap or turn with
their transform depend on more, and are laid out as before.
"""

from __future__ import annotations

import threading
from typing import Any

from matplotlib import rcParams
from matplotlib.text import Text
from matplotlib.transforms import Bbox

_ORIGINAL = Text._get_layout  # type: ignore[attr-defined]  # private, and what is kept here
_KEPT: dict[tuple, tuple[Any, list, Any]] = {}
_LOCK = threading.Lock()
# what a family name resolves to: a style that changes these draws with other fonts, and gets other layouts
_FONT_SETTINGS = ("font.family", "font.serif", "font.sans-serif", "font.monospace", "font.cursive", "font.fantasy", "mathtext.fontset")
_read_setting = dict.__getitem__.__get__(rcParams)  # rcParams' own lookup checks for deprecated names first: 25,000 times a run
_MAX_KEPT = 20_000  # about 2 kB each: a bound for a long-lived process, far above one main job's distinct texts


def _key(text: Any, renderer: Any) -> tuple | None:
    if text.get_wrap() or text.get_transform_rotates_text():
        return None
    font = text.get_fontproperties()
    return (
        type(renderer), getattr(renderer, "dpi", None), text.get_figure(root=True).dpi,
        text.get_text(), text.get_usetex(), text.get_parse_math(), text.get_linespacing(),
        text._get_multialignment(), text.get_rotation(), text.get_rotation_mode(),
        text.get_horizontalalignment(), text.get_verticalalignment(),
        tuple(font.get_family()), font.get_style(), font.get_variant(), font.get_weight(), font.get_stretch(),
        font.get_size_in_points(), font.get_file(), font.get_math_fontfamily(),
        *(tuple(value) if isinstance(value, list) else value for value in map(_read_setting, _FONT_SETTINGS)),
    )


def _kept_layout(self: Any, renderer: Any):
    key = _key(self, renderer)
    if key is None:
        return _ORIGINAL(self, renderer)
    found = _KEPT.get(key)
    if found is None:
        bbox, lines, corner = _ORIGINAL(self, renderer)
        found = (bbox.get_points().copy(), lines, corner)  # the corners, not x0 + width: the same floats
        with _LOCK:
            if len(_KEPT) >= _MAX_KEPT:
                _KEPT.clear()
            _KEPT[key] = found
    points, lines, corner = found
    # a new box and list each time: callers may change what they are given, never what is kept
    return Bbox(points.copy()), list(lines), corner


def keep_text_layouts(enabled: bool = True) -> None:
    """Lay out each distinct text once (`enabled`), or every time as matplotlib does (tests compare the two)."""
    Text._get_layout = _kept_layout if enabled else _ORIGINAL  # type: ignore[attr-defined]
    if not enabled:
        _KEPT.clear()
