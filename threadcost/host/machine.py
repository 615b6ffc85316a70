"""The machine fingerprint recorded with every result.

A result without the machine it was measured on is folklore; ``fingerprint()``
gathers what explains the numbers: kernel, CPU, cores and affinity, memory,
virtualization, libc and compiler, the limits that cap threads, the clock
source, and the git commit of the code that measured.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import shutil
import subprocess
import sysconfig
from datetime import UTC, datetime
from typing import Any

from threadcost import paths
from threadcost.host import cpus, sysinfo


def _run(argv: list[str], timeout: float = 5.0) -> str | None:
    """First line of a command's output, or None (argument lists only, no shell)."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0] if text else None


def cpu_model() -> str:
    text = sysinfo.read_text("/proc/cpuinfo") or ""
    for key in ("model name", "Model", "cpu model", "Hardware"):
        m = re.search(rf"^{key}\s*:\s*(.+)$", text, re.M)
        if m:
            return m.group(1).strip()
    return platform.processor() or "unknown"


# /proc/cpuinfo fields that name the exact processor (x86; Arm in parentheses):
# fingerprint key -> the cpuinfo keys tried in order.
_CPU_ID_FIELDS = {
    "cpu_vendor": ("vendor_id", "CPU implementer"),
    "cpu_family": ("cpu family", "CPU architecture"),
    "cpu_model_number": ("model", "CPU part"),
    "cpu_stepping": ("stepping", "CPU revision"),
    "cpu_microcode": ("microcode",),
}


def cpu_identity() -> dict[str, str | None]:
    """The first processor's vendor, family, model number, stepping and microcode
    revision as /proc/cpuinfo prints them (None where the kernel does not say)."""
    text = sysinfo.read_text("/proc/cpuinfo") or ""
    first: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            if first:
                break  # the end of the first processor's block
            continue
        key, sep, value = line.partition(":")
        if sep:
            first.setdefault(key.strip(), value.strip())
    return {name: next((first[k] for k in keys if first.get(k)), None)
            for name, keys in _CPU_ID_FIELDS.items()}


def cpu_flags() -> set[str]:
    text = sysinfo.read_text("/proc/cpuinfo") or ""
    m = re.search(r"^(flags|Features)\s*:\s*(.+)$", text, re.M)
    return set(m.group(2).split()) if m else set()


# The vector and matrix register sets whose saved state makes a signal frame, or glibc's
# lazy-binding trampoline (_dl_runtime_resolve_xsave), larger: each thread's first calls
# can touch more of its stack on a CPU with AVX-512 or AMX.
VECTOR_FLAGS = ("avx", "avx2", "avx512f", "amx_tile")
AT_MINSIGSTKSZ = 51  # <linux/auxvec.h>: the kernel's signal frame size for this CPU


def saved_register_state_bytes() -> int | None:
    """The size of the CPU's saved register state as the kernel reports it to user space
    (``getauxval(AT_MINSIGSTKSZ)``: the smallest signal frame); None where the kernel or
    the C library does not say."""
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        getauxval = libc.getauxval
    except (OSError, AttributeError):
        return None
    getauxval.restype = ctypes.c_ulong
    getauxval.argtypes = [ctypes.c_ulong]
    value = int(getauxval(AT_MINSIGSTKSZ))
    return value or None


def static_tls_bytes() -> int | None:
    """Bytes every thread's stack block holds above its first frame: the thread descriptor
    (glibc's struct pthread, about 2.3 KiB) and the static TLS of the libraries loaded at
    start with its surplus, as glibc's ``_dl_get_tls_static_info`` gives them (a private
    symbol; None with another C library). An idle thread's resident memory is the pages
    these bytes and its first few hundred bytes of frames span (two 4 KiB pages while
    they stay under about 7.5 KiB), one page more for each further page of static TLS
    (a library preloaded, or linked with thread-local data)."""
    import ctypes

    try:
        info = ctypes.CDLL(None)._dl_get_tls_static_info
    except (OSError, AttributeError):
        return None
    size, align = ctypes.c_size_t(0), ctypes.c_size_t(0)
    info.restype = None
    info.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
    info(ctypes.byref(size), ctypes.byref(align))
    return int(size.value) or None


def container() -> str:
    """'none', or the container technology this process runs in (docker, lxc, ...)."""
    detected = _run(["systemd-detect-virt", "--container"])
    if detected:
        return detected
    if os.path.exists("/.dockerenv"):
        return "docker"
    return "none"


