"""C15, C16 and C17 (S4) read S4's own program on the peers: the ``sleepers`` runs' table
of one row per (repeat, variant), Rust threads (unpinned and pinned round-robin) and
goroutines; C15 and C17 never the C-thread sleepers sweep, never a substitute.

Each test builds the tables a run stores (no program runs), hands them to
``claims.judge`` as unsaved results, and checks the verdicts: judged on five repeats,
too few repeats, saturated CPUs, another count, a peer not run, and a run stored
before the repeats (its summary only: one repeat). C16 reads the Rust threads' page
tables (VmPTE) where the run holds them, else notebook 02's C threads, labelled a
substitute."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from threadcost import claims
from threadcost.findings import sleepers as read_s4
from threadcost.results import Result

S4 = {  # per wake-up (µs), S4's seconds / 10 million wake-ups; max RSS (KiB); page
    # tables per task (KiB: S4's 40 MB / 10,000 for threads)
    "rust_threads": {"user": 0.5, "sys": 1.6, "rss": 94_000, "pte": 4.0},
    "rust_threads_pinned": {"user": 0.3, "sys": 0.9, "rss": 94_000, "pte": 4.0},
    "goroutines": {"user": 1.0, "sys": 0.4, "rss": 35_000, "pte": 0.01},
    "tokio": {"user": 0.3, "sys": 0.05, "rss": 9_000, "pte": 0.0},
}
PTE_BEFORE = 60  # KiB: the program's page tables before its first task
VARIANTS = list(S4)


def _row(variant: str, count: int, each: int, rep: int, scale: float = 1.0,
         saturated: bool = False, page_tables: bool = True) -> dict[str, Any]:
    v = S4[variant]
    jitter = 1 + 0.01 * (rep % 3)
    wakeups = count * each
    user_s = v["user"] * scale * jitter * wakeups / 1e6
    sys_s = v["sys"] * scale * jitter * wakeups / 1e6
    wall = 0.7 * (3 if saturated else 1)
    pte = {}
    if page_tables:
        growth = v["pte"] * scale * jitter * count
        pte = {"page_tables_before_kib": PTE_BEFORE,
               "peak_page_tables_kib": PTE_BEFORE + growth,
               "page_tables_growth_kib": growth, "page_tables_per_task_kib": growth / count}
    return {**pte, "repeat": rep, "variant": variant, "cpus": 2, "planned_s": 0.7, "tasks": count,
            "wakeups": wakeups, "wall_s": wall, "spawn_s": 0.4, "user_s": user_s,
            "sys_s": sys_s, "cpu_s": user_s + sys_s,
            "cpu_us_per_wakeup": (user_s + sys_s) * 1e6 / wakeups,
            "user_us_per_wakeup": user_s * 1e6 / wakeups,
            "sys_us_per_wakeup": sys_s * 1e6 / wakeups,
            "rss_before_kib": 2800, "peak_rss_kib": v["rss"] * jitter,
            "rss_growth_kib": v["rss"] * jitter - 2800,
            "rss_per_task_kib": (v["rss"] * jitter - 2800) / count, "peak_os_threads": count,
            "cpu_busy": (user_s + sys_s) / wall, "saturated": saturated, "not_run": None}


def sleepers_run(repeats: int = 5, count: int = 10_000, each: int = 50,
                 saturated: tuple[str, ...] = (), not_run: dict[str, str] | None = None,
                 scale: dict[str, float] | None = None, page_tables: bool = True) -> Result:
    """A sleepers run as :func:`threadcost.experiments.sleepers.run` stores it
    (``page_tables=False``: as stored before the peers reported VmPTE)."""
    rows = []
    for rep in range(repeats):
        for variant in (VARIANTS if rep % 2 == 0 else VARIANTS[::-1]):
            if not_run and variant in not_run:
                rows.append({"repeat": rep, "variant": variant, "not_run": not_run[variant]})
                continue
            rows.append(_row(variant, count, each, rep, (scale or {}).get(variant, 1.0),
                             variant in saturated, page_tables))
    table = pd.DataFrame(rows)
    means = {}
    for variant in VARIANTS:
        g = table[(table.variant == variant) & table.not_run.isna()]
        means[variant] = ({"variant": variant, "not_run": not_run[variant]} if g.empty
                          else {**g.drop(columns=["repeat"]).mean(numeric_only=True).to_dict(),
                                "variant": variant, "not_run": None, "repeats": len(g)})
    params = {"count": count, "period_ms": 10, "duration_ms": each * 10, "stagger_ms": 200,
              "stack_kib": 0, "variants": VARIANTS, "address_space_mib": None,
              "repeats": repeats}
    return Result("sleepers", params, {"variants": means, "repeats": repeats},
                  {"variants": pd.DataFrame(list(means.values())), "repeats": table})


def old_sleepers_run(count: int = 10_000) -> Result:
    """A sleepers run stored before the repeats: one run per variant, its summary."""
    new = sleepers_run(repeats=1, count=count, page_tables=False)
    rows = {v: {k: val for k, val in r.items()
                if k not in ("repeat", "cpus", "planned_s", "user_us_per_wakeup",
                             "sys_us_per_wakeup", "cpu_busy", "saturated", "repeats")}
            for v, r in new.summary["variants"].items()}
    params = {k: v for k, v in new.params.items() if k != "repeats"}
    return Result("sleepers", params, {"variants": rows, "raw": {}},
                  {"variants": pd.DataFrame(list(rows.values()))})


def _sweep_only() -> Result:
    """The C-thread sweep at 10,000 tasks: what C15 and C17 read before."""
    rows = [{"repeat": rep, "count": 10_000, "variant": v, "not_run": None,
             "rss_per_task_kib": 9.0, "peak_rss_kib": 94_000, "cpu_us_per_wakeup": 2.1,
             "user_us_per_wakeup": 0.5, "sys_us_per_wakeup": 1.6, "saturated": False}
            for rep in range(5) for v in ("threads", "threads_pinned", "goroutines")]
    return Result("sleepers_sweep", {"period_ms": 10, "duration_ms": 300, "stagger_ms": 100,
                                     "stack_kib": 0, "counts": [10_000], "repeats": 5,
                                     "variants": ["threads", "threads_pinned", "goroutines"]},
                  {}, {"points": pd.DataFrame(rows)})


def thread_memory_run(per_thread_kib: float = 4.1, repeats: int = 3) -> Result:
    """Notebook 02's C threads (glibc's default 8 MiB stacks) at 10,000 idle threads:
    what C16 read before the peers reported VmPTE."""
    rows = [{"repeat": rep, "threads": 10_000, "requested": 10_000, "started": 10_000,
             "stack_bytes": 8 << 20, "touch_kib": 0,
             "page_tables_kib": per_thread_kib * 10_000 * (1 + 0.01 * rep)}
            for rep in range(repeats)]
    return Result("thread_memory", {"thread_counts": [10_000], "stack_kib": 0, "touch_kib": 0,
                                    "repeats": repeats}, {}, {"points": pd.DataFrame(rows)})


def _judge(tmp_path: Path, *results: Result) -> dict[str, claims.ClaimVerdict]:
    return {v.id: v for v in claims.judge(None, tmp_path, list(results))
            if v.id in ("C15", "C16", "C17")}


def _readings(verdict: claims.ClaimVerdict) -> list[claims.AssertionVerdict]:
    return [*verdict.as_published, *verdict.shape]


def test_c15_c17_read_the_peer_table_on_five_repeats(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run())
    for claim_id in ("C15", "C17"):
        for a in _readings(got[claim_id]):
            assert a.setup["experiment"] == "sleepers", (claim_id, a.text)
            assert a.substitute is None
            assert a.repeats == 5, (claim_id, a.text)
            assert a.verdict == "supported", (claim_id, a.text, a.reason)
            assert "fresh process" in a.how and "interleaved" in a.how
    c15, c17 = got["C15"], got["C17"]
    threads, goroutines = c15.as_published
    assert threads.measured == pytest.approx(94_000 * 1.01, rel=0.01)
    assert goroutines.measured == pytest.approx(35_000 * 1.01, rel=0.01)
    assert threads.setup["variant"] == "rust_threads"
    assert "Rust peer" in threads.how and "Go peer" in goroutines.how
    assert c15.shape[0].measured == pytest.approx(94 / 35, rel=1e-3)  # paired by repeat
    cpu = {a.setup["variant"]: a for a in c17.as_published if a.text.startswith("CPU")}
    assert set(cpu) == {"rust_threads", "rust_threads_pinned", "goroutines"}
    assert cpu["rust_threads"].measured == pytest.approx(2.1 * 1.01, rel=0.01)
    assert c17.shape[0].measured == pytest.approx(2.1 / 1.4, rel=1e-3)
    assert c17.shape[1].measured == pytest.approx(1 - 1.2 / 2.1, rel=1e-3)
    assert all(a.where == "at 10,000 tasks" for a in _readings(c17))


def test_c17_contradicted_when_the_costs_differ(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(scale={"rust_threads": 3.0,
                                               "rust_threads_pinned": 3.0}))["C17"]
    assert got.as_published[0].verdict == "contradicted"  # threads: 6.3 µs, not 2.1
    assert got.shape[0].verdict == "contradicted"  # 4.5x goroutines, not 1.5x


def test_too_few_repeats_are_not_judged(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(repeats=2))
    assert all(a.verdict == "inconclusive" and ">= 5" in a.reason
               for a in _readings(got["C17"]))
    # max RSS is not a timing: two repeats judge it
    assert all(a.verdict == "supported" for a in _readings(got["C15"]))


def test_saturated_cpus_show_cpu_but_do_not_judge_it(tmp_path: Path) -> None:
    """Saturated CPUs: the setup cannot run as published here. That is "not reproducible
    on this machine", never "underpowered": no power, no call for more repeats."""
    got = _judge(tmp_path, sleepers_run(saturated=("rust_threads",)))
    c17 = got["C17"]
    by_variant = {a.setup.get("variant"): a for a in c17.as_published
                  if a.text.startswith("CPU")}
    sat = by_variant["rust_threads"]
    assert sat.verdict == "not reproduced"
    assert sat.reason.startswith("not reproducible on this machine") and "saturated" in sat.reason
    assert sat.words.startswith("not reproducible on this machine")
    assert sat.power is None  # no call for more repeats
    assert [w.text for w in sat.why] == [sat.reason.split(": ", 1)[1]]
    assert sat.measured is not None
    assert by_variant["goroutines"].verdict == "supported"
    assert all(a.verdict == "not reproduced" and "saturated" in a.reason and a.power is None
               for a in c17.shape)
    from threadcost.claims import summary

    tally = summary.tally_readings(list(got.values()))
    assert tally["as_published"]["not reproducible"] >= 1
    assert not any(a is sat for _, a in summary.underpowered(list(got.values())))
    assert all(a.verdict == "supported" for a in _readings(got["C15"]))  # memory


