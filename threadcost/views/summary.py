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
from threadcost.experiments import specs
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


def _bytes(value: int) -> str:
    """A byte count as a reader reads it: "2,368 bytes (2.3 KiB)"."""
    return f"{value:,} bytes" + (f" ({value / 1024:.1f} KiB)" if value >= 1024 else "")


def _recorded_bytes(fp: dict[str, Any], key: str, who: str) -> int | str:
    """A byte count the machine card recorded, or why there is none in words: "not
    recorded" (an older folder), "not known (<who> does not say)"."""
    if key not in fp:
        return "not recorded"
    size = fp[key]
    if not isinstance(size, int) or isinstance(size, bool):
        return f"not known ({who} does not say)"
    return size


def _static_tls(fp: dict[str, Any]) -> str:
    size = _recorded_bytes(fp, "static_tls_bytes", "the C library")
    return size if isinstance(size, str) else f"{_bytes(size)} at the top of every thread's stack"


def _stack_floor(fp: dict[str, Any]) -> str:
    kib = fp.get("thread_stack_min_kib")
    if not isinstance(kib, int) or isinstance(kib, bool):
        return "not recorded"
    return f"{kib:,} KiB (the C library refuses a smaller thread stack)"


def _register_state(fp: dict[str, Any]) -> str:
    size = _recorded_bytes(fp, "saved_register_state_bytes", "the kernel")
    if isinstance(size, str):
        return size
    ext = fp.get("vector_extensions")
    names = [VECTOR_WORDS.get(str(e), str(e)) for e in ext] if isinstance(ext, list) else []
    return (f"{_bytes(size)} per signal frame"
            + (f" (vector registers: {', '.join(names)})" if names else ""))


# transparent huge page settings in words (the kernel's sysfs spelling on the left)
THP_WORDS = {"always": "always", "madvise": "only where a program asks (madvise)",
             "never": "never", "inherit": "as the global setting",
             "defer": "deferred to the background", "defer+madvise":
             "deferred, or at once where a program asks (madvise)"}
VECTOR_WORDS = {"avx": "AVX", "avx2": "AVX2", "avx512f": "AVX-512", "amx_tile": "AMX"}


def _huge_pages(fp: dict[str, Any]) -> str:
    """The transparent huge page settings: the global choice, the defragmentation and
    each folio size that departs from the global choice (kernels 6.8 and later)."""
    if "transparent_hugepages" not in fp:
        return "not recorded"
    thp = fp["transparent_hugepages"]
    if not isinstance(thp, dict):
        return "not available in this kernel"

    def word(value: Any) -> str:
        return THP_WORDS.get(str(value), "not readable" if value is None else str(value))

    text = f"{word(thp.get('enabled'))}; defragmentation: {word(thp.get('defrag'))}"
    sizes = thp.get("sizes")
    if not isinstance(sizes, dict):
        return text
    order = list(sizes)
    groups: dict[str, list[str]] = {}
    for size, choice in sizes.items():
        if choice != "inherit":
            groups.setdefault(str(choice), []).append(str(size))
    own = []
    for choice, members in groups.items():
        first, last = order.index(members[0]), order.index(members[-1])
        span = (f"{_folio(members[0])} to {_folio(members[-1])}"
                if len(members) > 2 and last - first + 1 == len(members)
                else ", ".join(_folio(m) for m in members))
        own.append(f"{span}: {word(choice)}")
    return text + (f"; by page size: {'; '.join(own)}" if own else "")


def _folio(size: Any) -> str:
    """A sysfs folio size ("2048kB") in the paper's units ("2 MiB", "64 KiB")."""
    digits = str(size).removesuffix("kB")
    if not digits.isdigit():
        return str(size)
    kib = int(digits)
    return f"{kib // 1024:,} MiB" if kib >= 1024 and kib % 1024 == 0 else f"{kib:,} KiB"


def _cpu_revision(fp: dict[str, Any]) -> str:
    """Family, model number and stepping, then the microcode revision, as /proc/cpuinfo
    gives them; "not recorded" for a run stored before they were (or a CPU without them)."""
    parts = [fp.get(k) for k in ("cpu_family", "cpu_model_number", "cpu_stepping")]
    revision = (", ".join(str(p) for p in parts) if all(p not in (None, "") for p in parts)
                else "not recorded")
    micro = fp.get("cpu_microcode")
    return f"{revision}; microcode {micro}" if micro else f"{revision}; microcode not recorded"


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
        ("CPU family, model, stepping; microcode", _cpu_revision(fp)),
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
        ("smallest thread stack", _stack_floor(fp)),
        ("thread descriptor and static thread-local storage", _static_tls(fp)),
        ("saved register state", _register_state(fp)),
        ("transparent huge pages", _huge_pages(fp)),
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


def reading_guide(pages: dict[str, tuple[str, str]]) -> pd.DataFrame:
    """One row per notebook: each family's (its spec's ``title`` and ``about``) and those
    of ``pages`` (the pages of no family: file stem -> short title, what it shows), in
    the notebooks' order. The claims are those whose records name the notebook's page
    (``claims.for_page``); a notebook no record names (the claims page) shows every
    claim."""
    what = dict(sorted({**{f.notebook: (f.title, f.about) for f in specs.families()},
                        **pages}.items()))
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
