"""threadcost.stats takes Student's t quantile from scipy.special (importing scipy.stats
cost about a second of every kernel): the same number t.ppf gives, bit for bit."""

from __future__ import annotations

import pytest
from scipy import stats as sps

from threadcost import stats


@pytest.mark.parametrize("p", [0.975, 0.025, 0.95, 0.995, 0.5])
def test_t_quantile_is_t_ppf(p: float) -> None:
    for df in [*range(1, 400), 1_000, 10_000, 1_000_000]:
        assert stats.t_quantile(p, df) == float(sps.t.ppf(p, df))


def test_t_quantile_without_degrees_of_freedom_is_nan_as_before() -> None:
    assert str(stats.t_quantile(0.975, 0)) == str(float(sps.t.ppf(0.975, 0))) == "nan"
