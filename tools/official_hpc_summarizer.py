"""Runs MLCommons' result summarizer over one extracted MLPerf HPC round, package by package, and writes what it prints
as official_hpc_strong_vX.Y.csv and official_hpc_weak_vX.Y.csv (the format of ../shared/mlperf/official).

Run by tools/published_rounds.py (`official-hpc`) in a throwaway environment (pandas, numpy, pyyaml, scipy and the
pinned mlperf-logging); it imports nothing of this project. Each package is summarized on a copy of itself: the
summarizer's RCP step rewrites scaling.json after it scores (notes/hpc_design.md, finding 4).
Usage: python official_hpc_summarizer.py ROUND_FOLDER RULESET OUT_DIR VERSION
"""

import contextlib
import io
import os
import shutil
import sys
import tempfile

import pandas as pd
from mlperf_logging.result_summarizer import result_summarizer as summarizer


def main(root: str, ruleset: str, out_dir: str, version: str) -> None:
    strong, weak = [], []
    for org in sorted(os.listdir(root)):
        folder = os.path.join(root, org)
        if not os.path.isdir(os.path.join(folder, "results")):
            continue
        with tempfile.TemporaryDirectory() as work:
            copy = shutil.copytree(folder, os.path.join(work, org))
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    s, w, _, _ = summarizer.summarize_results(copy, "hpc", ruleset)
            except Exception as exc:  # noqa: BLE001 - the summarizer stops on a package; say so and go on
                print(f"{org}: the summarizer raised {exc!r}", file=sys.stderr)
                continue
        strong += [s] if len(s) else []
        weak += [w] if len(w) else []
    os.makedirs(out_dir, exist_ok=True)
    for mode, frames in (("strong", strong), ("weak", weak)):
        path = os.path.join(out_dir, f"official_hpc_{mode}_{version}.csv")
        (pd.concat(frames) if frames else pd.DataFrame()).to_csv(path, index=False)
        print(f"{path}: {sum(len(f) for f in frames)} rows")


if __name__ == "__main__":
    main(*sys.argv[1:5])
