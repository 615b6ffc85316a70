"""The yardsticks experiment: a tidy table, one row per repeat and yardstick."""

from __future__ import annotations

import pytest

from threadcost.errors import ParameterError
from threadcost.experiments import yardsticks


def test_one_row_per_repeat_and_yardstick() -> None:
    result = yardsticks.run(repeats=2, batches=3, scale=0.05)
    frame = result.tables["repeats"]
    assert len(frame) == 2 * (len(yardsticks.YARDSTICKS) + 1)
    assert set(frame.yardstick) == {*yardsticks.YARDSTICKS, yardsticks.SWITCH}
    assert sorted(frame.repeat.unique()) == [0, 1]
    assert (frame.ns_min <= frame.ns_median).all()
    assert (frame.ns_median <= frame.ns_max).all()
    assert (frame.ops_per_batch >= 1).all()
    assert result.experiment == "yardsticks"


@pytest.mark.parametrize("kwargs", [{"repeats": 0}, {"batches": "x"}, {"scale": -1},
                                    {"cpu": 100000}])
def test_bad_input_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ParameterError):
        yardsticks.run(**kwargs)  # type: ignore[arg-type]
