"""Intervals for assertions: from the spread across independent repeats."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from threadcost import stats
from threadcost.measured.measurement import Measurement


def over_repeats(values: Sequence[float] | np.ndarray, unit: str, **info: Any) -> Measurement:
    """Mean of per-repeat values with a 95% t interval over the repeats.

    One repeat gives a zero-width interval at the value (and, for a timing
    assertion, too few repeats to be judged).
    """
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        raise ValueError("no finite repeat values")
    mean = float(arr.mean())
    if arr.size < 2 or float(arr.std()) == 0.0:
        return Measurement(mean, unit, mean, mean, repeats=int(arr.size), **info)
    half = stats.t_quantile(0.975, arr.size - 1) * float(arr.std(ddof=1)) / np.sqrt(arr.size)
    return Measurement(mean, unit, mean - half, mean + half, repeats=int(arr.size), **info)


# the statistic of a yardstick, one repeat disturbed or not (the empty system call every
# why cites): the median over repeats, with a distribution-free 95% interval
MEDIAN_OVER_REPEATS = "median over repeats"


def median_over_repeats(values: Sequence[float] | np.ndarray, unit: str,
                        **info: Any) -> Measurement:
    """Median of per-repeat values with the distribution-free 95% interval of the median
    (:func:`threadcost.stats.median_ci95`): one disturbed repeat moves neither."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    if arr.size == 0:
        raise ValueError("no finite repeat values")
    mid = float(np.median(arr))
    lo, hi = stats.median_ci95(arr)
    return Measurement(mid, unit, min(lo, mid), max(hi, mid), repeats=int(arr.size), **info)


def slope(x: Any, y: Any, unit: str, repeats: int, **info: Any) -> Measurement:
    """A least-squares slope with its 95% interval (threadcost.stats.fit_line)."""
    fit = stats.fit_line(x, y)
    how = info.pop("how", "")
    how = f"{how}; slope R² {fit.r2:.4f}" if how else f"slope R² {fit.r2:.4f}"
    return Measurement(fit.slope, unit, fit.slope_ci95_low, fit.slope_ci95_high,
                       repeats=repeats, how=how, **info)


def log_ratio(values: Sequence[float] | np.ndarray, unit: str = "ratio",
              **info: Any) -> Measurement:
    """Geometric mean of per-repeat ratios with a 95% t interval on their logarithms
    (the way the cpu_bound experiment reports its paired ratios). Non-positive or
    non-finite ratios are dropped."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr) & (arr > 0)]
    if arr.size == 0:
        raise ValueError("no positive finite ratio")
    logs = np.log(arr)
    mean = float(logs.mean())
    if arr.size < 2 or float(logs.std()) == 0.0:
        v = float(np.exp(mean))
        return Measurement(v, unit, v, v, repeats=int(arr.size), **info)
    half = stats.t_quantile(0.975, arr.size - 1) * float(logs.std(ddof=1)) / np.sqrt(arr.size)
    return Measurement(float(np.exp(mean)), unit, float(np.exp(mean - half)),
                       float(np.exp(mean + half)), repeats=int(arr.size), **info)


def quotient(top: Measurement, bottom: Measurement, unit: str = "ratio",
             **info: Any) -> Measurement:
    """top / bottom of two independent measurements, with the conservative interval
    [top.low / bottom.high, top.high / bottom.low] (both intervals at their worst)."""
    t_lo = top.low if top.low is not None else top.value
    t_hi = top.high if top.high is not None else top.value
    b_lo = bottom.low if bottom.low is not None else bottom.value
    b_hi = bottom.high if bottom.high is not None else bottom.value
    if bottom.value <= 0 or b_lo <= 0:
        raise ValueError("the denominator's interval reaches zero")
    return Measurement(top.value / bottom.value, unit, t_lo / b_hi, t_hi / b_lo,
                       repeats=min(top.repeats, bottom.repeats), **info)
