"""What a verdict's words say is what was found (#49): shape readings worded by kind,
one why per distinct cause, one take-away line per claim.

- **Shape readings by kind**: every shape reading declares what its source states, a
  relation in words (judged by the words' bound, "holds" / "fails") or a factor it
  publishes (judged against that factor, worded as one: "differs here: grows 2.7x against
  2x published: steeper here"); on constructed readings the same measured growth holds
  the words "grows with" and differs from a published factor, each worded so.
- **One why per cause**: two readings put down to one cause (each with its own context)
  give the claim one why, naming both readings; on every folder of data/ no claim repeats
  a cause.
- **Take-away**: every claim of every folder leads with one line (in ``claims --json``
  too) that names what holds and what differs, by how much, in its readings' words.
"""

from __future__ import annotations

from typing import cast

import pytest

from tests.test_every_folder_renders import DATA, machine_folders
from threadcost import claims
from threadcost.claims import catalogue, readings
from threadcost.claims.model import (
    CONTRADICTED,
    FACTOR,
    SUPPORTED,
    WORDS,
    AssertionVerdict,
    Reading,
    Why,
)
from threadcost.measured.measurement import Measurement
from threadcost.measured.runs import Runs

GROWTH = Measurement(2.70, "ratio", 2.62, 2.78, repeats=5)
NO_RUNS = cast(Runs, None)  # the constructed selectors read nothing


def _grows(states: str) -> Reading:
    if states == WORDS:
        return Reading("Fork grows with the parent's memory", "ratio", 1.0, None,
                       lambda runs: GROWTH, timing=True, published=2.0,
                       tolerance_words="grows: above 1x", quote="growing with", states=WORDS)
    return Reading("Fork's growth factor, 0 to 4 MB", "ratio", 1.6, 2.4, lambda runs: GROWTH,
                   timing=True, published=2.0, tolerance_words="about 2 (+/- 20%)",
                   quote="22.3 / 44.7 µs", states=FACTOR, verb="grows",
                   directions=("steeper here", "flatter here"))


def test_a_relation_in_words_is_judged_by_its_words() -> None:
    v = readings.judge_reading("shape", _grows(WORDS), NO_RUNS)
    assert v.verdict == SUPPORTED and v.words == "holds" and v.states == WORDS


def test_a_published_factor_is_judged_and_worded_as_a_factor() -> None:
    v = readings.judge_reading("shape", _grows(FACTOR), NO_RUNS)
    assert v.verdict == CONTRADICTED and v.states == FACTOR
    assert v.words == "differs here: grows 2.7x against 2x published: steeper here"
    assert claims.summary.bucket(v) == "differs"  # a factor differs, a relation fails


def test_every_shape_reading_declares_its_kind() -> None:
    for c in catalogue.CLAIMS:
        for kind, r in c.readings():
            if kind != "shape":
                continue
            assert r.states in (WORDS, FACTOR), (c.id, r.text)
            if r.states == FACTOR:  # a factor is judged against the one published
                assert r.published is not None, (c.id, r.text)
            else:  # words are judged by their bound, never "about" a factor
                assert not r.tolerance_words.startswith("about"), (c.id, r.text)


@pytest.fixture(scope="module", params=machine_folders())
def folder(request: pytest.FixtureRequest) -> list[claims.ClaimVerdict]:
    return claims.judge(request.param, DATA)


def test_every_folders_shape_readings_speak_by_kind(folder: list[claims.ClaimVerdict]) -> None:
    records = {c.id: c for c in catalogue.CLAIMS}
    for c in folder:
        # no reading lost: every reading of the record is judged
        assert len(c.assertions) == len(records[c.id].readings()), c.id
        for a in c.shape:
            if a.verdict not in (SUPPORTED, CONTRADICTED):
                continue
            if a.states == WORDS:
                assert a.words in ("holds", "fails"), (c.id, a.text, a.words)
            else:
                assert "published" in a.words and a.words.split(":")[0] in (
                    "holds", "differs here"), (c.id, a.text, a.words)
                assert not a.words.startswith("fails"), (c.id, a.text)


def _verdict(text: str, *whys: Why) -> AssertionVerdict:
    return AssertionVerdict(text, 2.0, 1.0, 1.5, "ns", 5, CONTRADICTED, {}, "r", why=whys)


def test_one_cause_given_for_two_readings_is_one_why() -> None:
    head = "unexplained: no system-call cost was published."
    pipe = Why(f"{head} For context, not a cause: a call costs 164 ns, a pipe I/O 816 ns",
               {"syscall": 164.0, "pipe_write_read": 816.0}, explains=False)
    condvar = Why(f"{head} For context, not a cause: a call costs 164 ns",
                  {"syscall": 164.0}, explains=False)
    other = Why("a wake-up on another CPU costs more here")
    groups = readings.by_cause([_verdict("pipe", pipe), _verdict("condvar", condvar),
                                _verdict("unpinned", other)])
    assert [g.readings for g in groups] == [("pipe", "condvar"), ("unpinned",)]
    assert groups[0].why is pipe  # the one that gives the most context
    line = readings.sentence("C99", [_verdict("pipe", pipe), _verdict("condvar", condvar)])
    assert line.count(head) == 1


def test_no_folder_repeats_a_cause(folder: list[claims.ClaimVerdict]) -> None:
    for c in folder:
        causes = [readings.cause_of(g.why) for g in c.whys]
        assert len(causes) == len(set(causes)), c.id
        assert c.sentence.count("For context, not a cause") <= len(c.whys), c.id
        given = {t for g in c.whys for t in g.readings}
        assert given == {a.text for a in c.assertions if a.why}, c.id


def test_a_takeaway_names_what_holds_and_what_differs_by_how_much() -> None:
    held = AssertionVerdict("Thread launch (8 MB / 0)", 1.0, 0.9, 1.1, "ratio", 5, SUPPORTED,
                            {}, "r", kind="shape", states=WORDS, words="holds")
    slower = AssertionVerdict("Fork launch, 0 MB", 30.0, 20.0, 25.0, "µs", 5, CONTRADICTED,
                              {}, "r", words="differs here: 1.4x slower")
    steeper = AssertionVerdict("Fork growth, 0 to 4 MB", 2.7, 1.6, 2.4, "ratio", 5,
                               CONTRADICTED, {}, "r", kind="shape", states=FACTOR,
                               words="differs here: grows 2.7x against 2x published: "
                                     "steeper here")
    line = readings.takeaway("C99", [held, slower, steeper])
    assert line == ("C99: Holds here: Thread launch. Differs here: Fork launch, 0 MB (1.4x "
                    "slower); Fork growth, 0 to 4 MB (grows 2.7x against 2x published: "
                    "steeper here).")


def test_every_claim_leads_with_its_takeaway(folder: list[claims.ClaimVerdict]) -> None:
    from threadcost.claims.readings import _short

    for c in folder:
        row = c.as_dict()
        assert next(iter(row)) == "id" and list(row)[1] == "takeaway", c.id
        assert c.takeaway.startswith(f"{c.id}: ") and len(c.takeaway) > len(c.id) + 3, c.id
        for a in c.assertions:
            if a.verdict == SUPPORTED:
                assert _short(a.text) in c.takeaway.split("Differs here")[0], (c.id, a.text)
            if a.verdict == CONTRADICTED and a.words.startswith("differs here: "):
                assert a.words.removeprefix("differs here: ") in c.takeaway, (c.id, a.text)
