"""Context switch, part three: the Result of one configuration assembled from the
kernel's raw output (distributions, switches per round trip, baseline-relative
numbers) and the benchmark targets; re-exported by
:mod:`threadcost.experiments.context_switch.run`."""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pandas as pd

from threadcost import stats
from threadcost.experiments.context_switch.checks import EXPERIMENT
from threadcost.experiments.context_switch.kernels import LIMITS
from threadcost.experiments.thread_memory.limits import name_from_errno
from threadcost.host import sysinfo
from threadcost.native import lib
from threadcost.results import Result


def assemble(p: dict[str, Any], raw: dict[str, Any], base: dict[str, np.ndarray], *,
             per_sample: bool, record_cpus: bool) -> Result:
    """Build the Result of one configuration from the kernel's raw output."""
    done = raw["completed"]
    rt = raw["samples"].astype(float)
    a, b = raw["a"], raw["b"]
    switches = a["voluntary"] + a["involuntary"] + b["voluntary"] + b["involuntary"]
    spr = switches / done if done else float("nan")
    per_switch_ok = done > 0 and spr >= 0.5
    cpus_a = sorted({int(c) for c in raw["cpu_a"]})
    cpus_b = sorted({int(c) for c in raw["cpu_b"]})
    if not record_cpus:
        cpus_a = [a["cpu_after_pin"]] if a["cpu_after_pin"] >= 0 else []
        cpus_b = [b["cpu_after_pin"]] if b["cpu_after_pin"] >= 0 else []
    rt_dist = stats.distribution(rt) if per_sample else stats.distribution([])
    whole_mean = raw["total_ns"] / done if done else float("nan")
    summary: dict[str, Any] = {
        "round_trip_ns": rt_dist,
        "switch_ns": stats.distribution(rt / spr) if per_sample and per_switch_ok
        else stats.distribution([]),
        "switches_per_round_trip": spr,
        "switches": {"a_voluntary": a["voluntary"], "a_involuntary": a["involuntary"],
                     "b_voluntary": b["voluntary"], "b_involuntary": b["involuntary"],
                     "total": switches},
        "cpu_time_ns": {"a_user": a["user_ns"], "a_sys": a["sys_ns"],
                        "b_user": b["user_ns"], "b_sys": b["sys_ns"]},
        "sys_ns_per_round_trip": (a["sys_ns"] + b["sys_ns"]) / done if done else None,
        "cpus_requested": [p["cpu_a"], p["cpu_b"]],
        "cpus_seen": sorted(set(cpus_a) | set(cpus_b)),
        "cpus_seen_a": cpus_a,
        "cpus_seen_b": cpus_b,
        "pinning_verified": _pinning_verified(p, cpus_a, cpus_b),
        "completed": done,
        "total_ns": raw["total_ns"],
        "whole_run_mean_ns": whole_mean,
        "transparent_hugepages": _thp_mode(),
    }
    if record_cpus and done:
        together = raw["cpu_a"] == raw["cpu_b"]
        summary["same_cpu_share"] = float(np.mean(together))
        if per_sample:
            summary["round_trip_ns_same_cpu"] = stats.distribution(rt[together])
            summary["round_trip_ns_different_cpus"] = stats.distribution(rt[~together])
    if per_sample and per_switch_ok:
        lo, hi = stats.median_ci95(rt / spr)
        summary["switch_ns_p50_ci95"] = [lo, hi]
    summary["baselines"] = {name: stats.distribution(v) for name, v in base.items()}
    summary.update(_derived(p, summary, base, record_cpus))
    tables: dict[str, pd.DataFrame] = {}
    if per_sample:
        frame = {"round_trip_ns": raw["samples"]}
        if record_cpus:
            frame.update(cpu_a=raw["cpu_a"], cpu_b=raw["cpu_b"])
        tables["samples"] = pd.DataFrame(frame)
    if base:
        tables["baselines"] = pd.DataFrame(
            [{"baseline": name, "ns_per_op": float(x)} for name, v in base.items()
             for x in v])
    params = {**p, "per_sample": per_sample, "record_cpus": record_cpus}
    limit_hit = None
    if raw["status"] == lib.TC_ELIMIT:
        limit_hit = {"limit": f"{name_from_errno(int(raw['err']), 'tasks')}: "
                              f"{LIMITS.get(raw['where'], 'a system limit')}",
                     "errno": raw["err"]}
    return Result(EXPERIMENT, params, summary, tables, limit_hit)


