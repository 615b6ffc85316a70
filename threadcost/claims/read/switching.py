"""Selectors of switches and echo rates (C01-C04): yardsticks, pipe echo, context
switch, Go channel ping-pong, pinned vs unpinned pairs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from threadcost import findings
from threadcost.claims.read.common import (
    holds_all,
    no_run,
)
from threadcost.findings.switch import yardstick_name
from threadcost.measured.intervals import log_ratio, over_repeats, quotient
from threadcost.measured.measurement import Measurement, Missing
from threadcost.measured.runs import Runs, run_ids
from threadcost.textout import number
from threadcost.vocabulary import words

Select = Any  # a selector: stored runs -> Measurement | Missing

# --- yardsticks (C01, and the normalisation of absolute numbers) -----------------------

def yardstick_repeats(runs: Runs) -> tuple[pd.DataFrame, list[Any]]:
    found = runs.matching("yardsticks")
    table = runs.tables(found, "repeats")
    return table, found


def yardstick(name: str) -> Any:
    """A selector: one yardstick (ns per operation), read from its finding
    (``yardstick_<name>_mean_ns``: the mean over repeats of each repeat's median batch),
    so a why, a table and a page print one value of it, by one definition."""
    def select(runs: Runs) -> Measurement | Missing:
        table, _ = yardstick_repeats(runs)
        if table.empty or name not in set(table.yardstick):
            return no_run("yardsticks", f"the {name} yardstick",
                            "the last cell of notebook 04")
        return findings.measurement(
            yardstick_name(name), runs,
            setup={"experiment": "yardsticks", "yardstick": name, "cpu": "pinned"},
            how=f"{YARDSTICK_STATISTIC}; each batch timed whole, one clock read subtracted")
    return select


# the statistic of every yardstick (the finding's), as the whys and tables label it
YARDSTICK_STATISTIC = "mean over repeats of the median batch"


# --- pipe echo (C02 stand-in, C03) ------------------------------------------------------

def _echo(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("echo", placements=holds_all("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return no_run("echo", f"the placements {words(['same-cpu', 'unpinned'])}",
                        "notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="placement",
                             values="rate_per_s")
    return wide, found


def c03_unpinned_over_pinned_rate(runs: Runs) -> Measurement | Missing:
    """echo/repeats: rate unpinned / rate same-cpu, paired by repeat."""

    return findings.measurement("echo_unpinned_over_pinned_mean_ratio", runs,
                                how="per repeat: echoes per second unpinned / pinned")


# --- context switch, one run per configuration (context for C01/C02) ----------------------

# --- Go channel ping-pong (C04) -----------------------------------------------------------

def peers_skipped(runs: Runs) -> Missing:
    reasons = [r.meta["summary"].get("skipped") for r in runs.matching("peers")]
    reason = next((r for r in reasons if r), None)
    return (Missing(f"the Go peers did not run: {reason}") if reason else
            no_run("peers", "the channel ping-pong in both modes",
                     "notebook 05; needs the Go toolchain"))


def c04_gomaxprocs1_gain(runs: Runs) -> Measurement | Missing:
    """peers summary: batch rate (no clock reads) GOMAXPROCS=1 pinned / default - 1, per run."""
    found = [r for r in runs.matching("peers")
             if "round_trips_per_s" in r.meta["summary"].get("channel_pingpong", {})]
    if not found:
        return peers_skipped(runs)
    gain = [r.meta["summary"]["channel_pingpong"]["round_trips_per_s"]
            / r.meta["summary"]["channel_pingpong_default"]["round_trips_per_s"] - 1
            for r in found]
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "peers", "modes": "default vs GOMAXPROCS=1 "
                               "pinned to one CPU", "channel": "unbuffered"},
                        how="per run: round trips per second over a batch without clock reads, "
                            "GOMAXPROCS=1 pinned / default, minus 1")


def memcpy_ns(runs: Runs) -> Measurement | Missing:

    return findings.measurement("memcpy_64kib_mean_ns", runs,
                                how="mean over repeats of the median batch; each batch "
                                    "timed whole, one clock read subtracted")


# --- pinned vs unpinned ping-pong, repeated (C02) -------------------------------------------

def placement_skipped(found: list[Any]) -> Missing | None:
    """Why the stored pinned/unpinned pairs did not run (one usable CPU), or None."""
    reason = next((r.meta["summary"]["skipped"] for r in found
                   if r.meta["summary"].get("skipped")), None)
    return Missing(f"pinned against unpinned {reason}") if reason else None


# --- goroutine pinning pairs (C04) -----------------------------------------------------------

def pinning_pairs(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    every = runs.matching("goroutine_pinning")
    found = [r for r in every if not r.meta["summary"].get("skipped")]
    table = runs.tables(found, "runs")
    if table.empty:
        reason = next((r.meta["summary"]["skipped"] for r in every
                       if r.meta["summary"].get("skipped")), None)
        return (Missing(f"the pinned/default pairs did not run: {reason}") if reason else
                no_run("goroutine_pinning", "pinned/default pairs", "notebook 05"))
    return table, found


def c04_pinning_gain(runs: Runs) -> Measurement | Missing:
    """goroutine_pinning/runs: batch rate GOMAXPROCS=1 pinned / default - 1, per pair
    (the table ``gain``'s "batch" basis, pooled over stored runs)."""
    got = pinning_pairs(runs)
    if isinstance(got, Missing):
        return c04_gomaxprocs1_gain(runs)  # older data: one peers run per pair
    table, found = got
    wide = table.pivot_table(index=["run_index", "repeat"], columns="mode",
                             values="round_trips_per_s")
    gain = (wide["gomaxprocs1_pinned"] / wide["default"] - 1).dropna()
    iters = sorted({r.meta["params"].get("iterations") for r in found})
    return over_repeats(gain, "fraction", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning", "channel": "unbuffered",
                               "modes": "default vs GOMAXPROCS=1 pinned, alternating",
                               "iterations": iters[0] if len(iters) == 1 else iters},
                        how="per pair: round trips per second over a batch without clock "
                            "reads, pinned / default, minus 1")


def goroutine_switch_pinned_ns(runs: Runs) -> Measurement | Missing:
    got = pinning_pairs(runs)
    if isinstance(got, Missing):
        return got
    table, found = got
    rows = table[table["mode"] == "gomaxprocs1_pinned"]
    return over_repeats(rows.switch_ns_batch, "ns", run_id=run_ids(found),
                        setup={"experiment": "goroutine_pinning",
                               "mode": "GOMAXPROCS=1 pinned"},
                        how="per run: a batch of channel round trips timed whole / 2")


def _placement(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    found = runs.matching("context_switch_placement", tasks="threads",
                          placements=holds_all("same-cpu", "unpinned"))
    table = runs.tables(found, "repeats")
    if table.empty:
        return placement_skipped(found) or no_run(
            "context_switch_placement", "threads pinned and unpinned", "notebook 04")
    return table, found


def switch_ns(mechanism: str, placement: str) -> Select:
    """One switch (half a round trip of a ping-pong timed whole), one mechanism and
    placement, over the repeats of context_switch_placement."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[(table.mechanism == mechanism) & (table.placement == placement)]
        if rows.empty:
            return Missing(f"no {mechanism} ping-pong {placement} is stored")
        return over_repeats(rows.switch_ns, "ns", run_id=run_ids(found),
                            setup={"experiment": "context_switch_placement",
                                   "mechanism": mechanism, "placement": placement,
                                   "tasks": "threads"},
                            how="per repeat: half the mean round trip of a ping-pong timed "
                                "whole (S0's per switch)")
    return select


def switch_ratio(mechanism: str) -> Select:
    """Unpinned / pinned switch of one mechanism, paired by repeat."""
    def select(runs: Runs) -> Measurement | Missing:
        got = _placement(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table.mechanism == mechanism]
        wide = rows.pivot_table(index=["run_index", "repeat"], columns="placement",
                                values="switch_ns")
        if "unpinned" not in wide or "same-cpu" not in wide:
            return Missing(f"no {mechanism} pair pinned and unpinned is stored")
        return log_ratio((wide["unpinned"] / wide["same-cpu"]).dropna(),
                         run_id=run_ids(found),
                         setup={"experiment": "context_switch_placement",
                                "mechanism": mechanism,
                                "placements": "same-cpu vs unpinned, interleaved"},
                         how="per repeat: one switch unpinned / pinned, this mechanism only")
    return select


def _cache_states(runs: Runs) -> tuple[pd.DataFrame, list[Any]] | Missing:
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "memcpy_64kib", "memcpy_64kib_cold"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the 64 KiB memcpy in cache and in no cache",
                        "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return wide, found


COMPUTED_BETWEEN = ("(computed here: the geometric mean of the copy in cache and in no "
                    "cache, each measured; the interval spans both)")


def _either(warm: Measurement, cold: Measurement, unit: str, **info: Any) -> Measurement:
    """One reading spanning two cache states: the value between them (their geometric
    mean: computed, and its ``where`` says so, never shown as a measurement), the interval
    from the lower end of the one to the upper end of the other (both measured)."""
    lows = [m.low if m.low is not None else m.value for m in (warm, cold)]
    highs = [m.high if m.high is not None else m.value for m in (warm, cold)]
    return Measurement(float(np.sqrt(warm.value * cold.value)), unit, min(lows), max(highs),
                       repeats=min(warm.repeats, cold.repeats),
                       spans=(f"the copy's cache state: {number(warm.value)} in cache, "
                              f"{number(cold.value)} in no cache"), where=COMPUTED_BETWEEN,
                       **info)


NO_CACHE_STATE = ("S0 gives no cache state for its 64 KiB copy (its 3 µs is a bar typed in "
                  "S0-code's plot script), so the interval spans the copy in cache and in "
                  "no cache")


def memcpy_either(runs: Runs) -> Measurement | Missing:
    """A 64 KiB memcpy in cache and in no cache, as one reading whose interval spans both."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats(wide["memcpy_64kib"].dropna(), "ns")
    cold = over_repeats(wide["memcpy_64kib_cold"].dropna(), "ns")
    return _either(warm, cold, "ns", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "memcpy": "64 KiB, in cache and in "
                          "no cache", "cpu": "pinned"},
                   how=f"per repeat, the median batch: in cache {warm.value:,.0f} ns, in no "
                       f"cache {cold.value:,.0f} ns; {NO_CACHE_STATE}")


def switch_over_memcpy_either(runs: Runs) -> Measurement | Missing:
    """Pinned pipe switch / 64 KiB memcpy, paired by repeat, for both cache states."""
    got = _cache_states(runs)
    if isinstance(got, Missing):
        return got
    wide, found = got
    warm = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib"]).dropna(), "ratio")
    cold = over_repeats((wide["pipe_switch_pinned"] / wide["memcpy_64kib_cold"]).dropna(),
                        "ratio")
    return _either(warm, cold, "ratio", run_id=run_ids(found),
                   setup={"experiment": "yardsticks", "mechanism": "pipe",
                          "placement": "same-cpu", "memcpy": "64 KiB, in cache and in no "
                          "cache"},
                   how=f"per repeat: one pinned switch / one 64 KiB memcpy, same repeat: "
                       f"{warm.value:.2f} against the copy in cache, {cold.value:.2f} in no "
                       f"cache; {NO_CACHE_STATE}")


def switch_in_syscalls(runs: Runs) -> Measurement | Missing:
    """A pinned pipe switch in empty system calls, paired by repeat (yardsticks)."""
    table, found = yardstick_repeats(runs)
    need = {"pipe_switch_pinned", "syscall"}
    if table.empty or not need <= set(table.yardstick):
        return no_run("yardsticks", "the empty system call", "the last cell of notebook 04")
    wide = table.pivot_table(index=["run_index", "repeat"], columns="yardstick",
                             values="ns_median")
    return over_repeats((wide["pipe_switch_pinned"] / wide["syscall"]).dropna(),
                        "empty system calls", run_id=run_ids(found),
                        setup={"experiment": "yardsticks"},
                        how="per repeat: half a pinned pipe round trip / one empty system "
                            "call (getppid), same repeat")


def in_units(select: Select, yard_name: str, unit: str) -> Select:
    """A time read in multiples of a yardstick of the same machine (the property a
    verdict turns on, in its own units): the reading / the yardstick's mean, with the
    conservative interval of the two."""

    def select_in_units(runs: Runs) -> Measurement | Missing:
        top, bottom = select(runs), yardstick(yard_name)(runs)
        if isinstance(top, Missing):
            return top
        if isinstance(bottom, Missing):
            return bottom
        return quotient(top, bottom, unit, run_id=f"{top.run_id}; {bottom.run_id}",
                        setup={**top.setup, "yardstick": yard_name},
                        how=f"{top.how or 'the reading'} / the {yard_name} yardstick's mean "
                            "(another run of the same machine); conservative interval")
    return select_in_units


def echo_rate(placement: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        found = runs.matching("echo", placements=holds_all(placement))
        table = runs.tables(found, "repeats")
        if table.empty:
            return no_run("echo", f"placement {placement}", "notebook 04")
        rows = table[table.placement == placement]
        return over_repeats(rows.rate_per_s, "iterations/s", run_id=run_ids(found),
                            setup={"experiment": "echo", "placement": placement,
                                   "message_bytes": found[0].meta["params"].get(
                                       "message_bytes")},
                            how="per repeat: echoes per second (two switches each)")
    return select


def goroutine(mode: str, column: str, unit: str) -> Select:
    def select(runs: Runs) -> Measurement | Missing:
        got = pinning_pairs(runs)
        if isinstance(got, Missing):
            return got
        table, found = got
        rows = table[table["mode"] == mode]
        return over_repeats(rows[column], unit, run_id=run_ids(found),
                            setup={"experiment": "goroutine_pinning", "mode": mode,
                                   "channel": "unbuffered"},
                            how=f"per run: {column.replace('_', ' ')}, a batch of channel "
                                "round trips timed whole (one iteration = one round trip)")
    return select
