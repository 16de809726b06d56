"""Tables that fit the terminal they are printed in: every number whole, or a note saying what was left out.

Rich squeezes a table that is too wide by cutting cells to "…", which turns 1,024 into "1,…". Here a table is laid out
for the console's width before rich sees it: headers wrap onto two lines where their numbers are narrower, text columns
wrap, and when the numbers still do not fit, the columns the caller ranked least needed go (and a note names them);
when even the needed ones do not fit, every row becomes a block of "column  value" lines. A rendered table is checked
for a cut cell before it is printed, so the width model can be wrong without a number being lost.
"""

from __future__ import annotations

import datetime
import io
import math
import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal, TextIO, cast

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from mlperf_scaling.wrapping import pieces, wrap_at_separators

# a text column is not squeezed below this: narrower, a sentence reads one word a line
_TEXT_MIN = 18
_GAP = 2  # rich's padding of (0, 1) between two columns of a box-less table
ELLIPSIS = "…"


@dataclass(frozen=True)
class Column:
    name: str
    text: bool = False  # left-aligned and may wrap; otherwise a number: right-aligned, never wrapped or cut
    drop: int | None = None  # when the table is too wide: 1 goes first, then 2, ...; None is never left out


def format_value(value: Any) -> str:
    """A cell as a person reads it: integers whole with thousands separators, other numbers with six significant
    digits at most and never in scientific notation above 0.01, no trailing zeros."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | Decimal):
        number = float(value)
        if not math.isfinite(number):
            return str(number)
        if number.is_integer() and abs(number) < 1e15:
            return f"{int(number):,}"
        if 0 < abs(number) < 0.01:
            return f"{number:.3g}"
        whole_digits = len(str(int(abs(number)))) if abs(number) >= 1 else 0
        text = f"{number:,.{min(4, max(0, 6 - whole_digits))}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, list | tuple):
        return ", ".join(format_value(item) for item in value)
    return str(value)


def _header(name: str, width: int) -> str:
    """The header on as many lines as its column's cells need, broken at spaces only."""
    lines: list[str] = []
    for word in name.split(" "):
        if lines and cell_len(lines[-1]) + 1 + cell_len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


@dataclass(frozen=True)
class _Laid:
    column: Column
    header: str
    width: int  # the narrowest it may be drawn


def _lay_out(columns: Sequence[Column], rows: Sequence[Sequence[str]]) -> list[_Laid]:
    laid = []
    for index, column in enumerate(columns):
        cells = [row[index] for row in rows]
        if column.text:
            natural = max((cell_len(line) for cell in cells for line in cell.splitlines() or [""]), default=0)
            # a system name is one long "word": it may fold, as text, where a number may not
            width = max(min(natural, _TEXT_MIN), min(_longest_word(column.name), _TEXT_MIN), 1)
        else:
            width = max((cell_len(cell) for cell in cells), default=0)
            width = max(width, _longest_word(column.name), 1)
        laid.append(_Laid(column, _header(column.name, width), width))
    return laid


