"""Runs MLCommons' result summarizer, as it stood on a given day, over one extracted round: one CSV row per
(submitter folder, system folder, benchmark folder), in the columns of ../shared/mlperf/official.

Run by tools/published_rounds.py in a throwaway environment (pandas, numpy, pyyaml, scipy) with PYTHONPATH at a copy
of mlcommons/logging's `mlperf_logging` package from that day; it imports nothing of this project.
Usage: python official_summarizer.py ROUND_FOLDER ROUND RULESET OUT_CSV
"""

import contextlib
import csv
import glob
import io
import json
import os
import sys

from mlperf_logging.result_summarizer import result_summarizer as summarizer

COLUMNS = ["round", "submitter_folder", "system_folder", "benchmark", "accelerators", "time_to_train_min", "scaling_factor",
           "n_result_files", "n_invalid_runs", "invalid_runs", "status"]


def rows_of(root: str, round_name: str, ruleset: str):
    for org in sorted(os.listdir(root)):
        folder = os.path.join(root, org)
        if not (os.path.isdir(os.path.join(folder, "systems")) and os.path.isdir(os.path.join(folder, "results"))):
            continue
        for system_folder in sorted(summarizer._get_sub_folders(os.path.join(folder, "results"))):
            system = os.path.basename(system_folder)
            try:
                desc = _system_description(folder, system)
            except (OSError, ValueError, KeyError) as exc:  # the summarizer prints these and skips the system
                print(f"skipped {org}/{system}: {exc!r}", file=sys.stderr)
                continue
            try:
                accelerators = int(desc["accelerators_per_node"]) * int(desc["number_of_nodes"])
            except (KeyError, TypeError, ValueError):
                accelerators = ""
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    scores = _scores(desc, system_folder, ruleset)
            except Exception as exc:  # noqa: BLE001 - the summarizer stops on this system; say so in its rows
                for benchmark_folder in sorted(summarizer._get_sub_folders(system_folder)):
                    yield [round_name, org, system, os.path.basename(benchmark_folder), accelerators, "", "", "", "", "", f"summarizer raised {exc!r}"]
                continue
            for benchmark_folder in sorted(summarizer._get_sub_folders(system_folder)):
                benchmark = os.path.basename(benchmark_folder)
                factor = 1.0
                scaling = os.path.join(benchmark_folder, "scaling.json")
                if os.path.exists(scaling):
                    with open(scaling) as handle:
                        factor = json.load(handle)["scaling_factor"]
                # the summarizer prints '<reason> in <file>' for each run it drops
                invalid = sorted(
                    os.path.basename(line.rsplit(" in ", 1)[1]) for line in printed.getvalue().splitlines()
                    if " in " in line and f"/{benchmark}/" in line and not line.startswith(("NOTICE", "CRITICAL", "**"))
                )
                score = scores.get(summarizer._benchmark_alias(benchmark))
                yield [round_name, org, system, benchmark, accelerators, "" if score is None else repr(float(score)), factor,
                       len(glob.glob(f"{benchmark_folder}/result_*.txt")), len(invalid), ";".join(invalid),
                       "scored" if score is not None else "not scored"]


def _system_description(folder: str, system: str) -> dict:
    if hasattr(summarizer, "_load_system_desc"):
        return summarizer._load_system_desc(folder, system)
    # the summarizers of 2020-2021 read the file inline and skip a system that lacks one of these fields
    with open(os.path.join(folder, "systems", f"{system}.json")) as handle:
        desc = json.load(handle)
    for needed in ("submitter", "system_name", "host_processor_model_name", "host_processor_core_count", "accelerator_model_name",
                   "accelerators_per_node", "framework"):
        if needed not in desc:
            raise KeyError(f"{needed!r} field missing")
    return desc


def _scores(desc: dict, system_folder: str, ruleset: str) -> dict:
    if hasattr(summarizer, "_compute_strong_scaling_scores"):
        result = summarizer._compute_strong_scaling_scores(desc, system_folder, "training", ruleset)
        return result[0] if isinstance(result, tuple) else result  # (scores, power scores) from v4.0 on
    # the summarizers of 2020-2021 score inline, as here, and print two decimals: the unrounded value is kept
    scores = {}
    for benchmark_folder in summarizer._get_sub_folders(system_folder):
        benchmark = summarizer._benchmark_alias(os.path.basename(benchmark_folder))
        times, dropped = [], 0
        for result_file in glob.glob(f"{benchmark_folder}/result_*.txt"):
            time = summarizer._read_mlperf_score(result_file, ruleset)
            if time is None:
                print(f"dropped in {result_file}")
                dropped += 1
            else:
                times.append(time)
        most = 4 if benchmark == "unet3d" else 1
        if dropped <= most:
            try:
                scores[benchmark] = summarizer._compute_olympic_average(times, dropped, most)
            except TypeError:  # the 2020 signature: one run dropped at most
                scores[benchmark] = summarizer._compute_olympic_average(times, dropped)
    return scores


def main() -> None:
    root, round_name, ruleset, out = sys.argv[1:5]
    rows = list(rows_of(root, round_name, ruleset))
    with open(out, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows(rows)
    print(f"{round_name}: {len(rows)} rows, {sum(row[-1] == 'scored' for row in rows)} scored")


if __name__ == "__main__":
    main()
