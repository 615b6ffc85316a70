"""Verdicts a kernel engineer accepts, on the committed stored runs (issue 34): each
reading like for like or a labelled substitute, every "differs" explained by a more
elementary quantity or "unexplained", saturation apart from lack of power, and each
claim's verdict on every machine folder with the property behind a flip.

Every value checked here is read from the stored runs by the claims layer; no test
computes a value of its own to compare with."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import pytest

from threadcost import claims, paths
from threadcost.claims import machines
from threadcost.claims.model import ClaimVerdict

DATA = paths.REPO_ROOT / "data"
REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"
SIXTEEN = "x86_64-intel-xeon-16cpu-126g-vm-3754101c"


def _have(*mids: str) -> None:
    for mid in mids:
        if not (DATA / mid).is_dir():
            pytest.skip(f"the committed machine folder {mid} is not in data/")


@pytest.fixture(scope="module")
def reference() -> dict[str, ClaimVerdict]:
    _have(REFERENCE)
    return {v.id: v for v in claims.judge(REFERENCE, DATA)}


@pytest.fixture(scope="module")
def sixteen() -> dict[str, ClaimVerdict]:
    _have(SIXTEEN)
    return {v.id: v for v in claims.judge(SIXTEEN, DATA)}


def test_c10_virtual_slope_leaves_out_glibcs_arena_reservations(
        reference: dict[str, ClaimVerdict]) -> None:
    vsz = reference["C10"].as_published[0]
    assert "arena" in vsz.how and vsz.setup["from tasks"] >= 8
    assert vsz.verdict == "supported"  # S1's "about 2 MB" per further thread


def test_c11_reads_s1s_own_program_over_its_repeats(reference: dict[str, ClaimVerdict]
                                                    ) -> None:
    rss = reference["C11"].as_published[0]
    assert rss.setup["variant"] == "as_published" and rss.repeats >= 5
    assert rss.verdict == "supported"
    # no why speaks of Go sizing initial stacks (the peer counts 2 KiB of stack each)
    assert not any("initial stack" in w.text for a in reference["C11"].assertions
                   for w in a.why)


def test_c14_compares_system_time_per_unit_of_work(reference: dict[str, ClaimVerdict]
                                                   ) -> None:
    c14 = reference["C14"]
    for a in c14.as_published:
        assert a.unit == "ms" and "per second of user time" in a.text
        assert a.substitute and "C rewrite" in a.substitute
    # a why, when given, is the split of system time measured in the same run, of the
    # reading's own tasks: the threads' reading is never explained by the processes'
    for a in c14.as_published:
        mode = a.setup["mode"]
        other = "threads" if mode == "processes" else "processes"
        for w in a.why:
            assert w.text == "unexplained" or {"sys_loops_s", "sys_outside_loops_s"} <= set(
                w.yardsticks)
            assert other not in w.text and (w.text == "unexplained" or mode in w.text)


def test_c22_compares_slab_with_slab(reference: dict[str, ClaimVerdict]) -> None:
    kernel = reference["C22"].as_published[1]
    assert "slab" in kernel.text and "SUnreclaim" in kernel.setup.get("counted", "")
    assert kernel.substitute and "slabtop" in kernel.substitute
    # the brigade's wider count is context, never the verdict
    assert any("wider count" in c.label for c in reference["C22"].context)


def test_c12_says_its_slab_is_not_slabtops(reference: dict[str, ClaimVerdict]) -> None:
    """S2 counted its 11 KiB with slabtop (the objects in use in every cache, reclaimable
    ones included); the runs here read SUnreclaim (unreclaimable caches, whole pages):
    the reading is a labelled substitute that says what each counts and what neither
    does, and its setup never claims slabtop's count."""
    kernel = next(a for a in reference["C12"].as_published if "Kernel memory" in a.text)
    assert "slabtop" not in kernel.text and "SUnreclaim" in kernel.setup["counted"]
    assert kernel.substitute is not None
    for words in ("SUnreclaim", "slabtop", "reclaimable", "kernel stack", "page tables"):
        assert words in kernel.substitute, words
    assert "C12" in [v.id for v in reference.values()
                     if any(a.substitute for a in v.as_published)]


def test_c04_one_measurement_one_verdict(reference: dict[str, ClaimVerdict]) -> None:
    c04 = reference["C04"]
    assert [a.unit for a in c04.as_published] == ["iterations/s"]
    assert any("same measurement" in c.label for c in c04.context)


