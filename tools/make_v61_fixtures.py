"""Build tests/fixtures/rounds/training_results_v6.1/: MLPerf Training v6.1's two new benchmarks, from real logs of
the nearest shipped benchmark, reshaped to the 6.1.0 rules. No v6.1 result is public yet; these fixtures let the
pipeline be tested on the round's first day.

    python tools/make_v61_fixtures.py [MIRROR]    (default ../shared/mlperf)

What is real and what is reshaped, per run (the fixture's README says the same):
* real: the system JSON, the submitter and system folders, and every timestamp that scores a run (init_start,
  init_stop, run_start, run_stop), from the shipped v5.1 logs of
  - qwen35_397b_grpo (LLM post-training with GRPO, 3 runs) <- llama31_405b (LLM pretraining, 3 runs): NVIDIA
    tyche_ngpu512_ngc25.09_nemo (512 GB200) and hsg_ngpu2560_ngc25.09_nemo (2,560 GB200);
  - dlrmv4 (HSTU recommender, 10 runs) <- dlrm_dcnv2 (10 runs): Dell 1xXE9680Lx8B200-SXM-180GB (8 B200) and
    2xXE9680Lx8B200-SXM-180GB (16 B200).
* reshaped, as mlperf-logging 4.1.68's compliance_checker/training_6.1.0 requires (closed_qwen35_397b_grpo.yaml,
  closed_dlrmv4.yaml, common.yaml): the header keys and their values (precision, parallelism, micro-batch,
  config_filename, the optimiser, GRPO's prompts x 16 generations = global_batch_size in sequences), the evaluation
  schedule in samples_count (GRPO: the first at GBS x ceil(2.5 + 3840 / GBS), then every step; dlrmv4: a grid of
  ceil(0.001 x 2,290,835,423 / GBS) x GBS samples from block 25/31), the quality (pass@4 > 0.69, AUC >= 0.75 at the
  last evaluation), and convergence points the 6.1.0 RCPs accept. The evaluations are spread evenly over the real
  run's training time. Where the RCP checker normalises a score (a run set that converged faster than the reference),
  its scaling.json is written as the package checker writes it for a submitter.

Every log written is checked with the official compliance checker before the tool ends.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "rounds" / "training_results_v6.1"
SOURCES = {  # (submitter, system, shipped benchmark) -> (new benchmark, global batch)
    ("NVIDIA", "tyche_ngpu512_ngc25.09_nemo", "llama31_405b"): ("qwen35_397b_grpo", 512),
    ("NVIDIA", "hsg_ngpu2560_ngc25.09_nemo", "llama31_405b"): ("qwen35_397b_grpo", 1024),
    ("Dell", "1xXE9680Lx8B200-SXM-180GB", "dlrm_dcnv2"): ("dlrmv4", 8192),
    ("Dell", "2xXE9680Lx8B200-SXM-180GB", "dlrm_dcnv2"): ("dlrmv4", 16384),
}
GENERATIONS = 16  # num_generations_per_prompt, fixed by the 6.1.0 rules
DLRM_TRAIN_SAMPLES = 2290835423


def _line(time_ms: float, key: str, value=None, event: str = "POINT_IN_TIME", **metadata) -> str:
    return ":::MLLOG " + json.dumps({"namespace": "", "time_ms": int(time_ms), "event_type": event, "key": key, "value": value,
                                     "metadata": {"file": "reshaped_from_v5.1.py", "lineno": 1, **metadata}})


def _lifecycle(text: str) -> dict:
    """The real run's timestamps that score it."""
    found: dict = {}
    for raw in text.splitlines():
        if ":::MLLOG " not in raw:
            continue
        record = json.loads(raw.split(":::MLLOG ", 1)[1])
        key = record["key"]
        if key in ("init_start", "init_stop", "run_start", "run_stop") and key not in found:
            found[key] = record["time_ms"]
    return found


def _header(time_ms: float, benchmark: str, tp: int, pp: int, cp: int, ep: int, micro_batch: int, accumulation: int,
            precision: tuple[str, str, str], config: str, seed: int) -> list[str]:
    return [
        _line(time_ms, "cache_clear", True), _line(time_ms, "init_start", None, "INTERVAL_START"),
        _line(time_ms + 1, "submission_benchmark", benchmark), _line(time_ms + 1, "submission_org", "reshaped"),
        _line(time_ms + 1, "submission_division", "closed"), _line(time_ms + 1, "submission_status", "onprem"),
        _line(time_ms + 1, "submission_platform", "reshaped from v5.1"), _line(time_ms + 1, "seed", seed),
        _line(time_ms + 2, "lowest_numerical_precision_in_linear", precision[0]),
        _line(time_ms + 2, "lowest_numerical_precision_in_attn", precision[1]),
        _line(time_ms + 2, "lowest_numerical_precision_in_comm", precision[2]),
        _line(time_ms + 2, "tensor_parallelism", tp), _line(time_ms + 2, "pipeline_parallelism", pp),
        _line(time_ms + 2, "context_parallelism", cp), _line(time_ms + 2, "expert_parallelism", ep),
        _line(time_ms + 2, "micro_batch_size", micro_batch), _line(time_ms + 2, "config_filename", config),
        _line(time_ms + 2, "gradient_accumulation_steps", accumulation),
    ]