def virtualization() -> str:
    """'none' on bare metal, else a hypervisor name (kvm, xen, ...) or 'vm'."""
    detected = _run(["systemd-detect-virt", "--vm"])
    if detected and detected != "none":
        return detected
    hyper = sysinfo.read_text("/sys/hypervisor/type")
    if hyper:
        return hyper
    vendor = (sysinfo.read_text("/sys/class/dmi/id/sys_vendor") or "").lower()
    for name in ("qemu", "kvm", "vmware", "microsoft", "xen", "amazon", "google"):
        if name in vendor:
            return name
    if "hypervisor" in cpu_flags():
        return "vm"
    return "none"


def smt_siblings() -> list[list[int]]:
    """Groups of logical CPUs that share a core, for the CPUs this process may use."""
    return cpus.smt_siblings()


def preemption(config: dict[str, str]) -> str:
    """The preemption model: the live one where the kernel shows it, else the build's."""
    live = sysinfo.read_text("/sys/kernel/debug/sched/preempt")
    if live:  # e.g. "none voluntary (full) lazy": the active model is in parentheses
        m = re.search(r"\((\w+)\)", live)
        if m:
            return f"{m.group(1)} (live, /sys/kernel/debug/sched/preempt)"
    for key, name in (("CONFIG_PREEMPT_RT", "realtime"), ("CONFIG_PREEMPT", "full"),
                      ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
                      ("CONFIG_PREEMPT_NONE", "none")):
        if config.get(key) == "y":
            dynamic = " (PREEMPT_DYNAMIC: may be changed at boot)" if config.get(
                "CONFIG_PREEMPT_DYNAMIC") == "y" else ""
            return f"{name}, as built{dynamic}"
    version = platform.uname().version
    for word, name in (("PREEMPT_RT", "realtime"), ("PREEMPT_DYNAMIC", "dynamic"),
                       ("PREEMPT", "full")):
        if word in version:
            return f"{name} (from uname -v; the active model is not readable)"
    return "unknown"


def cpu_time_accounting(config: dict[str, str]) -> str:
    """How the kernel charges user/system CPU time (what getrusage reports)."""
    if config.get("CONFIG_VIRT_CPU_ACCOUNTING_GEN") == "y":
        return ("precise at kernel entry and exit on nohz_full CPUs "
                "(VIRT_CPU_ACCOUNTING_GEN), sampled at the tick elsewhere")
    if config.get("CONFIG_TICK_CPU_ACCOUNTING") == "y":
        return "sampled at the scheduler tick (TICK_CPU_ACCOUNTING)"
    return "unknown"


def numpy_thread_pools() -> list[dict[str, Any]]:
    """numpy's BLAS/OpenMP thread pools (threadpoolctl): library, API, threads."""
    try:
        import numpy  # noqa: F401  (loads the BLAS threadpoolctl inspects)
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [{k: info.get(k) for k in ("user_api", "internal_api", "num_threads", "version",
                                      "threading_layer")}
            for info in threadpool_info()]


def hypervisor() -> dict[str, Any]:
    """What says this is a virtual machine: the CPU flag, /sys/hypervisor, DMI strings."""
    return {"cpu_flag": "hypervisor" in cpu_flags(),
            "type": sysinfo.read_text("/sys/hypervisor/type"),
            "vendor": sysinfo.read_text("/sys/class/dmi/id/sys_vendor"),
            "product": sysinfo.read_text("/sys/class/dmi/id/product_name")}


def compiler_version() -> str | None:
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return _run([cc, "--version"]) or _run(["cc", "--version"])


# What `make paper` itself rewrites: a change there is the run's output, not the code's.
GENERATED_PATHS = ("data", "figures", "reference")


def git_commit() -> dict[str, Any]:
    """The commit of the code, and whether the code (outside generated outputs) changed."""
    head = _run(["git", "-C", str(paths.REPO_ROOT), "rev-parse", "HEAD"])
    if head is None or not re.fullmatch(r"[0-9a-f]{40}", head):
        return {"commit": None, "dirty": None}
    status = subprocess.run(
        ["git", "-C", str(paths.REPO_ROOT), "status", "--porcelain", "--untracked-files=no",
         "--", ".", *(f":(exclude){p}" for p in GENERATED_PATHS)],
        capture_output=True, text=True, check=False, timeout=10)
    return {"commit": head, "dirty": bool(status.stdout.strip())}


