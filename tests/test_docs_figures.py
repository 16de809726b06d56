"""The manual's figures cannot go stale: each figure a page quotes from a command sits beside a marker naming the
command, and this runs every such command on the shipped rounds and holds the page to what it prints now.

Two markers, HTML comments that the built site does not show:

    <!-- output of: mlperf-scaling ARGS -->            before a fenced block: every line of the block is in the output
    <!-- figures "A", "B" from: mlperf-scaling ARGS --> after a paragraph or table: each figure is in it and in the output

The output is read with its blanks normalised (a terminal wraps long lines). When a figure changes, this test says
which and prints what the command prints now: update the page from it.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import pytest

from mlperf_scaling.cli import main

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
OUTPUT_OF = re.compile(r"<!--\s*output of:\s*mlperf-scaling\s+(?P<args>.*?)\s*-->\s*\n```[a-z]*\n(?P<block>.*?)\n```", re.DOTALL)
FIGURES = re.compile(r"<!--\s*figures?\s+(?P<figures>(?:\"[^\"]*\"\s*,?\s*)+)\s*from:\s*mlperf-scaling\s+(?P<args>.*?)\s*-->", re.DOTALL)
BEFORE = 1500  # characters before a figures marker that hold the figures it names (its paragraph or table)


def _flat(text: str) -> str:
    return " ".join(text.split())


def checks() -> list[tuple[str, str, list[str], str]]:
    """(page, the command's arguments, the figures, where on the page) of every marker of the manual."""
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in OUTPUT_OF.finditer(text):
            lines = [line for line in match["block"].splitlines() if line.strip()]
            found.append((page.name, match["args"], lines, ""))
        for match in FIGURES.finditer(text):
            figures = re.findall(r"\"([^\"]*)\"", match["figures"])
            found.append((page.name, match["args"], figures, text[max(0, match.start() - BEFORE):match.start()]))
    return found


CHECKS = checks()


def test_the_manual_has_its_figures_marked():
    pages = {page for page, *_ in CHECKS}
    assert {"commands.md", "method.md", "reports.md"} <= pages and len(CHECKS) >= 6


_OUTPUTS: dict[str, str] = {}


def _output(args: str, warehouse: Path) -> str:
    if args not in _OUTPUTS:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main([*shlex.split(args), "--warehouse", str(warehouse)])
        assert code == 0, f"mlperf-scaling {args} failed ({code})"
        _OUTPUTS[args] = _flat(out.getvalue())
    return _OUTPUTS[args]


def _printed(figure: str, output: str) -> bool:
    """The figure as a whole in the output: "15.7 %" is not found in "115.7 %", nor "46 of 50" in "146 of 500"."""
    return re.search(r"(?<![\d.,])" + re.escape(figure) + r"(?!\d|[.,]\d)", output) is not None


@pytest.mark.parametrize(("page", "args", "figures", "context"), CHECKS, ids=[f"{c[0]}: {c[1][:60]}" for c in CHECKS])
def test_a_figure_of_the_manual_is_what_the_command_prints(page, args, figures, context, shipped_warehouse):
    output = _output(args, shipped_warehouse)
    # in CSV a comma separates fields, not thousands
    printed = output.replace(",", " ") if "--format csv" in args else output
    stale = [figure for figure in figures if not _printed(_flat(figure), printed)]
    assert stale == [], f"{page}: `mlperf-scaling {args}` no longer prints {stale}; it prints:\n{output}"
    if context:  # a figure the marker names is on the page it marks, not only in the comment
        assert [figure for figure in figures if _flat(figure) not in _flat(context)] == [], f"{page}: {args}"


def test_the_readme_and_the_manuals_index_list_every_page():
    pages = {page.name for page in (ROOT / "docs").glob("*.md")} - {"index.md"}
    readme = set(re.findall(r"\]\(docs/([a-z_]+\.md)", (ROOT / "README.md").read_text(encoding="utf-8")))
    index = set(re.findall(r"\]\(([a-z_]+\.md)", (ROOT / "docs" / "index.md").read_text(encoding="utf-8")))
    navigation = set(re.findall(r":\s*([a-z_]+\.md)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8")))
    assert pages - readme == set() and pages - index == set() and pages - navigation == set()


def test_a_figure_is_found_whole_only():
    assert _printed("15.7 %", "median error 15.7 %, held") and not _printed("15.7 %", "median error 115.7 %")
    assert _printed("46 of 50", "held for 46 of 50 runs") and not _printed("46 of 50", "146 of 500") and not _printed("46 of 50", "46 of 50.5")
    assert _printed("35,154,786", "[35,154,786, 1]") and not _printed("35,154,786", "135,154,786")
    assert _printed("329", "amdahl 329 7.9") and not _printed("329", "1,329")
