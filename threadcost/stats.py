"""Distributions and fitted slopes, the way every experiment reports them."""

from __future__ import annotations

import functools
import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

PERCENTILES = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p999": 99.9}


def distribution(samples: Any) -> dict[str, float]:
    """min, p50, p90, p99, p999, max, mean and n of a sample (NaN-free)."""
    arr = np.asarray(samples, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        return {"min": float("nan"), **{k: float("nan") for k in PERCENTILES},
                "max": float("nan"), "mean": float("nan"), "n": 0}
    out: dict[str, float] = {"min": float(arr.min())}
    for key, q in PERCENTILES.items():
        out[key] = float(np.percentile(arr, q))
    out["max"] = float(arr.max())
    out["mean"] = float(arr.mean())
    out["n"] = int(arr.size)
    return out


def median_ci95(samples: np.ndarray) -> tuple[float, float]:
    """A distribution-free 95% interval of the median: the order statistics at
    n/2 -+ 1.96 sqrt(n)/2 (normal approximation of the binomial)."""
    x = np.sort(np.asarray(samples, dtype=float))
    n = x.size
    if n == 0:
        return float("nan"), float("nan")
    half = 1.96 * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half))
    return float(x[lo]), float(x[hi])


@dataclass(frozen=True)
class LinearFit:
    """y = slope * x + intercept, fitted by least squares."""

    slope: float
    intercept: float
    r2: float
    slope_ci95_low: float
    slope_ci95_high: float
    slope_stderr: float
    n: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


@functools.lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile, ``scipy.stats.t.ppf(p, df)``: the one place every interval
    of the study takes it from (remembered: a page asks for the same few thousands of
    times, each ``t.ppf`` costing about a millisecond).

    Computed by ``scipy.special.stdtrit(df, p)``, the function ``t.ppf`` itself calls
    (the same number, tests/test_stats_fast.py): importing scipy.stats for it took about
    a second of every notebook kernel that prints an interval."""
    from scipy import special  # lazy: keeps CLI start-up fast

    return float(special.stdtrit(df, p))


def fit_line(x: Any, y: Any) -> LinearFit:
    """Least-squares line with R^2 and a 95% confidence interval on the slope
    (``scipy.stats.linregress``)."""
    from scipy import stats as sps  # lazy: keeps CLI start-up fast

    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.size < 3 or np.ptp(xs) == 0:
        raise ValueError("a slope needs at least 3 points at 2 or more distinct x values")
    res = sps.linregress(xs, ys)
    slope, stderr = float(res.slope), float(res.stderr)
    half = t_quantile(0.975, xs.size - 2) * stderr
    return LinearFit(
        slope=slope,
        intercept=float(res.intercept),
        r2=float(res.rvalue**2),
        slope_ci95_low=slope - half,
        slope_ci95_high=slope + half,
        slope_stderr=stderr,
        n=int(xs.size),
    )


# When a sleepers run (S4's workload: tasks that sleep and wake on a schedule) could not
# keep up, so that its CPU per wake-up is no longer the cost of a wake-up: the CPUs at
# least SATURATION_SHARE busy, or the run LATE_FACTOR times longer than its sleeps. The
# experiment stores the flags by this rule; the claims apply it to runs stored before
# the flags.
SATURATION_SHARE = 0.8
LATE_FACTOR = 1.25


def saturation(cpu_s: float, wall_s: float, cpus: int, planned_s: float) -> tuple[bool, bool]:
    """(cpu_bound, late) of one sleepers run by the rule above."""
    busy = cpu_s / wall_s if wall_s > 0 else 0.0
    return bool(busy >= SATURATION_SHARE * cpus), bool(planned_s > 0 and
                                                       wall_s > LATE_FACTOR * planned_s)