def test_c09_statistic_setup_and_provenance(reference: dict[str, ClaimVerdict]) -> None:
    c09 = reference["C09"]
    launches = [a for a in c09.as_published if "launch" in a.text]
    assert launches and all(a.substitute and "mean of unpinned" in a.substitute
                            for a in launches)
    copy = next(a for a in c09.as_published if "memcpy" in a.text)
    assert "plot script" in copy.text and "no cache" in copy.how and "in cache" in copy.how
    if copy.verdict == "inconclusive":  # the span is the cache state, not noise
        assert copy.power is None and "cache state" in copy.reason
    # the published copy decides nothing but the copy: no other reading cites it
    for v in reference.values():
        for a in v.assertions:
            if "memcpy" not in a.text:
                assert not any("S0-code's 3" in w.text for w in a.why), (v.id, a.text)


def test_c17_saturation_is_not_reproducible_not_underpowered(
        reference: dict[str, ClaimVerdict]) -> None:
    from threadcost.claims import summary

    c17 = reference["C17"]
    saturated = [a for a in c17.assertions if "saturated" in a.reason]
    if not saturated:
        pytest.skip("the reference's sleepers runs kept up (not saturated)")
    for a in saturated:
        assert a.verdict == "not reproduced" and a.power is None
        assert a.words.startswith("not reproducible on this machine")
    under = [a for cid, a in summary.underpowered(list(reference.values())) if cid == "C17"]
    assert not any("saturated" in a.reason for a in under)


def test_c30_has_no_verdict_on_words_not_read(reference: dict[str, ClaimVerdict]) -> None:
    c30 = reference["C30"]
    assert all(a.verdict == "not run here" and a.reason.startswith("no verdict")
               for a in c30.assertions)
    assert any(c.measured is not None for c in c30.context)  # measured, shown, not judged


def test_substitutes_are_counted(reference: dict[str, ClaimVerdict]) -> None:
    tally = claims.tally_readings(list(reference.values()))
    assert tally["as_published"]["of them on a substitute"] > 0
    assert claims.tally(list(reference.values()))["substitute"] > 0
    text = " ".join(claims.folklore(list(reference.values())))
    assert "measured the way each source measured it" not in text
    assert "substitute" in text


def test_every_why_is_measured_or_unexplained(reference: dict[str, ClaimVerdict],
                                              sixteen: dict[str, ClaimVerdict]) -> None:
    for verdicts in (reference, sixteen):
        for v in verdicts.values():
            for a in v.assertions:
                for w in a.why:
                    assert (w.text == "unexplained" or w.fact or w.yardsticks
                            or (not w.explains and w.text.startswith("unexplained: "))), (
                        v.id, a.text)
                    # the pipe hand-off again is the same quantity as a pinned switch
                    if "pinned to one CPU" in a.text:
                        assert "pipe_switch_pinned" not in w.yardsticks, (v.id, a.text)


def test_sixteen_cpu_idle_thread_rss_is_explained_by_its_stack(
        sixteen: dict[str, ClaimVerdict]) -> None:
    rss = next(a for a in sixteen["C12"].as_published if a.text.startswith("RSS"))
    assert rss.verdict == "contradicted"
    (why,) = [w for w in rss.why if w.text != "unexplained"]
    assert {"rss_idle_kib", "rss_wrote_16_kib"} <= set(why.yardsticks)
    assert "deeper into its stack" in why.text


def test_claims_across_the_machine_folders(tmp_path: Path) -> None:
    """Two folders (the reference and the 16-CPU host) copied into a data folder: a row
    per claim, a cell per folder, the property behind each flip, and the CLI's JSON."""
    _have(REFERENCE, SIXTEEN)
    for mid in (REFERENCE, SIXTEEN):
        shutil.copytree(DATA / mid, tmp_path / mid)
    mids, rows = machines.across(tmp_path)
    assert sorted(mids) == sorted([REFERENCE, SIXTEEN])
    by = {r.claim: r for r in rows}
    for r in rows:
        for mid in mids:
            assert r.cells[mid], (r.claim, mid)
            if mid not in r.classes:
                assert (r.cells[mid].startswith("not measured on this machine: ")
                        or r.cells[mid].startswith("no verdict")), (r.claim, mid)
    # the idle thread's RSS flips (8 KiB against 12 KiB): put down to the stack's depth
    assert by["C05"].flips and "glibc" in by["C05"].property_name
    assert "glibc 2.39" in by["C05"].property_values[SIXTEEN]
    # a switch in system calls is read on every folder with yardsticks
    if by["C01"].flips:
        assert "system calls" in by["C01"].property_values[REFERENCE]

    from threadcost import cli
    from threadcost.commands import claims as command

    args = argparse.Namespace(machine=None, data_dir=str(tmp_path), all_machines=True,
                              json=True)
    result = cli.execute(command, args)
    listed = json.loads(result.to_json())
    assert {r["claim"] for r in listed} == set(by)
    assert all(set(r["verdicts"]) == set(mids) for r in listed)
    assert "C05" in command.format_text(result)
