"""A reviewer's reading of the committed reference paper (AMD, data/): the whys name no
cause they did not measure, the tallies add up to what they state, computed values say
so, and each reading's labels describe the experiment it reads.

Values are read from the stored runs by the claims layer and the findings; no test
computes a value of its own to compare with."""

from __future__ import annotations

import re

import pytest

from threadcost import claims, paths
from threadcost.claims import summary, whys
from threadcost.claims.model import AssertionVerdict, ClaimVerdict

DATA = paths.REPO_ROOT / "data"
REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


@pytest.fixture(scope="module")
def verdicts() -> list[ClaimVerdict]:
    if not (DATA / REFERENCE).is_dir():
        pytest.skip(f"the committed machine folder {REFERENCE} is not in data/")
    return claims.judge(REFERENCE, DATA)


@pytest.fixture(scope="module")
def by_id(verdicts: list[ClaimVerdict]) -> dict[str, ClaimVerdict]:
    return {v.id: v for v in verdicts}


def test_no_why_explains_by_the_same_kind_of_quantity(verdicts: list[ClaimVerdict]) -> None:
    """C02, C03 and C18 were "explained" by the wake-up yardsticks, which are the same pipe
    hand-off pinned: the claim's own kind of quantity. A why that names a cause uses no
    yardstick of its reading's kind; one that does says "unexplained" and gives context."""
    checked = 0
    for v in verdicts:
        for a in v.assertions:
            kind = whys.reading_kind(a)
            for w in a.why:
                same = [n for n in w.yardsticks if kind and whys.YARDSTICK_KIND.get(n) == kind]
                if w.explains and w.text != "unexplained":
                    checked += 1
                    assert not same, (v.id, a.text, same)
                if same:
                    assert w.text.startswith("unexplained: "), (v.id, w.text)
    assert checked >= 3
    c02 = by_reading(verdicts, "C02", "One pipe switch, unpinned")
    (why,) = c02.why
    assert not why.explains and "As a decomposition, not a cause" in why.text


def by_reading(verdicts: list[ClaimVerdict], cid: str, text: str) -> AssertionVerdict:
    return next(a for v in verdicts if v.id == cid for a in v.assertions if a.text == text)


def test_no_why_blames_a_hypervisor_it_did_not_measure(verdicts: list[ClaimVerdict]) -> None:
    for v in verdicts:
        for a in v.assertions:
            for w in a.why:
                assert "hypervisor" not in w.text and "virtual machine" not in w.text, v.id


def test_a_system_call_why_is_context_and_the_abstract_counts_causes_only(
        verdicts: list[ClaimVerdict]) -> None:
    """With no system-call cost published for the source's machine, the call here explains
    nothing: C01, C03, C21 and C33 read "unexplained" (the call stated as context), and
    the abstract's "explained by" counts only whys that name a cause."""
    seen = 0
    for v in verdicts:
        for a in v.assertions:
            for w in a.why:
                if "syscall" in w.yardsticks:
                    seen += 1
                    assert not w.explains and w.text.startswith("unexplained: "), v.id
                    assert "For context, not a cause" in w.text
    assert seen >= 5
    text = " ".join(claims.folklore(verdicts))
    assert "explained by the cost of an empty system call" not in text
    assert "explained by the cost of a cross-CPU wake-up" not in text
    differs = [a for v in verdicts if not v.finding for a in v.as_published
               if summary.bucket(a) == "differs"]
    explained = sum(1 for a in differs if a.why and a.why[0].explains
                    and a.why[0].text != "unexplained")
    got = re.search(r"Of those that differ, (.*?)\.", text)
    assert got is not None
    counts = [int(n) for n, what in re.findall(r"(\d+) (?:are|is) (unexplained|explained)",
                                                got.group(1)) if what == "explained"]
    assert sum(counts) == explained


