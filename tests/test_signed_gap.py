"""A gap between two costs measured in one run is signed, also when divided by a third
cost: fiber_gap's (ucontext - asm) / sigprocmask came out -1.07 in one repeat of a quick
paper on a loaded machine (a fresh Debian 13 root's make test), and reading it back
stopped notebook 08. Its plain ratio (ucontext / asm) stays a positive ratio."""

from __future__ import annotations

from threadcost.results import table_checks


def test_a_gap_over_a_cost_may_be_negative_and_a_ratio_may_not() -> None:
    assert table_checks.kind_of("gap_over_sigprocmask") is table_checks.SIGNED
    assert table_checks.kind_of("ucontext_over_asm") is table_checks.RATIO
