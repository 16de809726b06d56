"""Hold each result's precision, as the warehouse has it, to a list read by hand from the submitters' own files.

    python tools/check_hand_read.py HAND.tsv [HAND.tsv ...] [--warehouse data/mlperf.duckdb]

HAND.tsv is tab-separated with a header holding at least round, submitter, system, benchmark and precision (fp32, tf32,
fp16, bfloat16, fp8, nvfp4, mxfp4, int8; MXFP8 is fp8; `not stated` where the files do not say), and optionally guess
(the reader's expert guess where the files do not say) and evidence. The rounds are loaded first, e.g. from archives
built by `tools/published_rounds.py archive` (a round's results and its configs companion).

Prints, per round, how many stated readings agree with `result_context.precision`, each disagreement with both
sides' evidence, and apart from them the results the files do not state (held to the reader's guess, not counted).
Exit 1 when fewer than 95 % of the stated readings agree, the share the issue asks for.
"""

from __future__ import annotations

import argparse
import csv
import signal
import sys
from collections import defaultdict
from pathlib import Path

from mlperf_scaling.warehouse.connection import connect

# spellings a reader may use, in the rules' vocabulary the warehouse keeps
SAME = {"bf16": "bfloat16", "mxfp8": "fp8", "fp8_ds": "fp8", "fp4": "nvfp4", "half": "fp16", "float16": "fp16", "float32": "fp32"}
NOT_STATED = ("not stated", "not read", "")
TARGET = 0.95


def _word(value: str | None) -> str:
    word = (value or "").strip().lower().split(" ")[0] if (value or "").strip().lower() not in NOT_STATED else ""
    return SAME.get(word, word)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("hand", nargs="+", type=Path)
    parser.add_argument("--warehouse", default="data/mlperf.duckdb")
    args = parser.parse_args(argv)
    with connect(args.warehouse, read_only=True) as connection:
        rows = connection.execute("select round, submitter, system, benchmark, precision, precision_source, precision_evidence "
                                  "from result_context").fetchall()
    ours = {tuple(row[:4]): row[4:] for row in rows}
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    unstated: list[str] = []
    differing: list[str] = []
    unscored: list[str] = []  # not in result_context: no score to label (CPU-only systems, results not scored)
    for path in args.hand:
        with path.open(newline="") as handle:
            for hand in csv.DictReader(handle, delimiter="\t"):
                key = (hand["round"], hand["submitter"], hand["system"], hand["benchmark"])
                precision, source, evidence = ours.get(key, (None, None, None))
                said, guess = _word(hand.get("precision")), _word(hand.get("guess"))
                line = (f"{' '.join(key)}: hand {hand.get('precision') or '-'}{f' (guess {guess})' if guess else ''}, "
                        f"ours {precision or '-'} ({source or 'no row'}) | hand: {(hand.get('evidence') or '')[:110]} | ours: {(evidence or '')[:110]}")
                if key not in ours:
                    unscored.append("  " + " ".join(key))
                    continue
                if not said:
                    unstated.append(("  same as the guess  " if guess and guess == precision else "  " ) + line)
                    continue
                tally[key[0]][1] += 1
                if said == precision:
                    tally[key[0]][0] += 1
                else:
                    differing.append("  " + line)
    agreed = sum(a for a, _ in tally.values())
    stated = sum(n for _, n in tally.values())
    for round_name, (a, n) in sorted(tally.items()):
        print(f"{round_name}: {a} of {n} stated readings agree ({a / n:.1%})")
    print(f"all: {agreed} of {stated} ({agreed / max(stated, 1):.1%}); {len(unstated)} not stated in the files, {len(unscored)} not in result_context")
    if differing:
        print("disagreements:", *differing, sep="\n")
    if unstated:
        print("not stated in the files (not counted):", *unstated, sep="\n")
    if unscored:
        print("not in result_context (not counted):", *unscored, sep="\n")
    return 0 if stated and agreed / stated >= TARGET else 1


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly
    sys.exit(main())
