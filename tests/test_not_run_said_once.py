"""A run skipped for a missing toolchain says "not run here" once: the peers' reasons
begin with those words (threadcost.peers), and page 05's goroutine and C11 lines put
their own label before them. Found on a machine with Go hidden (make paper, quick
parameters): "Goroutine rows not run here: not run here: the Go toolchain ..."."""

from __future__ import annotations

import pytest

from threadcost.peers import go
from threadcost.results import Result
from threadcost.views import million, user_space_tasks


def _go_absent(monkeypatch: pytest.MonkeyPatch) -> str:
    """The reason the Go peer gives when go is not on PATH (its own words)."""
    monkeypatch.setattr(go, "which_in", lambda name: None)
    found, why = go._find()
    assert found is None and why is not None
    return why


def test_a_skipped_goroutine_run_says_not_run_here_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    why = _go_absent(monkeypatch)
    for text in (user_space_tasks.goroutine_text(Result("peers", {}, {"skipped": why})),
                 million.goroutines_text(Result("goroutines_million", {}, {"skipped": why}))):
        assert text.lower().count("not run here") == 1, text
        assert "the Go toolchain is not installed" in text
    # a reason in other words (C11's memory check) is kept whole
    memory = "needs about 2.0 GiB and runs only with twice that available"
    assert memory in million.goroutines_text(Result("goroutines_million", {},
                                                    {"skipped": memory}))