def _pinning_verified(p: dict[str, Any], cpus_a: list[int], cpus_b: list[int]) -> bool | None:
    if p["cpu_a"] < 0:
        return None
    return cpus_a == [p["cpu_a"]] and cpus_b == [p["cpu_b"]]


def _thp_mode() -> str | None:
    text = sysinfo.read_text("/sys/kernel/mm/transparent_hugepage/enabled")
    if not text:
        return None
    m = re.search(r"\[(\w+)\]", text)
    return m.group(1) if m else text


def _derived(p: dict[str, Any], s: dict[str, Any], base: dict[str, np.ndarray],
             record_cpus: bool) -> dict[str, Any]:
    """Baseline-relative numbers: instrumentation share, net switch, net of touching."""
    out: dict[str, Any] = {}
    p50 = s["round_trip_ns"]["p50"]
    if "timer" in base and math.isfinite(p50) and p50 > 0:
        timer = float(np.median(base["timer"]))
        getcpu = float(np.median(base["getcpu"])) if record_cpus else 0.0
        cost = timer + 2 * getcpu  # A stamps and notes its CPU; B notes its CPU
        out["instrumentation_ns_per_sample"] = cost
        out["instrumentation_share"] = cost / p50
    touch = float(np.median(base["touch"])) if "touch" in base else 0.0
    if p["working_set_kib"] > 0 and "touch" in base:
        out["touch_ns_p50"] = touch
        out["round_trip_minus_touch_ns"] = {
            k: s["round_trip_ns"][k] - 2 * touch for k in ("min", "p50", "p90", "p99", "max",
                                                           "mean")}
    spr = s["switches_per_round_trip"]
    if "self_hop" in base and math.isfinite(p50) and spr >= 0.5:
        hop = float(np.median(base["self_hop"]))
        out["self_hop_ns_p50"] = hop
        # what the two switches cost beyond the calls a hop makes anyway
        out["switch_net_ns_p50"] = (p50 - 2 * hop - 2 * touch) / spr
    return out


def targets(headline: Result, perf: Result | None = None,
            timing: Result | None = None) -> pd.DataFrame:
    """The issue's benchmark targets, measured: each with its value and whether it was met.

    ``headline`` is a same-cpu pipe run of threads with baselines.
    """
    s = headline.summary
    rows = []
    share = s.get("instrumentation_share")
    if share is not None:
        rows.append({"target": "timer (and CPU notes) per sample <= 2% of a round trip on one CPU",
                     "measured": f"{share:.2%}", "met": share <= 0.02})
    rate = s["completed"] / (s["total_ns"] / 1e9) if s["total_ns"] else float("nan")
    rows.append({"target": "100,000 round trips on one CPU, timed one by one, in < 2 s",
                 "measured": f"{100_000 / rate:.2f} s at this run's rate",
                 "met": 100_000 / rate < 2.0})
    if perf is not None and perf.summary.get("perf_available"):
        r = perf.summary["ratio_ours_over_perf"]
        rows.append({"target": "pipe round trip within +-15% of perf bench sched pipe -T",
                     "measured": f"ratio {r:.3f}", "met": abs(r - 1) <= 0.15})
    elif perf is not None:
        rows.append({"target": "pipe round trip within +-15% of perf bench sched pipe -T",
                     "measured": f"not run: {perf.summary.get('reason')}", "met": None})
    if timing is not None:
        r = timing.summary["ratio"]
        rows.append({"target": "per-sample mean and whole-run mean agree within 5%",
                     "measured": f"ratio {r:.3f}", "met": abs(r - 1) <= 0.05})
    return pd.DataFrame(rows)

