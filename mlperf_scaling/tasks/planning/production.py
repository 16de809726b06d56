"""A production estimate beside the MLPerf pace: what public production runs of language models took, against the
pace MLPerf submissions set on the same accelerator (reference/production_runs.tsv, each run with its source).

The MLPerf pace leaves out what every real run pays: checkpoints, restarts after failures, evaluations, data
loading, longer-context phases, and software less tuned than a submission's. For each public run the pace is what the
model planner gives for it at its reported count and global batch (tasks/planning/pace.py: its size, sequence length,
accelerator and precision, from the benchmarks measured on that accelerator, its generation or every accelerator where
none was), and its factor F is the reported accelerator-hours over the pace's; a run that reports no count has no pace
and is left out. The factor is learnt as

    ln F = a + b ln(16-bit peak / 312 TFLOP/s) + c [trained at 8 bits or fewer] + d [mixture of experts]
           + e ln(u_c16 / 0.4) + f ln(u / u_c) + u(architecture)

with u_c16 the pace's utilisation while computing in 16-bit terms (its achieved FLOP/s over the 16-bit peak, so a
narrower precision's higher peak is not taken for a production run's) and u / u_c the share the step overhead leaves at
the run's count, by least squares with a small ridge on b to f, and u the architecture's own mean residual shrunk
toward zero as n / (n + SHRINK_RUNS) (a generation with many runs keeps its own factor, one with none takes the pooled
one). What the runs show: e is about 1, so a production run keeps little of a higher utilisation while computing (what
MLPerf's tuned kernels reach, production software reaches less of, and a narrower precision's speed-up is not taken on
trust); f is about 0.4, so it keeps more than half of what the step overhead costs at its count (production runs lose
efficiency with the count as the benchmarks do, if less); mixtures of experts keep their accelerators less busy. The
factor is not extrapolated beyond the overhead share the public runs paid. With neither e nor f the factor's backtest
(each organisation left out) erred more: these terms were chosen on it and on the public runs of
bench/public_runs_held_out.tsv, which are therefore no longer wholly unseen (the issue's note says so).

The interval: every run is predicted with its whole organisation left out (a new run is usually a new team's), the
factor learnt from the others, and the stated 90 % interval is the split-conformal quantiles of those errors. In the backtest itself a run's interval is learnt from the other organisations'
errors without it (nested), so the coverage it records is out of sample. A request on an architecture no public run
used takes the wider quantiles of a second backtest that leaves each architecture out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import polars as pl

from mlperf_scaling.reference.lookup import ProductionRun, accelerator_spec, classify_accelerator, production_runs
from mlperf_scaling.tasks.metrics.accelerators import group_name
from mlperf_scaling.tasks.planning.batch import default_batch_tokens
from mlperf_scaling.tasks.planning.calibration import conformal_bounds
from mlperf_scaling.tasks.planning.pace import Learnt, learn, pace
from mlperf_scaling.tasks.planning.precision import BITS, learn_precision_changes
from mlperf_scaling.tasks.planning.work import PRECISION_COLUMN, Request, training_flops

SHRINK_RUNS = 3.0  # runs: an architecture with this many runs keeps half of its own mean residual
RIDGE = 0.5  # on the covariates' coefficients (in units of the log factor), so three covariates cannot chase ten runs
REFERENCE_PEAK = 312.0  # TFLOP/s: the A100's 16-bit peak, where b's term is zero
REFERENCE_MFU = 0.4  # the pace's utilisation where e's term is zero
ORGANISATION, ARCHITECTURE = "organisation", "architecture"  # what a backtest case leaves out


@dataclass(frozen=True)
class RunFacts:
    """A public run as the factor is learnt from it."""

    run: ProductionRun
    accelerator_group: str
    architecture: str
    precision: str  # a datasheet column
    precision_stated: bool
    peak_tflops: float
    peak_16bit_tflops: float
    flops: float
    mfu: float  # the run's own: training FLOPs over its accelerator-hours at its precision's peak


def run_facts(run: ProductionRun) -> RunFacts | None:
    """A run's accelerator, precision, peak and utilisation; None where its accelerator has no datasheet."""
    known = classify_accelerator(run.accelerator_name)
    spec = accelerator_spec(run.datasheet_family, known.form_factor if known.family == run.datasheet_family else None, known.memory_gb)
    if spec is None:
        return None
    sixteen = "bf16" if "bf16" in spec.peak_tflops else "fp16"
    precision = PRECISION_COLUMN.get(run.precision, sixteen) if run.precision else sixteen
    peak = spec.peak_tflops.get(precision)
    if peak is None:
        return None
    flops = training_flops(run.active_parameters, run.tokens, run.seq_len)
    return RunFacts(run, group_name(spec.family, spec.form_factor, spec.family), spec.architecture, precision, bool(run.precision), peak,
                    spec.peak_tflops[sixteen], flops, flops / (run.accelerator_hours * 3600 * peak * 1e12))


