"""How utilisation changes with the precision a run trains at, learnt from runs measured at two precisions.

Utilisation is against the peak of the run's own precision, and a narrower precision's peak is higher (an H100's FP8
peak is twice its BF16 one) while the run is seldom that much faster: so a run's MFU falls as its precision narrows.
The factor k(q -> p) = MFU at p / MFU at q carries a utilisation measured at precision q to a request at p, with its
own uncertainty, from the first source that measures it:

1. MLPerf: the same benchmark, round, accelerator and count measured at both precisions (v5.1's B200 and B300 Llama
   runs, at NVFP4 and FP8 side by side);
2. the public production runs (reference/production_runs.tsv): the same architecture trained at both;
3. otherwise the physical bounds, said so: the narrower precision runs between as fast as the wider one and as much
   faster as its peak is higher, so k lies between 1 and the ratio of the peaks, and is taken at the middle of that
   range (in logarithms) with the spread of a uniform distribution over it.
A learnt factor outside that range (beyond a tenth, in logarithms) differs in more than the precision, and is passed
over for the next source, said so.

Precisions are compared by their class of bits (16: BF16 and FP16; 8: FP8 and INT8; 6; 4: NVFP4 and MXFP4): FP16 and
BF16 share their peak on every chip that has both.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
import polars as pl

# how far beyond the physical range a learnt factor may lie and still be a precision's (measurement noise), in logs
_LEEWAY = 0.1
# a datasheet column's class of bits
BITS = {"fp32": 32, "tf32": 19, "bf16": 16, "fp16": 16, "fp8": 8, "int8": 8, "fp6": 6, "fp4": 4}


@dataclass(frozen=True)
class PrecisionChange:
    """Utilisation at `target` = utilisation at `source` x factor; log_sd is the spread of log(factor) for one case."""

    source: str  # a datasheet column: the precision measured
    target: str  # the precision asked for
    factor: float
    log_sd: float
    basis: str  # what the factor was learnt from, for a person

    @property
    def text(self) -> str:
        return f"{self.source} to {self.target}: utilisation x{self.factor:.2f} (spread x/÷{math.exp(self.log_sd):.2f}; {self.basis})"


@dataclass(frozen=True)
class _Learnt:
    log_factor: float
    log_sd: float
    cases: int
    basis: str


def _pairs(frame: pl.DataFrame, cell: list[str], basis: str) -> dict[tuple[int, int], _Learnt]:
    """Within each cell measured at two classes of bits: the log ratio of their geometric mean utilisations."""
    per = (frame.with_columns(pl.col("precision").replace_strict(BITS, default=None).alias("bits"))
           .filter(pl.col("bits").is_not_null())
           .group_by(*cell, "bits").agg(pl.col("mfu").log().mean().alias("log_mfu")))
    ratios: dict[tuple[int, int], list[float]] = {}
    for _, rows in per.group_by(cell):
        by_bits = dict(zip(rows["bits"].to_list(), rows["log_mfu"].to_list(), strict=True))
        for wide, narrow in itertools.permutations(sorted(by_bits), 2):
            ratios.setdefault((wide, narrow), []).append(by_bits[narrow] - by_bits[wide])
    learnt = {}
    for key, values in ratios.items():
        spread = float(np.std(values, ddof=1)) if len(values) > 1 else abs(values[0]) / 2  # one case: half its size
        learnt[key] = _Learnt(float(np.mean(values)), max(spread, 0.05), len(values), f"{len(values)} {basis}")
    return learnt


@dataclass(frozen=True)
class PrecisionChanges:
    """The factors learnt from MLPerf and from public production runs, by (from bits, to bits)."""

    mlperf: dict[tuple[int, int], _Learnt]
    production: dict[tuple[int, int], _Learnt]

    def between(self, source: str, target: str, peaks: dict[str, float]) -> PrecisionChange:
        """The change from `source` to `target` on a chip with these peaks (datasheet columns)."""
        key = (BITS[source], BITS[target])
        if key[0] == key[1]:
            return PrecisionChange(source, target, 1.0, 0.0, "the same class of bits")
        # the run at the narrower precision is between as fast as, and peak-ratio times faster than, the wider one
        span = math.log(peaks[source] / peaks[target])  # > 0 from narrow to wide, < 0 from wide to narrow
        low, high = min(0.0, span) - _LEEWAY, max(0.0, span) + _LEEWAY
        passed_over: list[str] = []
        for learnt in (self.mlperf.get(key), self.production.get(key)):
            if learnt is None:
                continue
            if low <= learnt.log_factor <= high:
                said = f"; {passed_over[0]}" if passed_over else ""
                return PrecisionChange(source, target, math.exp(learnt.log_factor), learnt.log_sd, learnt.basis + said)
            # outside what a change of precision alone can do: the pair differs in more than its precision (v4.0's H100
            # LoRA at BF16 is Juniper's Hugging Face and DeepSpeed beside NeMo at FP8, x0.63 where 1 to 2 is physical)
            passed_over.append(f"{learnt.basis} give x{math.exp(learnt.log_factor):.2f}, outside the physical 1 to "
                               f"{math.exp(span):.2f}: more than the precision differs, passed over")
        said = f"; {'; '.join(passed_over)}" if passed_over else ""
        return PrecisionChange(source, target, math.exp(span / 2), abs(span) / math.sqrt(12),
                               f"not measured: between 1 and the peaks' ratio {peaks[source] / peaks[target]:.2f}, taken at its middle{said}")


def learn_precision_changes(evidence: pl.DataFrame, production: pl.DataFrame | None = None) -> PrecisionChanges:
    """From the language-model evidence (benchmark, round, accelerator_group, accelerators, precision, and the utilisation
    while computing, `mfu_compute`, where known: a narrower precision's shorter step makes the same overhead a larger
    share, which is the count's part, not the precision's) and the production runs (architecture, precision, mfu)."""
    column = "mfu_compute" if "mfu_compute" in evidence.columns else "mfu_with_attention"
    mlperf = _pairs(evidence.select("benchmark", "round", "accelerator_group", "accelerators", "precision", pl.col(column).alias("mfu")),
                    ["benchmark", "round", "accelerator_group", "accelerators"],
                    "MLPerf results at both precisions (same benchmark, round, accelerator and count)")
    produced = {} if production is None or production.is_empty() else _pairs(
        production.select("architecture", "precision", "mfu"), ["architecture"], "architecture(s) whose public production runs trained at both")
    return PrecisionChanges(mlperf, produced)