def limits() -> dict[str, Any]:
    """The limits that cap threads and memory, as this process sees them."""
    out: dict[str, Any] = {}
    for name in ("STACK", "NPROC", "AS", "NOFILE"):
        soft, hard = sysinfo.rlimit(name)
        out[f"rlimit_{name.lower()}"] = {"soft": soft, "hard": hard}
    for key in ("kernel.threads-max", "kernel.pid_max", "vm.max_map_count",
                "vm.overcommit_memory"):
        out[key] = sysinfo.sysctl(key)
    out["cgroup.pids.max"] = sysinfo.cgroup_value("pids.max")
    out["cgroup.memory.max"] = sysinfo.cgroup_value("memory.max")
    out["running_as_root"] = sysinfo.is_root()
    return out


# What sets the numbers, beyond the readable prefix: two fingerprints that differ in
# one of these are two machines (their runs get two folders and are never pooled).
IDENTITY_LABELS = {
    "arch": "architecture", "cpu_model": "CPU model name", "cpu_vendor": "CPU vendor",
    "cpu_family": "CPU family", "cpu_model_number": "CPU model number",
    "cpu_stepping": "CPU stepping", "cpu_microcode": "CPU microcode",
    "kernel_release": "kernel release", "mitigations": "CPU vulnerability mitigations",
    "logical_cpus": "logical CPUs", "mem_gib": "memory (GiB)",
    "virtualization": "virtualization", "usable_cpus": "usable CPUs (affinity mask)",
}


def usable_cpus(fp: dict[str, Any]) -> int | None:
    """How many CPUs the measuring process could use when fewer than the machine has
    (a restricted affinity mask: ``taskset -c 0 make paper``); None when all of them."""
    mask, logical = fp.get("affinity"), fp.get("logical_cpus")
    if isinstance(mask, list) and mask and isinstance(logical, int) and len(mask) < logical:
        return len(mask)
    return None


def identity(fp: dict[str, Any]) -> dict[str, Any]:
    """The fields of a fingerprint that set performance (see IDENTITY_LABELS).

    A field an older fingerprint did not record (CPU family, model number,
    stepping and microcode before they were recorded) is None: such a run is
    told apart from a run that records them, never assumed equal to it.
    """
    kernel = str(fp.get("kernel") or "")
    release = kernel.split()[-1] if kernel.split() else None
    mem_kib = fp.get("mem_total_kib")
    mitigations = fp.get("cpu_vulnerabilities")
    return {
        "arch": fp.get("arch"), "cpu_model": fp.get("cpu_model"),
        **{key: fp.get(key) for key in _CPU_ID_FIELDS},
        "kernel_release": release,
        "mitigations": dict(sorted(mitigations.items()))
        if isinstance(mitigations, dict) else None,
        "logical_cpus": fp.get("logical_cpus"),
        "mem_gib": round(mem_kib / 1024 / 1024) if isinstance(mem_kib, int | float) else None,
        "virtualization": fp.get("virtualization"),
        # only where the mask is restricted, so the ids of full-mask runs stay as they were
        **({"usable_cpus": usable_cpus(fp)} if usable_cpus(fp) is not None else {}),
    }