def test_another_count_reads_cpu_per_wakeup_there_and_says_so(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(count=200))
    c15, c17 = got["C15"], got["C17"]
    assert c15.verdict == "not run here" and "not S4's 10,000" in c15.shape[0].reason
    assert all(a.verdict == "not run here" and "not S4's 10,000" in a.reason
               for a in c17.as_published)
    assert [a.where for a in c17.shape] == ["(at 200 tasks)"] * 2
    assert [a.verdict for a in c17.shape] == ["supported", "supported"]


def test_goroutines_not_run_names_the_reason(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(not_run={"goroutines": "not run here: Go is not "
                                                               "installed"}))
    assert "Go is not installed" in got["C15"].shape[0].reason
    assert got["C15"].as_published[0].verdict == "supported"  # Rust threads ran
    assert got["C17"].shape[0].verdict == "not run here"
    assert got["C17"].shape[1].verdict == "supported"  # pinned vs unpinned threads


def test_a_run_stored_before_the_repeats_is_one_repeat(tmp_path: Path) -> None:
    got = _judge(tmp_path, old_sleepers_run())
    for a in _readings(got["C15"]) + _readings(got["C17"]):
        assert a.repeats == 1 and a.setup["experiment"] == "sleepers", a.text
        assert "stored before the repeats" in a.how
    assert all(a.verdict == "supported" for a in _readings(got["C15"]))
    assert all(a.verdict == "inconclusive" for a in _readings(got["C17"]))