def _runs_frame(leaving_out: frozenset[str]) -> pl.DataFrame:
    facts = [f for f in map(run_facts, production_runs()) if f is not None and f.run.run not in leaving_out]
    return pl.DataFrame({"architecture": [f.architecture for f in facts], "precision": [f.precision for f in facts], "mfu": [f.mfu for f in facts]},
                        schema={"architecture": pl.String, "precision": pl.String, "mfu": pl.Float64})


def production_learnt(evidence: pl.DataFrame) -> Learnt:
    """The pace's parts learnt from MLPerf, with the precision changes the public runs teach too (the architectures
    trained at two precisions)."""
    return learn(evidence, _runs_frame(frozenset()))


def without_runs(learnt: Learnt, leaving_out: frozenset[str]) -> Learnt:
    """The same, but for the precision changes of the runs named in `leaving_out`."""
    return replace(learnt, changes=learn_precision_changes(learnt.evidence, _runs_frame(leaving_out)))


_CASE_SCHEMA = {
    "run": pl.String, "organisation": pl.String, "published": pl.String, "architecture": pl.String, "accelerator_group": pl.String,
    "accelerators": pl.Int64, "parameters": pl.Float64, "active_parameters": pl.Float64, "tokens": pl.Float64, "seq_len": pl.Float64,
    "global_batch_tokens": pl.Float64, "global_batch_stated": pl.Boolean, "precision": pl.String, "precision_stated": pl.Boolean, "moe": pl.Boolean, "peak_16bit_tflops": pl.Float64, "peak_tflops": pl.Float64, "training_flops": pl.Float64,
    "reported_accelerator_hours": pl.Float64, "production_mfu": pl.Float64, "pace_mfu": pl.Float64, "pace_mfu_compute": pl.Float64, "pace_pooled": pl.Boolean,
    "pace_accelerator_hours": pl.Float64, "factor": pl.Float64, "source": pl.String,
}


