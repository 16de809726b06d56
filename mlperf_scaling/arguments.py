"""What the command line accepts as an option's value, and how it says no: one line on stderr and exit 2.

argparse prints its usage block and a sentence for every mistake; here the usage is kept for `--help` and a missing
command, and every other mistake (a value that is not a number, a count below one, a choice it does not offer, an
option the command does not have) is one line that names the option and what it takes. Each value is checked by its
type here, while the arguments are parsed, so no command starts work on a value it cannot use.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from typing import NoReturn

PROGRAM = "mlperf-scaling"


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose mistakes are one line (`mlperf-scaling: --accelerators: not a whole number: '1e9'`),
    raised as SystemExit(line) for the caller to print; exit 2."""

    _argv: list[str] | None = None

    def parse_known_args(self, args=None, namespace=None):
        # the words given, so that an option the command does not have can be said with the command's name
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix(PROGRAM).strip()
        if not command and "required: command" in message:  # no command at all: the usage says which there are
            self.print_usage(sys.stderr)
            raise SystemExit(f"{PROGRAM}: name a command (`{PROGRAM} --help` lists them)")
        parser: argparse.ArgumentParser = self
        if not command and self._argv:  # an option no command has is found by the top parser: name the command given
            command = next((word for word in self._argv if word in _commands(self)), "")
            parser = _subparser(self, command) or self
        raise SystemExit(f"{PROGRAM}: {_said(message, command)}{_suggestion(message, parser, self._argv or [])}")


def _subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    for action in parser._actions:  # noqa: SLF001
        if isinstance(action, argparse._SubParsersAction) and command in action.choices:  # noqa: SLF001
            return action.choices[command]
    return None


def _suggestion(message: str, parser: argparse.ArgumentParser, argv: list[str]) -> str:
    """What the user probably meant: the command or option spelt nearly so (`plna`: plan; `--acelerator`: --accelerator),
    or a value with a space that was not quoted (`--deadline 5 minutes`)."""
    message = " ".join(message.split())
    if (choice := _CHOICE.search(message)) is not None:
        choices = [word.strip(" '") for word in choice["choices"].split(",")]
        near = difflib.get_close_matches(choice["value"].strip("'"), choices, n=1, cutoff=0.6)
        return f"; did you mean {near[0]}?" if near else ""
    if not message.startswith("unrecognized arguments:"):
        return ""
    options = [option for option in parser._option_string_actions if option.startswith("--")]  # noqa: SLF001
    for word in message.removeprefix("unrecognized arguments:").split():
        if word.startswith("--"):
            near = difflib.get_close_matches(word.split("=", 1)[0], options, n=1, cutoff=0.7)
            if near:
                return f"; did you mean {near[0]}?"
        elif (quoted := unquoted_value(parser, argv, word)) is not None:
            return f"; a value with a space is quoted: {quoted}"
    return ""


def unquoted_value(parser: argparse.ArgumentParser, argv: list[str], word: str) -> str | None:
    """`--deadline '5 minutes'` when `word` is the second word of an option's value that was not quoted (and the
    option reads the two together), else None."""
    if word not in argv or (at := argv.index(word)) < 2 or not argv[at - 2].startswith("--") or argv[at - 1].startswith("-"):
        return None
    action = parser._option_string_actions.get(argv[at - 2])  # noqa: SLF001
    if action is not None and callable(action.type) and _takes(action.type, f"{argv[at - 1]} {word}"):
        return f"{argv[at - 2]} '{argv[at - 1]} {word}'"
    return None


def subparser(parser: argparse.ArgumentParser, command: str) -> argparse.ArgumentParser | None:
    """The parser of one command."""
    return _subparser(parser, command)