def test_the_tallies_add_up_and_count_each_reading_by_its_words(
        verdicts: list[ClaimVerdict]) -> None:
    """C06's readings say "not reproducible on this machine" and were counted among
    "differ" and "fail"; the relations' sentence left the bucket out, and summed to 26
    of 28."""
    tally = claims.tally_readings(verdicts)
    word_of = {"holds": ("holds",), "differs": ("differs here",),
               "fails": ("fails",), "inconclusive": ("inconclusive here",),
               "not reproducible": ("not reproducible on this machine",),
               "not run here": ("not run here",), "computed": ("computed here",)}
    published = [v for v in verdicts if not v.finding]
    for kind in ("as_published", "shape"):
        rows = [a for v in published for a in v.assertions if a.kind == kind]
        counts = {k: n for k, n in tally[kind].items() if k != "of them on a substitute"}
        assert sum(counts.values()) == len(rows), kind
        for a in rows:
            assert a.words.startswith(word_of[summary.bucket(a)]), (kind, a.text, a.words)
    text = " ".join(claims.folklore(verdicts))
    for kind, pattern in (("as_published", r"Of the (\d+) numbers the sources printed[^:]*"
                                           r"\([^)]*\): (.*?) not measured\."),
                          ("shape", r"Of the (\d+) relations the sources themselves state, "
                                    r"(.*?)\.")):
        got = re.search(pattern, text)
        assert got is not None, kind
        stated = [int(n) for n in re.findall(r"(?:^|, | and )(\d+) ", got.group(2))]
        assert sum(stated) == int(got.group(1)), (kind, got.group(0))
    c06 = next(v for v in published if v.id == "C06")
    assert {summary.bucket(a) for a in c06.assertions} == {"not reproducible"}


def test_a_value_between_two_cache_states_says_it_is_computed(
        by_id: dict[str, ClaimVerdict]) -> None:
    """C01's shape (1.05) and C09's copy (2,739 ns) are geometric means of the copy in
    cache and in no cache: computed here, and said so beside the value."""
    for cid, words in (("C01", "A pinned switch is a bit quicker"), ("C09", "A 64 KiB memcpy")):
        a = next(a for a in by_id[cid].assertions if a.text.startswith(words))
        assert a.where.startswith("(computed here: the geometric mean"), (cid, a.where)
        assert "computed here" in by_id[cid].sentence


def test_c17_is_judged_where_the_sweep_shows_saturation_leaves_the_cost_alone(
        by_id: dict[str, ClaimVerdict]) -> None:
    """The Rust threads saturated the CPUs at 10,000 tasks, but page 05's sweep of C
    threads costs about the same per wake-up unsaturated: the reading is judged (and its
    why says the sweep is of C threads); where the sweep shows saturation does change the
    cost (pinned threads), "not reproducible" stays, with the sweep as its evidence."""
    c17 = by_id["C17"]
    rust = next(a for a in c17.as_published if a.text.startswith("CPU (user + system) per "
                                                                  "wake-up, Rust threads, "))
    assert rust.verdict == "contradicted" and rust.words.startswith("differs here: ")
    (why,) = rust.why
    assert why.text.startswith("unexplained: ") and not why.explains
    assert "C threads, not the peers' Rust threads" in why.text
    pinned = next(a for a in c17.as_published if "pinned round-robin" in a.text
                  and a.text.startswith("CPU"))
    assert pinned.words.startswith("not reproducible on this machine")
    assert "page 05's sweep" in pinned.reason


def test_stand_ins_are_substitutes_whatever_they_gave_and_describe_their_experiment(
        by_id: dict[str, ClaimVerdict]) -> None:
    """C13 and C22 rest on stand-ins that came out inconclusive: the legend's
    "substitute" all the same; C13's small-memory label no longer describes C14's 8 MB
    working sets."""
    for cid in ("C13", "C22"):
        assert by_id[cid].verdict == "substitute", (cid, by_id[cid].verdict)
        assert "inconclusive" in by_id[cid].label
    (c13,) = by_id["C13"].as_published
    assert c13.substitute is not None and "1M-integer" not in c13.substitute
    assert "no working set" in c13.substitute


def test_the_folded_how_is_the_method_and_the_reason_folds_under_why(
        verdicts: list[ClaimVerdict]) -> None:
    from threadcost.views import claims as view

    frame = view.assertions_table(verdicts, ["C04", "C06"])
    for (_, row), a in zip(frame.iterrows(),
                           [a for v in verdicts if v.id in ("C04", "C06")
                            for a in v.assertions], strict=True):
        assert row["assertion"].more == a.how, a.text
        if a.reason:
            assert a.reason.split(":")[0] in row["verdict"].more, a.text
    c06 = frame[frame.claim == "C06"].iloc[0]
    assert not c06["assertion"].more.startswith("measured on Linux")


