"""Names broken onto lines where a person would break them: after a separator (`_`, `-`, `.`, `/`) or at a space, never
inside a token. A system name (`eos-dfw_n1452_ngc24.04_nemo`) has no spaces, so a plain word wrap either cuts it
anywhere or leaves it whole and too wide."""

from __future__ import annotations

import re

from rich.cells import cell_len

_PIECE = re.compile(r"[^_\-./\s]*[_\-./\s]?")
SEPARATORS = "_-./"


def pieces(text: str) -> list[str]:
    """The text cut after every separator and space: joined, they are the text again."""
    return [piece for piece in _PIECE.findall(text) if piece]


def wrap_at_separators(text: str, width: int, indent: str = "") -> list[str]:
    """Lines of at most `width` cells (a token longer than that gets a line of its own); every later line starts with
    `indent`; the blanks at a break are dropped, nothing else."""
    lines: list[str] = []
    line = ""
    for piece in pieces(text):
        if line.strip() and cell_len(line) + cell_len(piece.rstrip()) > width:
            lines.append(line.rstrip())
            line = indent
        line += piece
    lines.append(line.rstrip())
    return lines