class BreakableText:
    """A text cell that wraps at spaces and after separators (`_`, `-`, `.`, `/`), never inside a token: rich wraps at
    spaces only, and folds a system name at whatever cell the column ends. A token wider than the column still folds."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = self.text.splitlines() or [""]
        longest_piece = max((cell_len(piece.rstrip()) for line in lines for piece in pieces(line)), default=0)
        widest = max(cell_len(line) for line in lines)
        return Measurement(min(longest_piece, options.max_width), min(widest, options.max_width))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for line in self.text.splitlines() or [""]:
            for wrapped in wrap_at_separators(line, options.max_width):
                yield Text(wrapped, overflow="fold")


def _table(laid: Sequence[_Laid], rows: Sequence[Sequence[str]], keep: Sequence[int], title: str | None) -> Table:
    table = Table(title=title, title_justify="left", box=None, show_edge=False, pad_edge=False, header_style="bold")
    for index in keep:
        column = laid[index]
        justify: Literal["left", "right"] = "left" if column.column.text else "right"
        table.add_column(column.header, justify=justify, no_wrap=not column.column.text,
                         overflow="fold" if column.column.text else "ellipsis",
                         min_width=column.width if column.column.text else None)
    for row in rows:
        table.add_row(*(BreakableText(row[index]) if laid[index].column.text else row[index] for index in keep))
    return table


def _renders_whole(table: Table, width: int, rows: Sequence[Sequence[str]]) -> bool:
    """No cell cut to "…": rich adds the ellipsis only where it had to cut."""
    probe = Console(width=width, file=None, record=False, color_system=None, highlight=False, force_terminal=False)
    with probe.capture() as captured:
        probe.print(table)
    shown = captured.get().count(ELLIPSIS)
    given = sum(cell.count(ELLIPSIS) for row in rows for cell in row)
    return shown <= given + (table.title.count(ELLIPSIS) if isinstance(table.title, str) else 0)


def records(columns: Sequence[Column], rows: Sequence[Sequence[str]], title: str | None = None) -> RenderableType:
    """One block per row, a line per column: what a table becomes when its numbers cannot sit side by side."""
    blocks: list[RenderableType] = [Text(title, style="italic")] if title else []
    # a number keeps its line whole: the names fold first
    widest_number = max((cell_len(cell) for row in rows for column, cell in zip(columns, row, strict=True) if not column.text), default=0)
    for number, row in enumerate(rows, start=1):
        block = Table.grid(padding=(0, 2))
        block.add_column(style="bold", overflow="fold")
        block.add_column(overflow="fold", min_width=widest_number or None)
        for column, cell in zip(columns, row, strict=True):
            block.add_row(column.name, BreakableText(cell) if column.text else Text(cell, no_wrap=True, overflow="ellipsis"))
        blocks.extend([Text(f"[{number}]", style="dim"), block])
    return Group(*blocks)


def fit(columns: Sequence[Column], rows: Sequence[Sequence[Any]], width: int, title: str | None = None,
        see_all: str = "--format csv writes every column") -> list[RenderableType]:
    """The table (and a note when columns were left out), or its rows as blocks, for a console `width` wide."""
    cells = [[value if isinstance(value, str) else format_value(value) for value in row] for row in rows]
    laid = _lay_out(columns, cells)
    # a column with nothing in it says nothing: it goes first, without a note
    keep = [i for i, column in enumerate(laid) if column.column.drop is None or any(row[i] for row in cells)]
    droppable = sorted((laid[i].column.drop or 0, -i) for i in keep if laid[i].column.drop is not None)
    left_out: list[str] = []
    while True:
        needed = sum(laid[i].width for i in keep) + _GAP * (len(keep) - 1)
        if needed <= width:
            table = _table(laid, cells, keep, title)
            if _renders_whole(table, width, cells):
                if not left_out:
                    return [table]
                return [table, Text(f"Left out to fit {width} columns: {', '.join(left_out)} ({see_all}).", style="dim")]
        if not droppable:
            break
        index = -droppable.pop(0)[1]
        keep.remove(index)
        left_out.append(columns[index].name)
    return [Text(f"{len(columns)} columns do not fit {width} columns side by side: one block per row ({see_all}).", style="dim"),
            records(columns, cells, title)]


def print_fitted(console: Console, columns: Sequence[Column], rows: Sequence[Sequence[Any]], title: str | None = None,
                 see_all: str = "--format csv writes every column") -> None:
    for renderable in fit(columns, rows, console.width, title, see_all):
        console.print(renderable)


_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$")


class TrimmedLines(io.TextIOBase):
    """A text stream that drops the blanks rich pads a line with (a table's cells, a centred title) before its end, so a
    table piped to a file or compared in a diff carries no trailing spaces; colour codes at the line's end are kept."""

    def __init__(self, target: TextIO) -> None:
        self._target = target
        self._pending = ""

    def write(self, text: str) -> int:
        lines = (self._pending + text).split("\n")
        self._pending = lines.pop()
        if lines:
            self._target.write("".join(_TRAILING_BLANKS.sub(r"\1", line) + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._pending:
            self._target.write(_TRAILING_BLANKS.sub(r"\1", self._pending))
            self._pending = ""
        self._target.flush()

    def isatty(self) -> bool:
        return self._target.isatty()

    def fileno(self) -> int:
        return self._target.fileno()

    def writable(self) -> bool:
        return True


class _QuietOnClosedPipe(Console):
    """rich exits 1 when its reader goes away (`query ... | head`); the reader has what it asked for: `main` ends well."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise BrokenPipeError


def command_console() -> Console:
    """The console a command prints to."""
    # a pipe or a file gets whole lines, however long the paths in them, and none ends in the blanks rich pads with
    return _QuietOnClosedPipe(file=cast(TextIO, TrimmedLines(sys.stdout)),
                              width=None if sys.stdout.isatty() else max(shutil.get_terminal_size().columns, 200), highlight=False)