def production_cases(learnt: Learnt, only: frozenset[str] | None = None) -> pl.DataFrame:
    """Every public run (or those named in `only`) with its MLPerf pace at its reported count and global batch (public
    runs of its size's, where it does not say), and its factor; runs whose accelerator has no datasheet, or that report
    no count, are left out (a pace is a pace at a count)."""
    rows = []
    for facts in filter(None, map(run_facts, production_runs())):
        run = facts.run
        if (only is not None and run.run not in only) or run.accelerators is None:
            continue
        batch = run.global_batch_tokens or default_batch_tokens(run.parameters)[0]
        request = Request(run.active_parameters, run.parameters, run.seq_len, facts.accelerator_group, facts.precision, run.accelerators,
                          global_batch_tokens=batch)
        found = pace(learnt, request)
        if found.mfu_compute is None or found.peak_tflops is None:
            continue
        mfu = found.mfu_at(run.accelerators, batch)
        pace_hours = facts.flops / (found.peak_tflops * 1e12 * mfu) / 3600
        rows.append({"run": run.run, "organisation": run.organisation, "published": run.published, "architecture": facts.architecture,
                     "accelerator_group": facts.accelerator_group, "accelerators": run.accelerators, "parameters": run.parameters,
                     "active_parameters": run.active_parameters, "tokens": run.tokens, "seq_len": run.seq_len, "precision": facts.precision,
                     "precision_stated": facts.precision_stated, "moe": run.parameters > run.active_parameters,
                     "peak_16bit_tflops": facts.peak_16bit_tflops, "peak_tflops": facts.peak_tflops, "training_flops": facts.flops,
                     "reported_accelerator_hours": run.accelerator_hours, "production_mfu": facts.mfu, "pace_mfu": mfu, "pace_mfu_compute": found.mfu_compute,
                     "pace_pooled": found.pooled, "global_batch_tokens": batch, "global_batch_stated": run.global_batch_tokens is not None, "pace_accelerator_hours": pace_hours, "factor": run.accelerator_hours / pace_hours,
                     "source": run.source})
    return pl.DataFrame(rows, schema=_CASE_SCHEMA)


def _covariates(peak_16bit: np.ndarray, precision: list[str], moe: np.ndarray, compute_16bit: np.ndarray, overhead_share: np.ndarray) -> np.ndarray:
    """`compute_16bit`: the pace's utilisation while computing in 16-bit terms (its achieved FLOP/s over the 16-bit peak,
    so a narrower precision's higher peak is not taken as a production run's); `overhead_share`: the pace's utilisation
    at the count over that while computing."""
    narrow = np.array([BITS[p] <= 8 for p in precision], dtype=float)
    return np.column_stack([np.log(peak_16bit / REFERENCE_PEAK), narrow, moe.astype(float), np.log(compute_16bit / REFERENCE_MFU),
                            np.log(overhead_share)])


def _run_covariates(cases: pl.DataFrame) -> np.ndarray:
    compute = cases["pace_mfu_compute"].to_numpy()
    return _covariates(cases["peak_16bit_tflops"].to_numpy(), cases["precision"].to_list(), cases["moe"].to_numpy(),
                       compute * cases["peak_tflops"].to_numpy() / cases["peak_16bit_tflops"].to_numpy(), cases["pace_mfu"].to_numpy() / compute)


@dataclass(frozen=True)
class FactorModel:
    """ln F = intercept + coefficients . covariates + the architecture's shrunk residual."""

    intercept: float
    coefficients: tuple[float, ...]  # 16-bit peak, 8 bits or fewer, mixture of experts, utilisation while computing, overhead share
    architectures: dict[str, tuple[float, int]]  # architecture -> (its shrunk effect, its runs)
    runs: int

    def log_factor(self, peak_16bit: float, precision: str, moe: bool, architecture: str, compute_16bit: float, overhead_share: float) -> float:
        x = _covariates(np.array([peak_16bit]), [precision], np.array([moe]), np.array([compute_16bit]), np.array([overhead_share]))[0]
        return self.intercept + float(np.dot(self.coefficients, x)) + self.architectures.get(architecture, (0.0, 0))[0]


def fit_factor(cases: pl.DataFrame) -> FactorModel:
    """The factor model of a set of public runs (production_cases)."""
    x = _run_covariates(cases)
    y = np.log(cases["factor"].to_numpy())
    design = np.column_stack([np.ones(len(y)), x])
    penalty = np.diag([0.0] + [RIDGE] * x.shape[1])
    beta = np.linalg.solve(design.T @ design + penalty, design.T @ y)
    residual = y - design @ beta
    architectures = {}
    names = np.array(cases["architecture"].to_list())
    for architecture in sorted(set(names)):
        mine = residual[names == architecture]
        architectures[architecture] = (float(mine.sum() / (len(mine) + SHRINK_RUNS)), len(mine))
    return FactorModel(float(beta[0]), tuple(float(b) for b in beta[1:]), architectures, len(y))