def identity_hash(fp: dict[str, Any]) -> str:
    """A short hash (8 hex digits) of :func:`identity`."""
    text = json.dumps(identity(fp), sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def identity_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """How two fingerprints differ in what sets performance, one phrase a field
    (e.g. "kernel release 6.18.44-fc-v595 vs 6.18.44-fc-v782"); [] when the same."""
    ia, ib = identity(a), identity(b)
    out = []
    for key, label in IDENTITY_LABELS.items():
        va, vb = ia.get(key), ib.get(key)
        if va == vb:
            continue
        if key == "usable_cpus":
            out.append(f"{label} {va or 'all'} vs {vb or 'all'}")
            continue
        if key == "mitigations" and isinstance(va, dict) and isinstance(vb, dict):
            names = sorted(k for k in set(va) | set(vb) if va.get(k) != vb.get(k))
            out.append(f"{label} ({', '.join(names)})")
        elif key == "mitigations":
            out.append(f"{label} ({'recorded' if va else 'not recorded'} vs "
                       f"{'recorded' if vb else 'not recorded'})")
        else:
            out.append(f"{label} {_shown(va)} vs {_shown(vb)}")
    return out


def _shown(value: Any) -> str:
    return "not recorded" if value is None else str(value)


def id_prefix(fp: dict[str, Any]) -> str:
    """The readable part of a machine id: arch, CPU name, CPUs, memory, virtualization."""
    model = re.sub(r"\(r\)|\(tm\)|cpu|processor|@.*$", "", str(fp["cpu_model"]).lower())
    model = re.sub(r"[^a-z0-9]+", "-", model).strip("-")[:40] or "cpu"
    mem_gib = round(fp["mem_total_kib"] / 1024 / 1024)
    virt = re.sub(r"[^a-z0-9]+", "-", str(fp["virtualization"]).lower()).strip("-") or "unknown"
    arch = re.sub(r"[^a-z0-9_]+", "-", str(fp["arch"]).lower()).strip("-") or "unknown"
    usable = usable_cpus(fp)
    cpus_part = f"{usable}of{int(fp['logical_cpus'])}" if usable else str(int(fp["logical_cpus"]))
    return f"{arch}-{model}-{cpus_part}cpu-{mem_gib}g-{virt}"


def machine_id(fp: dict[str, Any] | None = None) -> str:
    """A name for this machine, used as its data/ folder: a readable prefix
    (arch, CPU name, CPUs, memory, virtualization) and a short hash of everything
    that sets performance (:func:`identity`), e.g.
    ``x86_64-amd-epyc-2cpu-24g-kvm-3f2a9c1d``. Not the hostname: two hosts alike
    in all of these share a folder; hosts that differ in CPU stepping, microcode,
    kernel or mitigations do not.
    """
    fp = fp or fingerprint(include_git=False)
    return f"{id_prefix(fp)}-{identity_hash(fp)}"


def fingerprint(include_git: bool = True) -> dict[str, Any]:
    """Everything recorded about the machine with a result (JSON-ready)."""
    uname = platform.uname()
    config, config_source = sysinfo.kernel_config()
    flags = cpu_flags()
    fp: dict[str, Any] = {
        "hostname": uname.node,
        "kernel": f"{uname.system} {uname.release}",
        "kernel_version": uname.version,
        "arch": uname.machine,
        "cpu_model": cpu_model(),
        **cpu_identity(),
        "logical_cpus": os.cpu_count(),
        "affinity": sysinfo.affinity(),
        "smt_siblings": smt_siblings(),
        "mem_total_kib": sysinfo.meminfo_kib("MemTotal") or 0,
        "mem_available_kib": sysinfo.mem_available_kib(),
        "page_size": sysinfo.PAGE_SIZE,
        "virtualization": virtualization(),
        "container": container(),
        "glibc": " ".join(os.confstr("CS_GNU_LIBC_VERSION").split()[1:])
        if hasattr(os, "confstr") else None,
        "libpthread": os.confstr("CS_GNU_LIBPTHREAD_VERSION")
        if hasattr(os, "confstr") else None,
        "compiler": compiler_version(),
        "python": platform.python_version(),
        "clocksource": sysinfo.read_text(
            "/sys/devices/system/clocksource/clocksource0/current_clocksource"),
        "clocksources_available": sysinfo.read_text(
            "/sys/devices/system/clocksource/clocksource0/available_clocksource"),
        "cpu_vulnerabilities": sysinfo.cpu_vulnerabilities(),
        "kernel_config": config,
        "kernel_config_source": config_source,
        "preemption": preemption(config),
        "hz": int(config["CONFIG_HZ"]) if config.get("CONFIG_HZ", "").isdigit() else None,
        "cpu_time_accounting": cpu_time_accounting(config),
        "pcid": "pcid" in flags,
        "invpcid": "invpcid" in flags,
        "vector_extensions": [f for f in VECTOR_FLAGS if f in flags],
        "saved_register_state_bytes": saved_register_state_bytes(),
        "static_tls_bytes": static_tls_bytes(),
        "thread_stack_min_kib": sysinfo.thread_stack_min_kib(),
        "transparent_hugepages": sysinfo.transparent_hugepages(),
        "hypervisor": hypervisor(),
        "numpy_thread_pools": numpy_thread_pools(),
        "limits": limits(),
        "time_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    if include_git:
        fp["git"] = git_commit()
    return fp


def describe(fp: dict[str, Any]) -> str:
    """The fingerprint in one human sentence (for the machine card)."""
    virt = fp["virtualization"]
    where = "bare metal" if virt == "none" else f"a virtual machine ({virt})"
    if fp.get("container", "none") != "none":
        where += f", inside a {fp['container']} container"
    return (f"{fp['cpu_model']}, {fp['logical_cpus']} logical CPUs "
            f"({len(fp['affinity'])} usable), {fp['mem_total_kib'] / 1024**2:.1f} GiB RAM, "
            f"{fp['kernel']}, glibc {fp['glibc']}, running on {where}.")