def test_the_sweep_alone_judges_neither(tmp_path: Path) -> None:
    got = _judge(tmp_path, _sweep_only())
    for claim_id in ("C15", "C17"):
        assert got[claim_id].verdict == "not run here"
        assert "no stored sleepers run" in got[claim_id].as_published[0].reason


def test_saturation_rule_is_the_experiments() -> None:
    from threadcost.experiments.user_space_tasks import sleepers

    assert (read_s4.SATURATION_SHARE, read_s4.LATE_FACTOR) == (sleepers.SATURATION_SHARE,
                                                               sleepers.LATE_FACTOR)


def test_c16_reads_the_rust_threads_page_tables(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(), thread_memory_run(per_thread_kib=9.0))["C16"]
    (a,) = got.as_published
    assert a.substitute is None and a.verdict == "supported", a.reason
    assert a.setup["experiment"] == "sleepers" and a.setup["variant"] == "rust_threads"
    assert a.repeats == 5 and a.where == "at 10,000 tasks"
    assert a.measured == pytest.approx(4.0 * 1.01, rel=0.01)  # (peak - before) / threads
    assert a.low < a.measured < a.high
    assert "2 MiB" in a.text and "VmPTE" in a.text  # what it counts, in its label
    assert "VmPTE" in a.how and "minus" in a.how and "fresh process" in a.how
    assert "2 MiB" in a.setup["stack"]