def _predict(model: FactorModel, rows: pl.DataFrame) -> np.ndarray:
    x = _run_covariates(rows)
    own = np.array([model.architectures.get(a, (0.0, 0))[0] for a in rows["architecture"].to_list()])
    return model.intercept + x @ np.array(model.coefficients) + own


def _errors(cases: pl.DataFrame, by: str) -> tuple[np.ndarray, list[str]]:
    """ln(reported / predicted accelerator-hours) of every run, its group (organisation or architecture) left out."""
    errors, groups = [], []
    for group in sorted(set(cases[by].to_list())):
        held = cases.filter(pl.col(by) == group)
        others = cases.filter(pl.col(by) != group)
        if others.height < 3:
            continue
        predicted = _predict(fit_factor(others), held)
        errors.extend(np.log(held["factor"].to_numpy()) - predicted)
        groups.extend([group] * held.height)
    return np.array(errors), groups


def production_bounds(cases: pl.DataFrame, by: str = ORGANISATION) -> tuple[float, float] | None:
    """The stated interval's log bounds: the conformal quantiles of every run's error with its organisation (or
    architecture) left out; None with too few runs."""
    errors, _ = _errors(cases, by)
    if len(errors) < 10:
        return None
    return conformal_bounds(errors)


_BACKTEST_EXTRA = {"left_out": pl.String, "held_out": pl.String, "predicted_factor": pl.Float64, "predicted_accelerator_hours": pl.Float64,
                   "predicted_accelerator_hours_low": pl.Float64, "predicted_accelerator_hours_high": pl.Float64, "error_pct": pl.Float64,
                   "covered": pl.Boolean}


def production_backtest(cases: pl.DataFrame, learnt: Learnt | None = None) -> pl.DataFrame:
    """Every public run predicted with its organisation left out, and again with its architecture left out; its interval
    learnt from the other groups' errors without it (nested). Given the evidence, a held run is predicted from a pace
    recomputed without its group wherever its runs taught a change of precision (Hopper's BF16 runs against FP8 ones):
    else its prediction would lean on its own utilisation. Its row keeps the case as a plan uses it (the pace with every
    run); the other runs' paces keep the held group too (a second-order lean: recomputing them for every group would cost
    the main job seconds)."""
    frames = []
    for by in (ORGANISATION, ARCHITECTURE):
        for group in sorted(set(cases[by].to_list())):
            held = cases.filter(pl.col(by) == group)
            others = cases.filter(pl.col(by) != group)
            pace = held["pace_accelerator_hours"].to_numpy()
            if learnt is not None:
                runs = frozenset(held["run"].to_list())
                without = without_runs(learnt, runs)
                if without.changes != learnt.changes:
                    nested = production_cases(without, runs).select("run", pl.col("pace_accelerator_hours").alias("nested"))
                    pace = held.select("run").join(nested, on="run", how="left", maintain_order="left")["nested"].to_numpy()
            if others.height < 3:
                continue
            factor = np.exp(_predict(fit_factor(others), held))
            predicted = pace * factor
            bounds = production_bounds(others, by)
            low = predicted * math.exp(bounds[0]) if bounds else np.full(len(predicted), np.nan)
            high = predicted * math.exp(bounds[1]) if bounds else np.full(len(predicted), np.nan)
            reported = held["reported_accelerator_hours"].to_numpy()
            frames.append(held.with_columns(
                pl.lit(by).alias("left_out"), pl.lit(group).alias("held_out"), pl.Series("predicted_factor", factor),
                pl.Series("predicted_accelerator_hours", predicted),
                pl.Series("predicted_accelerator_hours_low", low).fill_nan(None), pl.Series("predicted_accelerator_hours_high", high).fill_nan(None),
                pl.Series("error_pct", 100 * (predicted / reported - 1)),
                pl.Series("covered", (low <= reported) & (reported <= high) if bounds else [None] * len(reported), dtype=pl.Boolean),
            ))
    schema = _CASE_SCHEMA | _BACKTEST_EXTRA
    return pl.concat(frames, how="diagonal_relaxed").select(list(schema)) if frames else pl.DataFrame(schema=schema)


