"""The claims across machines: each claim's verdict on every machine folder of a data
folder, and the machine property that explains a verdict which flips between them.

A property is read from each folder's own runs: a yardstick measured there (an empty
system call, a wake-up on another CPU), a quantity of the same folder's runs (a
thread's RSS with 16 KiB of its stack written), or the machine card (CPUs, glibc,
kernel, the toolchains that ran). A folder that cannot feed a claim says "not measured
on this machine: <why>" in its cell, never a blank.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from threadcost.claims import logic
from threadcost.claims.model import NOT_RUN, ClaimVerdict
from threadcost.claims.runs import Runs

Property = Callable[[Runs], "str | None"]


def _card(runs: Runs, key: str) -> Any:
    for run in reversed(runs.runs):
        value = run.meta.get("machine", {}).get(key)
        if value not in (None, "", {}):
            return value
    return None


def _yard_ns(runs: Runs, name: str) -> float | None:
    from threadcost.claims import whys

    got = whys._yard(runs, name)
    return got.value if got is not None else None


def syscall(runs: Runs) -> str | None:
    """The empty system call, and a pinned pipe switch in those system calls."""
    from threadcost.claims.model import Measurement
    from threadcost.claims.read import as_published as ap
    from threadcost.claims.whys import mitigations

    call = _yard_ns(runs, "syscall")
    if call is None:
        return None
    text = f"empty system call {logic.number(call)} ns"
    per = ap.switch_in_syscalls(runs)
    if isinstance(per, Measurement):
        text += f"; pinned switch = {per.value:.1f} system calls"
    mit = mitigations(runs)
    return f"{text} ({mit})" if mit else text


def wakeup(runs: Runs) -> str | None:
    """A wake-up on another CPU, its partner idle and busy."""
    idle = _yard_ns(runs, "wakeup_cross_cpu")
    busy = _yard_ns(runs, "wakeup_cross_cpu_busy")
    if idle is None:
        return None
    text = f"wake-up on another CPU {logic.number(idle)} ns idle"
    return text + (f", {logic.number(busy)} ns busy" if busy is not None else "")


def cpus(runs: Runs) -> str | None:
    n = _card(runs, "logical_cpus")
    return f"{n} CPUs" if n else None


def idle_thread(runs: Runs) -> str | None:
    """glibc, and where an idle thread's pages lie (the touch run: idle and 16 KiB)."""
    glibc = _card(runs, "glibc")
    found = runs.matching("thread_memory_touch")
    table = runs.tables(found, "per_touch_depth")
    text = f"glibc {glibc}" if glibc else ""
    if not table.empty and {0, 16} <= set(table.touch_kib_asked):
        idle = float(table[table.touch_kib_asked == 0].rss_kib_per_thread.mean())
        wrote = float(table[table.touch_kib_asked == 16].rss_kib_per_thread.mean())
        text += (f"; RSS per idle thread {logic.number(idle)} KiB, "
                 f"{logic.number(wrote - 16)} KiB beside 16 KiB of stack written")
    return text.strip("; ") or None


def kernel(runs: Runs) -> str | None:
    k = _card(runs, "kernel")
    return str(k) if k else None


def hz(runs: Runs) -> str | None:
    value = _card(runs, "hz")
    return f"HZ={value}" if value else None


def toolchains(runs: Runs) -> str | None:
    """Which runtimes' peers ran (Go, Rust, Java), from the stored peer runs."""
    ran = set()
    for run in runs.matching("peer_runtimes"):
        for kind, row in (run.meta.get("summary", {}).get("kinds") or {}).items():
            if isinstance(row, dict) and not row.get("not_run"):
                ran.add(kind.split("-")[0])
    if any(not (r.meta.get("summary") or {}).get("skipped")
           for r in runs.matching("goroutines_million")):
        ran.add("go")
    return ("ran: " + ", ".join(sorted(ran))) if ran else "no Go, Rust or Java peer ran"


def limits(runs: Runs) -> str | None:
    lim = _card(runs, "limits") or {}
    pid = lim.get("kernel.pid_max")
    return f"kernel.pid_max {pid:,}" if isinstance(pid, int) else None


def memcpy(runs: Runs) -> str | None:
    warm, cold = _yard_ns(runs, "memcpy_64kib"), _yard_ns(runs, "memcpy_64kib_cold")
    if warm is None or cold is None:
        return None
    return f"64 KiB memcpy {logic.number(warm)} ns in cache, {logic.number(cold)} ns in none"