def _evaluations(real: dict, points: list[int], values: list[float], block_meta: dict) -> list[str]:
    """Evaluations at `points` samples, spread evenly over the real run's time, the last just before its run_stop."""
    start, stop = real["run_start"], real["run_stop"]
    step = (stop - start - 2000) / len(points)
    lines = [_line(start + 1, "block_start", None, "INTERVAL_START", samples_count=points[0], **block_meta)]
    for i, (samples, value) in enumerate(zip(points, values, strict=True)):
        at = start + 1 + step * (i + 1) - 1000
        lines += [_line(at, "block_stop", None, "INTERVAL_END", samples_count=samples, **{k: v for k, v in block_meta.items() if k != "epoch_count"}),
                  _line(at + 1, "eval_start", None, "INTERVAL_START", samples_count=samples),
                  _line(at + 500, "eval_accuracy", value, samples_count=samples),
                  _line(at + 501, "eval_stop", None, "INTERVAL_END", samples_count=samples)]
        if i + 1 < len(points):
            lines.append(_line(at + 502, "block_start", None, "INTERVAL_START", samples_count=points[i + 1] - samples, **block_meta))
    lines.append(_line(stop, "run_stop", None, "INTERVAL_END", samples_count=points[-1], status="success"))
    return lines


def qwen_log(real: dict, batch: int, run: int) -> list[str]:
    prompts = batch // GENERATIONS
    first = batch * math.ceil(2.5 + 3840 / batch)
    # the 6.1.0 RCPs converged at the first evaluation; a run may converge later (slower passes)
    evaluations = [1, 1, 2][run % 3]
    header = _header(real["init_start"], "qwen35_397b_grpo", 4, 2, 1, 32, 1, batch // 8, ("bfloat16",) * 3, "config_GB200_reshaped.sh", 1000 + run)
    settings = [("global_batch_size", batch), ("max_steps", 30), ("max_sequence_length", 65536), ("train_samples", 685 * GENERATIONS),
                ("eval_samples", 251), ("init_checkpoint_step", 0), ("opt_name", "adamw"),
                ("opt_base_learning_rate", 1.0e-6 * math.sqrt(batch / 256)), ("opt_adamw_beta_1", 0.9), ("opt_adamw_beta_2", 0.999),
                ("opt_adamw_epsilon", 1e-8), ("opt_adamw_weight_decay", 0.0), ("opt_gradient_clip_norm", 0.125 * math.sqrt(256 / batch)),
                ("opt_learning_rate_warmup_steps", 0), ("opt_learning_rate_decay_schedule", "constant"),
                ("generation_training_rollout_temperature", 1.0), ("generation_training_rollout_top_p", 1.0),
                ("generation_validation_rollout_temperature", 0.1), ("generation_validation_rollout_top_p", 0.95),
                ("num_prompts_per_step", prompts), ("num_generations_per_prompt", GENERATIONS), ("target_accuracy", 0.69)]
    points = [first + batch * i for i in range(evaluations)]
    values = [0.66] * (evaluations - 1) + [0.71875]
    return (header + [_line(real["init_start"] + 3, key, value) for key, value in settings]
            + [_line(real["init_stop"], "init_stop", None, "INTERVAL_END"), _line(real["run_start"], "run_start", None, "INTERVAL_START")]
            + _evaluations(real, points, values, {}))


def dlrmv4_log(real: dict, batch: int, run: int) -> list[str]:
    interval = max(1, math.ceil(0.001 * DLRM_TRAIN_SAMPLES / batch)) * batch
    first = math.ceil(math.floor((4480 * batch + 135331840) / 3) / interval) * interval
    # converge 4 to 8 evaluations after the first: about the 6.1.0 RCPs' means (69.1 M samples at 8,192)
    evaluations = [5, 6, 4, 7, 5, 6, 5, 8, 6, 5][run % 10]
    learning_rate = 1e-6 * batch / 8192
    header = _header(real["init_start"], "dlrmv4", 1, 1, 1, 1, batch // 8, 1, ("bfloat16", "bfloat16", "fp16"), "config_B200_reshaped.sh", 2000 + run)
    settings = [("global_batch_size", batch), ("train_samples", DLRM_TRAIN_SAMPLES), ("eval_samples", 2058204), ("max_sequence_length", 4096),
                ("opt_name", "Adam"), ("opt_base_learning_rate", learning_rate), ("opt_adam_beta_1", 0.95), ("opt_adam_beta_2", 0.999),
                ("opt_adam_epsilon", 1e-8), ("opt_weight_decay", 0.0), ("opt_gradient_clip_norm", 1.0), ("opt_sparse_name", "RowWiseAdagrad"),
                ("opt_sparse_base_learning_rate", learning_rate), ("opt_learning_rate_warmup_steps", 24000),
                ("opt_learning_rate_warmup_start_lr", 0.0), ("eval_every_data_pct", 0.001), ("target_accuracy", 0.75)]
    points = [first + interval * i for i in range(evaluations)]
    values = [round(0.74 + 0.001 * i, 4) for i in range(evaluations - 1)] + [0.7505]
    return (header + [_line(real["init_start"] + 3, key, value) for key, value in settings]
            + [_line(real["init_stop"], "init_stop", None, "INTERVAL_END"), _line(real["run_start"], "run_start", None, "INTERVAL_START")]
            + _evaluations(real, points, values, {"first_epoch_num": 0, "epoch_count": 1}))


def main(mirror: Path) -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    wanted = {f"training_results_v5.1/{submitter}/results/{system}/{benchmark}/": (submitter, system, benchmark)
              for submitter, system, benchmark in SOURCES}
    systems = {f"training_results_v5.1/{submitter}/systems/{system}.json": (submitter, system) for submitter, system, _ in SOURCES}
    written = []
    with tarfile.open(mirror / "training_results_v5.1.tar.gz", mode="r|gz") as stream:
        for member in stream:
            if not member.isfile():
                continue
            name = member.name
            if name in systems:
                submitter, system = systems[name]
                target = OUT / submitter / "systems" / f"{system}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(stream.extractfile(member).read())
                continue
            folder = next((prefix for prefix in wanted if name.startswith(prefix)), None)
            if folder is None or not Path(name).name.startswith("result_"):
                continue
            submitter, system, _ = wanted[folder]
            benchmark, batch = SOURCES[wanted[folder]]
            run = int(Path(name).stem.split("_")[1])
            real = _lifecycle(stream.extractfile(member).read().decode("utf-8", "replace"))
            lines = (qwen_log if benchmark == "qwen35_397b_grpo" else dlrmv4_log)(real, batch, run)
            target = OUT / submitter / "results" / system / benchmark / Path(name).name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("\n".join(lines) + "\n")
            written.append(target)
    _scaling(sorted({path.parent for path in written}))
    (OUT / "README.md").write_text("# MLPerf Training v6.1, reshaped from v5.1 (made by tools/make_v61_fixtures.py)\n\n"
                                   + (__doc__ or "").split("\n\n", 2)[2])
    return _check(written)


def _scaling(folders: list[Path]) -> None:
    """scaling.json where the RCP checker asks for one, as the package checker writes it for a submitter: a run set
    that converged faster than the reference, within its allowed speed-up, is scored x RCP mean / its mean."""
    import logging

    from mlperf_logging.rcp_checker import rcp_checker

    logging.disable(logging.CRITICAL)
    for folder in folders:
        passed, message, _ = rcp_checker.check_directory(str(folder), "training", "6.1.0", False, False, rcp_pass="pruned_rcps", set_scaling=True)
        if not passed:
            raise SystemExit(f"{folder}: the 6.1.0 RCP check failed ({message})")
    logging.disable(logging.NOTSET)


def _check(paths: list[Path]) -> int:
    """Every log through the official compliance checker, ruleset 6.1.0, as the result summarizer runs it."""
    import logging

    from mlperf_logging.compliance_checker import mlp_compliance

    failed = []
    logging.disable(logging.CRITICAL)
    for path in sorted(paths):
        mlp_compliance.enqueued_configs.clear()
        checker = mlp_compliance.make_checker(usage="training", ruleset="6.1.0", quiet=True, werror=False)
        if not mlp_compliance.main(str(path), "training_6.1.0/common.yaml", checker)[0]:
            failed.append(path)
    logging.disable(logging.NOTSET)
    print(f"{len(paths)} logs written under {OUT.relative_to(ROOT)}; failing the 6.1.0 compliance checker: {failed or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT.parent / "shared" / "mlperf"))