@dataclass(frozen=True)
class ProductionFigures:
    """What the production backtest says, stated beside every production estimate."""

    runs: int
    organisations: int
    median_abs_error_pct: float | None
    covered: int
    with_interval: int
    by_architecture: tuple[float | None, int, int]  # median |error| %, covered, with interval, each architecture left out

    @property
    def coverage(self) -> float | None:
        return self.covered / self.with_interval if self.with_interval else None


def production_figures(backtest: pl.DataFrame) -> ProductionFigures:
    def part(by: str) -> tuple[float | None, int, int, pl.DataFrame]:
        rows = backtest.filter(pl.col("left_out") == by)
        with_interval = rows.filter(pl.col("covered").is_not_null())
        error = float(np.median(np.abs(rows["error_pct"].to_numpy()))) if rows.height else None
        return error, int(with_interval["covered"].sum()), with_interval.height, rows

    error, covered, with_interval, rows = part(ORGANISATION)
    arch_error, arch_covered, arch_with = part(ARCHITECTURE)[:3]
    return ProductionFigures(rows.height, rows["organisation"].n_unique(), error, covered, with_interval, (arch_error, arch_covered, arch_with))


@dataclass(frozen=True)
class ProductionEstimate:
    """A request's production factor at a pace, what it leans on, and its interval's log bounds."""

    factor: float  # at the plan's reference count (the one asked for, else the smallest that fits)
    log_bounds: tuple[float, float] | None
    architecture: str
    architecture_runs: int  # public runs on the request's architecture
    leaned_on: str  # the runs the factor leans on, for a person
    basis: str  # organisation left out, or architecture left out (for an architecture no run used)
    log_base: float = 0.0  # ln F where the step pays no overhead
    overhead_exponent: float = 0.0  # F grows as the overhead share (the pace's utilisation at a count / while computing) to this
    lowest_share: float = 0.0  # the lowest overhead share a public run had

    def factor_at(self, overhead_share: float) -> float:
        """The factor at a count whose pace keeps this share of its utilisation while computing. Not extrapolated
        beyond the overhead the public runs paid: past it the factor stays at its edge, so a production run never gains
        on the pace as its overhead grows."""
        return math.exp(self.log_base + self.overhead_exponent * math.log(max(overhead_share, self.lowest_share)))


def estimate_factor(cases: pl.DataFrame, peak_16bit: float, precision: str, moe: bool, architecture: str, compute_16bit: float,
                    overhead_share: float) -> ProductionEstimate:
    """The factor of a request: its accelerator's 16-bit peak, its precision and kind, its pace's utilisation while
    computing in 16-bit terms, and the overhead share at its reference count."""
    model = fit_factor(cases)
    runs = model.architectures.get(architecture, (0.0, 0))[1]
    by = ORGANISATION if runs else ARCHITECTURE
    mine = cases.filter(pl.col("architecture") == architecture).sort("published", descending=True)
    if runs:
        names = ", ".join(mine["run"].head(4).to_list()) + (f" and {runs - 4} more" if runs > 4 else "")
        leaned = f"{runs} public run{'s' if runs != 1 else ''} on {architecture} ({names}), beside {model.runs - runs} on other accelerators"
    else:
        leaned = f"no public run on {architecture}: the {model.runs} runs on other accelerators, pooled"
    lowest = float((cases["pace_mfu"] / cases["pace_mfu_compute"]).min())  # type: ignore[arg-type]
    estimate = ProductionEstimate(1.0, production_bounds(cases, by), architecture, runs, leaned,
                                  "each organisation left out" if runs else "each architecture left out",
                                  model.log_factor(peak_16bit, precision, moe, architecture, compute_16bit, 1.0), model.coefficients[4], lowest)
    return replace(estimate, factor=estimate.factor_at(overhead_share))
