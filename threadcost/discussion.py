"""The paper's discussion, written from this run's data.

Each function returns Markdown built only from stored measurements, the
published table and the machine fingerprint; where a run is missing it says so
instead of guessing. Notebooks display the text; no number is typed into prose.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import verdicts
from threadcost.views.summary import TASKS, _fmt


def _value(table: pd.DataFrame, claim_id: str, quantity: str) -> float | None:
    hit = table[(table.claim_id == claim_id) & (table.quantity == quantity)
                & table.measured.notna()]
    return float(hit.measured.iloc[0]) if not hit.empty else None


def _published(table: pd.DataFrame, claim_id: str, quantity: str) -> float | None:
    hit = table[(table.claim_id == claim_id) & (table.quantity == quantity)
                & table.published.notna()]
    return float(hit.published.iloc[0]) if not hit.empty else None


def _headline(values: pd.DataFrame, task: str, metric: str) -> float | None:
    hit = values[(values.task == task) & (values.metric == metric)]
    return float(hit.value.iloc[-1]) if not hit.empty else None


def verdict_overview(table: pd.DataFrame) -> str:
    """How many claims got each verdict, by the stated rule."""
    n = verdicts.counts(table)
    total = sum(n.values())
    parts = [f"**{n[c]}** {c}" for c in verdicts.CLASSES if n[c]]
    per_claim = verdicts.claim_verdicts(table)
    not_run = per_claim[per_claim.verdict_class == "not run"].claim_id.tolist()
    text = f"Of the {total} published claims: " + ", ".join(parts) + "."
    if not_run:
        text += (f" Not run here: {', '.join(not_run)} (the table gives the reason for "
                 "each; rerun the notebook named there to fill it in).")
    return text + f"\n\n*Rule:* {verdicts.RULE}"


def memory_paragraph(table: pd.DataFrame, values: pd.DataFrame) -> str:
    """Virtual vs resident vs kernel memory of a thread."""
    rss = _headline(values, "thread", "rss_kib")
    kern = _headline(values, "thread", "kernel_kib")
    vsz = _value(table, "C12", "per_thread_vsz_kib") or _value(table, "C10", "per_thread_vsz_kib")
    lines = []
    if rss is None:
        lines.append("No per-thread memory run (notebook 02) is stored for this machine, so "
                     "the memory folklore cannot be checked here.")
        c7 = _value(table, "C07", "vsz_delta_kib")
        c7r = _value(table, "C07", "rss_delta_after_touch_kib")
        if c7 is not None and c7r is not None:
            lines.append(f"What can be said from notebook 1: an untouched 400 MiB allocation "
                         f"moved the virtual size by {_fmt(c7 / 1024)} MiB; only touching "
                         f"it moved RSS (by {_fmt(c7r / 1024)} MiB). A thread stack behaves "
                         "the same way.")
        return " ".join(lines)
    head = f"An idle thread here holds **{_fmt(rss)} KiB** of resident memory"
    if vsz is not None:
        head += (f" out of **{_fmt(vsz)} KiB** of address space reserved for it, so "
                 "\"a thread costs megabytes\" counts virtual memory and \"a thread costs a "
                 "few KiB\" counts resident memory; both are true of the same thread")
    lines.append(head + ".")
    if kern is not None:
        share = kern / (rss + kern) * 100
        lines.append(f"The kernel adds **{_fmt(kern)} KiB** per thread (its kernel stack, "
                     f"task structures and page tables) that no RSS figure shows: RSS hides "
                     f"{share:.0f}% of what an idle thread really costs on this machine.")
    else:
        lines.append("The kernel-side memory per thread was not measured in this run.")
    g = _headline(values, "goroutine", "rss_kib")
    if g is not None:
        total = rss + (kern or 0.0)
        lines.append(f"A goroutine took {_fmt(g)} KiB here, {total / g:.1f}x less than a "
                     f"thread{' counted with its kernel memory' if kern else ''}.")
    return " ".join(lines)


def switch_paragraph(table: pd.DataFrame, fp: dict[str, Any]) -> str:
    """Pinned vs unpinned switches, threads vs goroutines, and the VM effect."""
    pinned = _value(table, "C01", "switch_pinned_ns")
    unpinned = _value(table, "C02", "switch_unpinned_ns")
    gor = _value(table, "C04", "goroutine_switch_ns")
    if pinned is None and unpinned is None:
        return ("No context-switch run (notebook 04) is stored for this machine, so the "
                "switch claims (C01..C03) are not checked here.")
    virt = fp.get("virtualization", "none")
    lines = []
    if pinned is not None:
        pub = _published(table, "C01", "switch_pinned_ns")
        theirs = table[table.claim_id == "C01"].their_machine.iloc[0]
        lines.append(f"A thread-to-thread switch with both threads pinned to one CPU took "
                     f"**{_fmt(pinned / 1000)} µs** here" +
                     (f" against {_fmt(pub / 1000)} µs published (C01, measured on: {theirs})"
                      if pub else "") + ".")
    if pinned is not None and unpinned is not None:
        ratio = unpinned / pinned
        way = "more" if ratio > 1 else "less"
        lines.append(f"Unpinned, a switch cost {_fmt(unpinned / 1000)} µs, {ratio:.1f}x the "
                     f"pinned one ({way}): when the two threads sit on different CPUs each "
                     "hand-off also pays a cross-CPU wake-up.")
        if virt != "none":
            lines.append(f"This machine is a virtual machine ({virt}): a cross-CPU wake-up "
                         "goes through virtual CPUs the hypervisor schedules, which is where "
                         "unpinned numbers in a VM drift furthest from bare-metal ones.")
    if gor is not None and pinned is not None:
        lines.append(f"Two goroutines passing a message switched in {_fmt(gor)} ns, "
                     f"{pinned / gor:.0f}x cheaper than the pinned thread switch: no kernel "
                     "entry, no scheduler of the operating system.")
    return " ".join(lines)


def launch_paragraph(table: pd.DataFrame) -> str:
    thread = _value(table, "C09", "thread_launch_ns")
    fork = _value(table, "C09", "fork_launch_ns_0mb")
    if thread is None:
        return ("No launch run (notebook 03) is stored for this machine, so C09 is not "
                "checked here.")
    text = f"Starting and joining a thread took **{_fmt(thread / 1000)} µs** here"
    if fork is not None:
        text += (f"; a fork from a small parent took {_fmt(fork / 1000)} µs, "
                 f"{fork / thread:.1f}x as long, and a fork gets dearer as the parent's "
                 "touched memory grows (notebook 3 has the slope)")
    return text + "."


def cost_sentence(values: pd.DataFrame) -> str:
    """One line per task of the headline figure: what was measured here."""
    names = {"launch_ns": ("launch", 1e-3, "µs"), "switch_ns": ("switch", 1e-3, "µs"),
             "rss_kib": ("resident", 1.0, "KiB"), "kernel_kib": ("kernel side", 1.0, "KiB")}
    lines = []
    for task in TASKS:
        got = values[values.task == task]
        if got.empty:
            lines.append(f"- **{task}**: not measured here")
            continue
        parts = [f"{names[m][0]} {_fmt(v * names[m][1])} {names[m][2]}"
                 for m, v in zip(got.metric, got.value, strict=True)]
        lines.append(f"- **{task}**: " + ", ".join(parts))
    return "\n".join(lines)