# claim -> (the property in words, how to read it): the one a flip is put down to
PROPERTIES: dict[str, tuple[str, Property]] = {
    "C01": ("the empty system call (mitigations)", syscall),
    "C03": ("the empty system call and the cross-CPU wake-up", lambda r: "; ".join(
        x for x in (syscall(r), wakeup(r)) if x) or None),
    "C21": ("the empty system call (mitigations)", syscall),
    "C33": ("the empty system call (mitigations)", syscall),
    "C02": ("the cross-CPU wake-up", wakeup),
    "C18": ("the cross-CPU wake-up", wakeup),
    "C20": ("the cross-CPU wake-up", wakeup),
    "C23": ("the cross-CPU wake-up", wakeup),
    "C04": ("CPUs (GOMAXPROCS)", cpus),
    "C11": ("CPUs (GOMAXPROCS)", cpus),
    "C13": ("CPUs", cpus),
    "C17": ("CPUs (saturation at 10,000 tasks)", cpus),
    "C05": ("glibc and the idle thread's stack depth", idle_thread),
    "C10": ("glibc and the idle thread's stack depth", idle_thread),
    "C12": ("glibc and the idle thread's stack depth", idle_thread),
    "C22": ("glibc and the idle thread's stack depth", idle_thread),
    "C06": ("the kernel", kernel),
    "C14": ("the scheduler tick", hz),
    "C09": ("the copy's cache state", memcpy),
    "C08": ("kernel.pid_max", limits),
    "C35": ("kernel.pid_max", limits),
}
for _cid in ("C15", "C16", "C19", "C24", "C25", "C34", "C31", "C32"):
    PROPERTIES.setdefault(_cid, ("the toolchains present", toolchains))


@dataclass(frozen=True)
class Row:
    """One claim across the machine folders."""

    claim: str
    cells: dict[str, str]  # machine id -> the verdict there, or "not measured ..."
    classes: dict[str, str]  # machine id -> the verdict class (measured folders only)
    flips: bool
    property_name: str = ""
    property_values: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"claim": self.claim, "verdicts": dict(self.cells),
                "classes": dict(self.classes), "flips": self.flips,
                "property": self.property_name,
                "property_values": dict(self.property_values)}


def _cell(v: ClaimVerdict) -> str:
    if v.verdict == NOT_RUN and v.reason.startswith("no verdict"):
        return v.reason
    if v.verdict == NOT_RUN:
        reason = v.reason.replace(": not run here: ", ": ").removeprefix("not run here: ")
        return f"not measured on this machine: {reason}" if reason else \
            "not measured on this machine: no run of its experiment is stored"
    return v.label or v.verdict


def across(data_dir: str | Path | None = None,
           machine_ids: list[str] | None = None) -> tuple[list[str], list[Row]]:
    """(the machine folders, one row per claim): every folder judged on its own runs."""
    from threadcost import claims, datastore

    mids = machine_ids if machine_ids is not None else datastore.machines_with_runs(data_dir)
    per: dict[str, dict[str, ClaimVerdict]] = {}
    loaded: dict[str, Runs] = {}
    for mid in mids:
        per[mid] = {v.id: v for v in claims.judge(mid, data_dir)}
        loaded[mid] = Runs.load(mid, data_dir)
    ids = list(dict.fromkeys(cid for mid in mids for cid in per[mid]))
    rows = []
    for cid in ids:
        cells = {mid: _cell(per[mid][cid]) if cid in per[mid] else
                 "not measured on this machine: the claim is not in its catalogue"
                 for mid in mids}
        classes = {mid: per[mid][cid].verdict for mid in mids
                   if cid in per[mid] and per[mid][cid].verdict != NOT_RUN}
        # a flip: the verdict as shown (every judged reading's class) differs between two
        # machines that measured the claim
        shown = {cells[mid] for mid in classes}
        flips = len(shown) > 1
        name, values = "", {}
        if flips and cid in PROPERTIES:
            name, fn = PROPERTIES[cid]
            for mid in mids:
                try:
                    got = fn(loaded[mid])
                except (KeyError, ValueError, IndexError, TypeError):
                    got = None
                values[mid] = got or "not recorded on this machine"
        rows.append(Row(cid, cells, classes, flips, name, values))
    return list(mids), rows