def test_c33_method_says_c2_is_a_difference(by_id: dict[str, ClaimVerdict]) -> None:
    how = by_id["C33"].as_published[0].how
    assert "with the partner minus time per hop alone" in how
    assert "with the partner / per hop alone" not in how


def test_the_defaults_goroutine_switch_says_its_configuration(
        by_id: dict[str, ClaimVerdict]) -> None:
    (row,) = [r for r in by_id["C04"].context if r.label.startswith("A goroutine switch")]
    assert "runtime's defaults" in row.label and "not pinned" in row.label


def test_the_empty_system_call_prints_one_way_across_machines(
        by_id: dict[str, ClaimVerdict]) -> None:
    """Page 06 printed the AMD call as 176.5 ns across machines and 177 ns in the whys and
    the yardsticks' table: one value, one precision."""
    from threadcost.claims import logic
    from threadcost.views import across_machines

    text = across_machines.yardstick_text(DATA, [REFERENCE])
    (c01,) = [w for w in by_id["C01"].as_published[0].why]
    shown = logic.number(c01.yardsticks["syscall"])
    assert f"{shown} ns" in c01.text
    assert re.search(rf">?{re.escape(shown)} ns", text), text
    assert "176.5" not in text


def test_page_03_says_what_c09s_verdict_reads() -> None:
    """Page 03's prose said "the comparison uses the mean create time" above a table of
    means, while C09's verdicts read per-repeat medians: the prose and the table now say
    the means are context, and the verdicts a substitute that reads medians."""
    from threadcost.views import launch

    prose = (paths.REPO_ROOT / "notebooks" / "03_launch.py").read_text()
    section = prose[prose.index("## Claim C09 beside this machine"):]
    section = section[:section.index("# %%\n")]
    assert "So the comparison uses the **mean create time**" not in section
    assert "**median** create time" in section and "substitute" in section
    assert "context" in launch.MEAN_COLUMN


def test_one_million_rust_threads_count_the_program_once(
        verdicts: list[ClaimVerdict]) -> None:
    """C10's max RSS at one million Rust threads was the measured peak (4,000 threads)
    times 250: the program's fixed part was scaled with the threads. It is now the peak
    plus the further threads at C10's own per-thread RSS slope, and says so."""
    c10 = [a for v in verdicts if v.id == "C10" for a in v.assertions]
    scaled = next(a for a in c10 if a.text.startswith("One million sleeping threads: max RSS"))
    per_thread = next(a for a in c10 if a.text.startswith("Resident memory per sleeping thread"))
    assert scaled.measured is not None and per_thread.measured is not None
    how = scaled.how
    assert how.startswith("computed: the peak RSS") and "further threads at the RSS slope" in how
    peak_mib = float(re.search(r"threads \(([\d,]+) MiB", how).group(1).replace(",", ""))
    threads = int(scaled.setup["threads"])
    # the reading's own inputs, as it states them: a peak and a slope past it
    assert scaled.measured == pytest.approx(
        peak_mib + (1_000_000 - threads) * per_thread.measured / 1024, rel=0.01)
    assert scaled.measured < peak_mib * 1_000_000 / threads
    assert "cap (parameter)" not in how


def test_the_abstract_prints_the_headlines_value_of_a_quantity_a_claim_also_reads(
        verdicts: list[ClaimVerdict]) -> None:
    """The abstract printed "223 ns (C19 ...)", C19's reading (S5's mean over the
    repeats), two lines from the headline's 222 ns (the median of the same runs) for
    the same Tokio switch. A reading that declares the paper's finding of its quantity
    is given in the summary by that finding's value; its verdict keeps its own."""
    from threadcost import findings
    from threadcost.findings import headline

    declared = [(v.id, a) for v in verdicts for a in v.assertions if a.finding is not None]
    assert declared and {cid for cid, _ in declared} >= {"C19"}
    for _, a in declared:
        assert a.finding.name in findings.REGISTRY
    c19 = next(a for cid, a in declared if cid == "C19")
    assert c19.finding.name in set(headline.CELLS.values())
    text = " ".join(claims.folklore(verdicts))
    shown, own = summary.finding_text(c19.finding), summary._value(c19)
    assert f"measures {shown} (the headline's {c19.finding.statistic}; C19 holds" in text
    if own != shown:  # the reading's own value is on C19's pages, not in the summary
        assert f"measures {own}" not in text
    assert "mean over the repeats (the headline prints their median)" in c19.how
