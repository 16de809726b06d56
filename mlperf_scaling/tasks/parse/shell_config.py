"""A config file read as the shell reads its assignments: in order, through the files it `source`s, a later one winning.

Only what a launcher's config does unconditionally counts: the bodies of `if`, `case`, loops and functions are not read
(both branches of an `if` setting FP8 would otherwise leave whichever came last), nor lines that only print (`echo`,
`printf`). Each file is parsed once per round (`ShellFiles`), however many configs source it. Nothing here raises on
what a file holds: a line too long to be a setting is passed over, a value is text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

MAX_LINE = 2_000  # a setting's line is short; longer ones (minified JSON, generated data) are not read
_ASSIGN = re.compile(r"^\s*(?:export\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$")
_SOURCE = re.compile(r"^\s*(?:source|\.)\s+(\S.*?)\s*(?:;.*|#.*)?$")
_OPENS = re.compile(r"^\s*(?:if|case|while|until|for|select)\b|^\s*(?:function\s+)?[A-Za-z_][\w-]*\s*\(\)\s*\{?\s*$|^\s*function\s+\w")
_ONE_LINE_BLOCK = re.compile(r"^\s*(?:if|while|until|for)\b.*\b(?:fi|done)\s*;?\s*(?:#.*)?$|^\s*case\b.*\besac\b")
_HEREDOC = re.compile(r"<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?")
_EXPANSION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_HERE = ("$(dirname ${BASH_SOURCE[0]})", "$(dirname \"${BASH_SOURCE[0]}\")", "${BASH_SOURCE%/*}")


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    path: str
    line: int

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Line:
    """One line of a file that the shell runs whatever happens: an assignment, a `source`, or other text."""

    number: int
    text: str
    assigned: tuple[str, str] | None = None  # (name, raw value)
    sourced: str | None = None  # the raw target


_OPENING_WORDS = frozenset({"if", "case", "while", "until", "for", "select", "function"})
_CLOSING_WORDS = frozenset({"fi", "esac", "done", "fi;", "done;", "esac;"})


def top_level_lines(text: str) -> list[Line]:
    """The lines of a shell file outside any `if`, `case`, loop or function body, comments and printing left out."""
    lines: list[Line] = []
    depth = 0
    heredoc: str | None = None  # the word that ends a here-document (`cat << EOF`): its text is no code
    for number, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE:
            continue
        stripped = raw.strip()
        if heredoc is not None:
            heredoc = None if stripped == heredoc else heredoc
            continue
        if not stripped or stripped[0] == "#":
            continue
        if "<<" in raw and (opened := _HEREDOC.search(raw)) is not None:
            heredoc = opened.group(1)
            continue
        word = stripped.split(None, 1)[0]
        if word in _OPENING_WORDS or ("()" in stripped and _OPENS.match(raw)):
            if not _ONE_LINE_BLOCK.match(raw):
                depth += 1
            continue
        if word in _CLOSING_WORDS or stripped[0] == "}":
            depth = max(depth - 1, 0)
            continue
        if depth or word in ("echo", "printf"):
            continue
        if word in ("source", "."):
            sourced = _SOURCE.match(raw)
            lines.append(Line(number, raw, None, sourced.group(1) if sourced else None))
            continue
        assigned = _ASSIGN.match(raw) if "=" in stripped else None
        lines.append(Line(number, raw, assigned.groups() if assigned else None))  # type: ignore[arg-type]
    return lines


def unquote(value: str) -> str:
    """A shell word's text: quotes taken off, a trailing comment and `;` dropped."""
    if not any(mark in value for mark in "\"'#;"):
        return value.strip()
    out: list[str] = []
    quote: str | None = None
    for char in value.strip():
        if quote is None and char == "#" and (not out or out[-1].isspace()):
            break
        if quote is None and char == ";":
            break  # `export A=1; export B=2`: the first assignment's value ends here
        if char in "\"'" and quote in (None, char):
            quote = None if quote == char else char
            continue
        out.append(char)
    return "".join(out).strip()


def expand(value: str, variables: dict[str, Setting], folder: str) -> str:
    """`${NAME}`, `${NAME:-default}` and `$NAME` from what is set so far; the config's own folder for its dirname."""
    for here in _HERE:
        value = value.replace(here, folder)

    def one(match: re.Match) -> str:
        known = variables.get(match.group(1) or match.group(3))
        if known is not None and known.value != "":
            return known.value
        return match.group(2) or ""

    return _EXPANSION.sub(one, value)


def _without_here(text: str) -> str:
    for here in _HERE:
        text = text.replace(here, "")
    return text


class ShellFiles:
    """A round's implementation files, each parsed once, and the configs read through them."""

    def __init__(self, files: dict[str, str]):
        self.files = files
        self._lines: dict[str, list[Line]] = {}
        self._by_name: dict[str, list[str]] = {}
        for path in files:
            self._by_name.setdefault(path.rsplit("/", 1)[-1], []).append(path)

    def lines(self, path: str) -> list[Line]:
        if path not in self._lines:
            self._lines[path] = top_level_lines(self.files[path])
        return self._lines[path]

    def lookup(self, folder: str, target: str, roots: tuple[str, ...]) -> str | None:
        """The file a `source` line names: beside the config, else in its own implementation, else in its benchmark's
        folder (v4.1 NVIDIA's eos LoRA configs source their own configs/config_common.sh, not b200_preview's)."""
        name = PurePosixPath(target).name
        if f"{folder}/{name}" in self.files:
            return f"{folder}/{name}"
        for root in roots:
            found = sorted(path for path in self._by_name.get(name, ()) if path.startswith(root + "/"))
            if found:
                return found[0]
        return None

    def read(self, path: str, roots: tuple[str, ...]) -> tuple[dict[str, Setting], list[str]]:
        """The variables a config leaves set, through the files it sources (roots: its implementation's folder, then its
        benchmark's, where a sourced file is looked for); and the sourced files that are not there (Lambda's GB300 config
        sources a GB200 one it did not publish)."""
        variables: dict[str, Setting] = {}
        absent: list[str] = []

        def walk(current: str, depth: int, seen: frozenset[str]) -> None:
            folder = current.rsplit("/", 1)[0]
            for line in self.lines(current):
                if line.sourced is not None:
                    target_text = expand(unquote(line.sourced), variables, folder)
                    target = self.lookup(folder, target_text, roots)
                    if target is not None and target not in seen and depth < 6:
                        walk(target, depth + 1, seen | {target})
                    elif target is None and "$" not in _without_here(line.sourced):
                        absent.append(f"{current}:{line.number} sources {PurePosixPath(unquote(line.sourced)).name}, which is not there")
                elif line.assigned is not None:
                    name, raw = line.assigned
                    variables[name] = Setting(name, expand(unquote(raw), variables, folder), current, line.number)

        walk(path, 0, frozenset({path}))
        return variables, absent

    def sourced_names(self, paths: list[str]) -> set[str]:
        """The file names these files `source` (config_fp8.sh): settings shared, not a system's."""
        return {PurePosixPath(unquote(line.sourced)).name for path in paths for line in self.lines(path) if line.sourced is not None}