def test_c16_contradicted_when_a_thread_takes_more(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(scale={"rust_threads": 4.0}))["C16"]
    assert got.as_published[0].verdict == "contradicted"  # 16 KiB, not about 4


def test_c16_without_page_tables_falls_back_to_c_threads_labelled(tmp_path: Path) -> None:
    for run in (sleepers_run(page_tables=False), old_sleepers_run()):
        got = _judge(tmp_path, run, thread_memory_run())["C16"]
        (a,) = got.as_published
        assert a.setup["experiment"] == "thread_memory"
        assert a.substitute is not None and "C threads" in a.substitute
        assert "8 MiB" in a.substitute and "VmPTE" in a.substitute
        assert a.measured == pytest.approx(4.1 * 1.01, rel=0.01)
        assert got.verdict == "substitute"
        # C15 and C17 still read the peers' run
        assert _judge(tmp_path, run)["C15"].as_published[0].setup["experiment"] == "sleepers"


def test_c16_neither_run_is_not_run_here(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(page_tables=False))["C16"]
    assert got.verdict == "not run here"
    assert got.as_published[0].measured is None


def test_c16_at_another_count_falls_back(tmp_path: Path) -> None:
    got = _judge(tmp_path, sleepers_run(count=200), thread_memory_run())["C16"]
    assert got.as_published[0].setup["experiment"] == "thread_memory"
    assert got.as_published[0].substitute


def test_c16_pools_only_runs_holding_page_tables(tmp_path: Path) -> None:
    """A run stored before VmPTE beside one since: only the newer one is read."""
    from threadcost.store import datastore

    old = datastore.save_run(sleepers_run(page_tables=False), data_dir=tmp_path)
    new = datastore.save_run(sleepers_run(repeats=3), data_dir=tmp_path)
    verdicts = {v.id: v for v in claims.judge(None, tmp_path)}
    (a,) = verdicts["C16"].as_published
    assert a.substitute is None and a.repeats == 3
    assert new.name in a.run_id and old.name not in a.run_id
    assert verdicts["C15"].as_published[0].repeats == 5 + 3  # C15 pools both
