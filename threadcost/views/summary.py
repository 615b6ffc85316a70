"""The paper's summary views: the machine card, the machine's thread limit and the runs
behind the numbers.

The headline numbers (launch, switch, memory per task) have one source,
:func:`threadcost.views.headline.cells`: notebook 00's figure, the index page's
abstract (``paper_summary.headline_numbers``) and the across-machines view all
read it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import claims, findings, textout, vocabulary
from threadcost.host import machine
from threadcost.store import datastore
from threadcost.views import tables

# --- the machine card -------------------------------------------------------------

def _limit(value: Any) -> str:
    return "unlimited" if value is None else f"{value:,}" if isinstance(value, int) else str(value)


def _cgroup(value: Any) -> str:
    """A cgroup limit in words: "max" and an absent file both mean no limit set."""
    if value is None:
        return "no limit (no cgroup file)"
    return "no limit (max)" if str(value).strip() == "max" else _limit(
        int(value) if str(value).isdigit() else value)


def _vulnerabilities(found: Any) -> str:
    """Mitigated or vulnerable entries named; the 'Not affected' ones counted."""
    if not isinstance(found, dict) or not found:
        return "not recorded"
    hit = [f"{k}: {v}" for k, v in sorted(found.items()) if v != "Not affected"]
    clear = len(found) - len(hit)
    return "; ".join([*hit, f"{clear} others not affected"]) if hit else "none affected"


def _pools(pools: Any) -> str:
    if not isinstance(pools, list):
        return "not recorded"
    if not pools:
        return "none loaded"
    # two copies of one library (numpy's and scipy's OpenBLAS) differ by version
    return ", ".join(f"{p.get('internal_api')}"
                     + (f" {p['version']}" if p.get("version") else "")
                     + f" ({p.get('num_threads')} threads)" for p in pools)


def machine_card(fp: dict[str, Any]) -> pd.DataFrame:
    """The fingerprint in human words: one row per fact that shapes the numbers."""
    lim = fp.get("limits", {})
    virt = fp.get("virtualization", "none")
    cont = fp.get("container", "none")
    smt = fp.get("smt_siblings") or []
    stack = lim.get("rlimit_stack", {}).get("soft")
    git = fp.get("git") or {}
    rows = [
        ("CPU", f"{fp.get('cpu_model')} ({fp.get('arch')})"),
        ("logical CPUs", f"{fp.get('logical_cpus')} ({len(fp.get('affinity', []))} usable by "
                         f"this process: {fp.get('affinity')})"),
        ("SMT", "yes: " + str(smt) if any(len(g) > 1 for g in smt) else "no sibling threads"),
        ("memory", f"{fp.get('mem_total_kib', 0) / 1024**2:.1f} GiB "
                   f"({fp.get('mem_available_kib', 0) / 1024**2:.1f} GiB available at start)"),
        ("runs on", "bare metal" if virt == "none" else f"a virtual machine ({virt})"),
        ("container", "none" if cont == "none" else cont),
        ("kernel", str(fp.get("kernel"))),
        ("C library", f"glibc {fp.get('glibc')} ({fp.get('libpthread')})"),
        ("compiler", str(fp.get("compiler"))),
        ("clock source", str(fp.get("clocksource"))
         + (f" (available: {fp['clocksources_available']})"
            if fp.get("clocksources_available") else "")),
        ("preemption model", str(fp.get("preemption", "not recorded"))),
        ("scheduler tick", f"HZ={fp['hz']}" if fp.get("hz") else "unknown"),
        ("CPU-time accounting", str(fp.get("cpu_time_accounting", "not recorded"))),
        ("CPU vulnerabilities", _vulnerabilities(fp.get("cpu_vulnerabilities"))),
        ("PCID (cheaper address-space switches)",
         "not recorded" if "pcid" not in fp else "yes" if fp["pcid"] else "no"),
        ("numpy thread pools", _pools(fp.get("numpy_thread_pools"))),
        ("page size", f"{fp.get('page_size', 0) // 1024} KiB"),
        ("default thread stack (ulimit -s)",
         "unlimited" if stack is None else f"{stack // 1024:,} KiB"),
        ("kernel.threads-max", _limit(lim.get("kernel.threads-max"))),
        ("kernel.pid_max", _limit(lim.get("kernel.pid_max"))),
        ("vm.max_map_count", _limit(lim.get("vm.max_map_count"))),
        ("vm.overcommit_memory", _limit(lim.get("vm.overcommit_memory"))),
        ("RLIMIT_NPROC (soft)", _limit(lim.get("rlimit_nproc", {}).get("soft"))
         + (" (not enforced: running as root)" if lim.get("running_as_root") else "")),
        ("RLIMIT_AS (soft)", _limit(lim.get("rlimit_as", {}).get("soft"))),
        ("cgroup pids.max", _cgroup(lim.get("cgroup.pids.max"))),
        ("cgroup memory.max", _cgroup(lim.get("cgroup.memory.max"))),
        ("code", f"git {str(git.get('commit'))[:12]}"
                 + (" (with uncommitted changes)" if git.get("dirty") else "")
         if git.get("commit") else "not a git checkout"),
    ]
    return pd.DataFrame(rows, columns=["fact", "this machine"])


def ceiling_text(data_dir: str | Path | None = None, machine_id: str | None = None) -> str:
    """How many threads this machine's limits allow: the finding ``thread_ceiling_threads``
    (notebook 02's thread_limits run, the number C08 reads), in one sentence."""
    q = findings.get("thread_ceiling_threads", data_dir, machine_id)
    if not q.measured:
        return ("How many threads this machine's limits allow was not computed here: "
                f"{q.missing}.")
    limit = str(q.extra.get("limit") or "unknown")
    if q.extra.get("note"):
        limit += f" ({q.extra['note']})"
    return (f"Computed from this machine's limits (not by starting them), one process can "
            f"start about **{findings.span(q)}** more with the default stack size; the limit "
            f"that binds first is {textout.md_text(limit)}, a kernel setting, not memory.")


# --- runs used ----------------------------------------------------------------------------

UNITS = {"kib": "KiB", "mib": "MiB", "ms": "ms", "us": "µs", "ns": "ns", "s": "s",
         "bytes": "bytes"}


def _name(key: str) -> tuple[str, str]:
    """A parameter's name in words and its unit: "stack_kib" -> ("stack", "KiB"),
    "run_timeout_s" -> ("run timeout", "s"), "cpu_a" -> ("CPU of task A", "")."""
    if key in UNITS:  # a bare unit: "mib" -> ("allocation", "MiB")
        return vocabulary.PARAMETER_WORDS.get(key, "size"), UNITS[key]
    if key in vocabulary.PARAMETER_WORDS:
        return vocabulary.PARAMETER_WORDS[key], ""
    stem, _, last = key.rpartition("_")
    unit = UNITS.get(last, "") if stem else ""
    base = stem if unit else key
    words = vocabulary.PARAMETER_WORDS.get(base) or " ".join(
        tables.WORDS.get(t, t) for t in base.split("_") if t)
    return words, unit


def _param(value: Any, unit: str = "", key: str = "") -> str:
    """A run parameter's value as a reader reads it: identifiers in words ("same-cpu":
    "one CPU"), numbers with separators and about three significant figures, each with
    its unit, lists without brackets or quotes, None as "not set" (or what it means
    for ``key``), a stack of 0 as "default", a CPU of -1 as "not pinned"."""
    if value is None:
        return vocabulary.UNSET_WORDS.get(key, "not set")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(_param(v, unit, key) for v in value) if value else "none"
    if isinstance(value, dict):
        return ", ".join(f"{_name(str(k))[0]} {_param(v)}" for k, v in value.items())
    if isinstance(value, int | float):
        if key.startswith("stack") and value == 0:
            return "default"
        if key.startswith("cpu") and value == -1:
            return "not pinned"
        number = tables.format_number(int(value) if float(value).is_integer() else value)
        return f"{number} {'byte' if unit == 'bytes' and value == 1 else unit}".rstrip()
    return vocabulary.words(value)


def parameters_text(params: dict[str, Any]) -> str:
    """A run's parameters in words: "stack 256 KiB; placement one CPU, unpinned"."""
    out = []
    for key, value in params.items():
        name, unit = _name(str(key))
        out.append(f"{name} {_param(value, unit, str(key))}")
    return "; ".join(out) or "none recorded"


def runs_table(data_dir: str | Path | None = None, machine_id: str | None = None) -> pd.DataFrame:
    """The newest run of each experiment on this machine: when, parameters (in words),
    limits hit. The run column is the run's folder name, as it is spelled on disk."""
    mid = machine_id or machine.machine_id()
    latest: dict[str, datastore.Run] = {}
    for run in datastore.list_runs(data_dir=data_dir, machine_id=mid):
        latest[run.experiment] = run
    rows = []
    for name, run in sorted(latest.items()):
        limit = run.meta.get("limit_hit")
        rows.append({"experiment": vocabulary.words(name), "run": run.meta["run_id"],
                     "when (UTC)": run.meta.get("created_utc", "").replace("T", " ")
                     .removesuffix("Z"),
                     "parameters": parameters_text(run.meta["params"]),
                     "limit hit": limit.get("limit", str(limit)) if isinstance(limit, dict)
                     else ("no" if limit is None else str(limit))})
    return pd.DataFrame(rows, columns=["experiment", "run", "when (UTC)", "parameters",
                                       "limit hit"])


# --- the reading guide of page 0 ------------------------------------------------------

def _claim_ranges(ids: list[str]) -> str:
    """C05, C06, C07, C09 -> "C05 to C07, C09": consecutive claims as one range."""
    nums = sorted({int(i[1:]) for i in ids if i[1:].isdigit()})
    groups: list[list[int]] = []
    for n in nums:
        if groups and n == groups[-1][-1] + 1:
            groups[-1].append(n)
        else:
            groups.append([n])
    parts = []
    for g in groups:
        parts += ([f"C{n:02d}" for n in g] if len(g) < 3 else [f"C{g[0]:02d} to C{g[-1]:02d}"])
    return ", ".join(parts) if parts else "—"


def reading_guide(what: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """One row per notebook of ``what`` (its file stem -> its short title and what it
    measures, in the notebook's words). The claims are those whose records name the
    notebook's page (``claims.for_page``); a notebook no record names (the claims page)
    shows every claim."""
    by_notebook = {stem: set(claims.for_page(stem)) for stem in what}
    by_notebook = {stem: ids for stem, ids in by_notebook.items() if ids}
    every = list(claims.claims().claim_id)
    rows = []
    for stem, (title, words) in what.items():
        number = stem.partition("_")[0]
        ids = sorted(by_notebook.get(stem, set())) or every
        rows.append({"notebook": f"{int(number)}. {title}" if number.isdigit() else title,
                     "what it measures": words,
                     "claims": ("every claim: " if stem not in by_notebook else "")
                     + _claim_ranges(ids)})
    return pd.DataFrame(rows).set_index("notebook")