def _takes(kind, text: str) -> bool:
    """Whether an option's type reads the words together (`--deadline '5 minutes'`; not `--round 'v3.1 v4.1'`)."""
    try:
        kind(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False
    return True


def _commands(parser: argparse.ArgumentParser) -> set[str]:
    return {name for action in parser._actions if isinstance(action, argparse._SubParsersAction) for name in action.choices}  # noqa: SLF001


_ARGUMENT = re.compile(r"^argument (?P<option>[^:]+): (?P<said>.*)$", re.DOTALL)
_CHOICE = re.compile(r"invalid choice: (?P<value>'[^']*') \(choose from (?P<choices>.*)\)$", re.DOTALL)


def _said(message: str, command: str) -> str:
    """argparse's sentence, shortened to what the user needs: the option, what it got, what it takes."""
    message = " ".join(message.split())
    found = _ARGUMENT.match(message)
    if found is None:
        if message.startswith("unrecognized arguments:"):
            words = message.removeprefix("unrecognized arguments:").strip()
            of = f" of {command}" if command else ""
            return f"{words}: not an option{of} (`{PROGRAM}{' ' + command if command else ''} --help` lists them)"
        if message.startswith("the following arguments are required:"):
            return f"{command + ' ' if command else ''}needs {message.removeprefix('the following arguments are required:').strip()}"
        return message
    option = found["option"].split("/")[-1] if found["option"].startswith("-") else found["option"]
    said = found["said"]
    if option == "command" and (choice := _CHOICE.search(said)):
        return f"no command {choice['value']} (one of {choice['choices'].replace(chr(39), '')})"
    if (choice := _CHOICE.search(said)) is not None:
        return f"{option}: {choice['value']} is not one of {choice['choices'].replace(chr(39), '')}"
    if said.startswith("not allowed with argument"):
        return f"{option}: not with {said.removeprefix('not allowed with argument').strip()}: give one or the other"
    if said.startswith("expected"):
        return f"{option}: {said.replace('argument', 'value')} (a value that starts with '-' is written {option}=VALUE)"
    return f"{option}: {said}"


# --- the values ---------------------------------------------------------------------------------------------------


# a comma is taken only where it separates thousands (16,384): "2,50" is a decimal comma, refused rather than read as 250
_THOUSANDS = re.compile(r"\s*[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?\s*")


def _without_thousands(text: str, example: str) -> str:
    """The number as Python reads it: thousands separators dropped, where they are ones (16,384 and 16_384)."""
    if "," in text and not _THOUSANDS.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (a comma separates thousands only; decimals take a point, e.g. {example})")
    return text.replace(",", "").replace("_", "")


def _number(text: str) -> float:
    try:
        value = float(_without_thousands(text, "2.5"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r} (e.g. 2.5, 70e9)") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number: {text!r}")
    return value


def positive_number(text: str) -> float:
    """A finite number above zero: parameters, tokens, a sequence length, a batch."""
    value = _number(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above zero: {text!r}")
    return value


def price(text: str) -> float:
    """A price: a finite number, zero or more."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"cannot be negative: {text!r}")
    return value


def fraction(text: str) -> float:
    """An efficiency threshold: strictly between 0 and 1."""
    value = _number(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be between 0 and 1: {text!r}")
    return value


def _whole_number(text: str, example: str) -> int:
    """A whole number, zero or more, whose thousands may be separated (16,384 or 16_384)."""
    cleaned = _without_thousands(text, example).strip()
    if re.fullmatch(r"-\d+", cleaned):
        raise argparse.ArgumentTypeError(f"cannot be negative: {text!r} (e.g. {example})")
    if not re.fullmatch(r"\+?\d+", cleaned):
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r} (e.g. {example})")
    return int(cleaned)


def count(text: str) -> int:
    """A count of accelerators: a whole number, one or more."""
    value = _whole_number(text, "256")
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def row_limit(text: str) -> int:
    """Rows to print: a whole number, 0 for all."""
    return _whole_number(text, "50; 0: all")


def round_name(text: str) -> str:
    """A round as people type it (4.1, v4.1), as the warehouse names it (v4.1)."""
    from mlperf_scaling.rounds import normal_round

    try:
        return normal_round(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


PLAN_ROUNDS = ("best", "latest")


def plan_round(text: str) -> str:
    """A round, or `best` / `latest`."""
    return text.strip().lower() if text.strip().lower() in PLAN_ROUNDS else round_name(text)


def deadline(text: str) -> float:
    """A deadline as minutes: 30m, 90 (minutes), 1.5h, 2h30m, 45s."""
    from mlperf_scaling.tasks.planning.plan import parse_minutes

    if text.strip().startswith("-"):
        raise argparse.ArgumentTypeError(f"a deadline must be longer than zero: {text!r}")
    try:
        return parse_minutes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cron(text: str) -> str:
    """A cron schedule as Prefect reads it (five fields: minute hour day month weekday)."""
    from prefect.client.schemas.schedules import CronSchedule
    from pydantic import ValidationError

    try:
        CronSchedule(cron=text)
    except ValidationError:
        raise argparse.ArgumentTypeError(f"not a cron schedule: {text!r} (five fields, e.g. '0 6 * * *': daily at 06:00)") from None
    return text


def one_round(text: str) -> list[str]:
    """`run --round v4.1`: the rounds to run, as `--rounds` gives them."""
    return [round_name(text)]
