"""How wide a predicted time's interval must be to hold the truth as often as it says: split-conformal calibration on
the planner's own backtest.

Every backtest case (a measured count left out and predicted from the others, tasks/metrics/predict.py) gives a log
ratio r = log(measured / predicted). A count between measured ones (`within`) and one beyond them (`beyond`: below the
smallest or above the largest) err differently, and beyond, the error grows with the distance: so a case is scaled to
z = r / (1 + log(beyond_ratio)) (beyond_ratio = N / the largest measured count, or the smallest / N; 1 within), and the
stated 90 % interval is predicted x exp(z_low x scale) to predicted x exp(z_high x scale), with z_low and z_high the
conformal 5 % and 95 % order statistics of the stratum's cases.

The quantiles are learnt from the shipped rounds and kept in reference/interval_calibration.tsv (made by
`python tools/calibrate_intervals.py WAREHOUSE`; tests/test_calibration.py checks it is current): a round not in that
set is predicted with intervals it never saw, which is the test that counts. A round in the set gets the quantiles
learnt without it (its own row `held_out_round`), so the coverage the warehouse records for it is out-of-sample too.
"""

from __future__ import annotations

import csv
import functools
import math
from dataclasses import dataclass
from importlib import resources

import numpy as np
import polars as pl

LEVEL = 0.90  # the stated interval
TAIL = (1 - LEVEL) / 2
WITHIN, BEYOND = "within", "beyond"
CALIBRATION_FILE = "interval_calibration.tsv"
CALIBRATION_COLUMNS = ("model", "stratum", "held_out_round", "cases", "z_low", "z_high")


def stratum(beyond_ratio: float) -> str:
    return WITHIN if beyond_ratio <= 1 else BEYOND


def scale(beyond_ratio: float) -> float:
    """How much wider the interval is beyond the measured counts: 1 + log of how far beyond."""
    return 1.0 + math.log(max(beyond_ratio, 1.0))


def conformal_bounds(z: np.ndarray) -> tuple[float, float]:
    """The split-conformal lower and upper order statistics for a two-sided LEVEL interval over n cases: the
    floor(TAIL (n + 1))-th and ceil((1 - TAIL) (n + 1))-th smallest, clipped to the sample."""
    ordered = np.sort(z)
    n = len(ordered)
    low = max(math.floor(TAIL * (n + 1)), 1)
    high = min(math.ceil((1 - TAIL) * (n + 1)), n)
    return float(ordered[low - 1]), float(ordered[high - 1])


@dataclass(frozen=True)
class Calibration:
    """(model, stratum, held-out round or "") -> (z_low, z_high, cases)."""

    quantiles: dict[tuple[str, str, str], tuple[float, float, int]]

    @property
    def rounds(self) -> set[str]:
        return {held for _, _, held in self.quantiles if held}

    def bounds(self, model: str, beyond_ratio: float, round_name: str | None = None) -> tuple[float, float] | None:
        """(low, high) multipliers of a predicted time; None where the model was never calibrated."""
        held = round_name if round_name in self.rounds else ""
        found = self.quantiles.get((model, stratum(beyond_ratio), held))
        if found is None:
            return None
        z_low, z_high, _ = found
        s = scale(beyond_ratio)
        return math.exp(z_low * s), math.exp(z_high * s)


@functools.cache
def load_calibration() -> Calibration:
    text = resources.files("mlperf_scaling.reference").joinpath(CALIBRATION_FILE).read_text(encoding="utf-8")
    rows = csv.DictReader((line for line in text.splitlines() if not line.startswith("#")), delimiter="\t")
    return Calibration({(r["model"], r["stratum"], r["held_out_round"]): (float(r["z_low"]), float(r["z_high"]), int(r["cases"]))
                        for r in rows})


def scaled_errors(backtest: pl.DataFrame) -> pl.DataFrame:
    """The backtest's cases with a prediction, each with its stratum and z (the log ratio over the scale)."""
    cases = backtest.filter(pl.col("predicted_min").is_not_null() & (pl.col("predicted_min") > 0))
    return cases.with_columns(
        pl.when(pl.col("beyond_ratio") <= 1).then(pl.lit(WITHIN)).otherwise(pl.lit(BEYOND)).alias("stratum"),
        ((pl.col("measured_min") / pl.col("predicted_min")).log() / (1 + pl.col("beyond_ratio").clip(lower_bound=1).log())).alias("z"),
    )


def calibration_rows(backtest: pl.DataFrame) -> pl.DataFrame:
    """The calibration table from backtest cases of several rounds: per model and stratum, the quantiles over every
    round (held_out_round empty) and over every round but one, for each round."""
    cases = scaled_errors(backtest)
    rounds = sorted(set(cases["round"].to_list()))
    rows = []
    for (model, stratum_name), group in cases.group_by(["model", "stratum"], maintain_order=True):
        for held in ["", *rounds]:
            z = group.filter(pl.col("round") != held)["z"].to_numpy() if held else group["z"].to_numpy()
            if len(z) < 2:
                continue
            low, high = conformal_bounds(z)
            rows.append({"model": model, "stratum": stratum_name, "held_out_round": held, "cases": len(z), "z_low": low, "z_high": high})
    schema = {"model": pl.String, "stratum": pl.String, "held_out_round": pl.String, "cases": pl.Int64, "z_low": pl.Float64, "z_high": pl.Float64}
    return pl.DataFrame(rows, schema=schema).sort("model", "stratum", "held_out_round")


def coverage(backtest: pl.DataFrame) -> dict[str, tuple[int, int]]:
    """model -> (cases whose stated interval held the measured time, cases with an interval)."""
    with_interval = backtest.filter(pl.col("covered").is_not_null())
    return {str(model): (int(group["covered"].sum()), group.height)
            for (model,), group in with_interval.group_by(["model"], maintain_order=True)}
