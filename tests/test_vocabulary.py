"""One vocabulary: every task kind's words typed once (a C kind's in
threadcost/vocabulary.py, a peer's runtime's in its registry entry, threadcost/peers/),
the peer registry's labels built from them, and the identifiers a run stores shown as
words (the runs table of page 06, page 07's tables and closing words)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from threadcost import paths, peers, vocabulary
from threadcost.findings.brigade import net_name, peer_name, peer_transports
from threadcost.paper import hygiene

REPO = paths.REPO_ROOT
DATA = REPO / "data"
AMD = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


def _strings(path: Path) -> set[str]:
    """Every string literal of a module (comments and f-string parts aside)."""
    out = set()
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    for tok in tokens:
        if tok.type == tokenize.STRING and not tok.string.lstrip("rbuRBU").startswith("f"):
            try:
                out.add(str(ast.literal_eval(tok.string)))
            except (SyntaxError, ValueError):
                continue
    return out


def test_each_task_label_is_typed_once() -> None:
    """A C kind's label in the vocabulary, a peer runtime's in its peer's registry entry,
    and nowhere else."""
    home = {k.label: f"threadcost/peers/{peers.LANGUAGES[k.key]}.py" if k.key in peers.KINDS
            else "threadcost/vocabulary.py" for k in vocabulary.TASK_KINDS if k.label != k.key}
    typed: dict[str, list[str]] = {}
    for path in sorted((REPO / "threadcost").rglob("*.py")):
        where = str(path.relative_to(REPO))
        hits = {label for label in set(home) & _strings(path) if home[label] != where}
        if hits:
            typed[where] = sorted(hits)
    assert typed == {}
    assert {k.key for k in vocabulary.TASK_KINDS} >= set(peers.KINDS)


def test_the_peer_registry_reads_its_labels_from_the_vocabulary() -> None:
    for name, kind in peers.KINDS.items():
        assert kind.peer_label == vocabulary.task_label(name, runtime=True)
        assert kind.peer_label.startswith(vocabulary.TASK_LABELS[name])
    assert peers.KINDS["rust-thread"].peer_label == "Rust thread (std::thread)"
    assert vocabulary.task_label("tokio-task-mt", plural=True) == \
        "Tokio tasks (multi-thread runtime)"
    assert all("," not in label for label in vocabulary.TASK_LABELS.values())  # lists read


def test_headline_rows_are_the_headline_kinds() -> None:
    assert "tokio-task-mt" not in vocabulary.TASKS
    assert set(vocabulary.TASKS) <= set(vocabulary.TASK_LABELS)


def test_stored_identifiers_read_as_words() -> None:
    assert vocabulary.words("same-cpu") == "one CPU"
    assert vocabulary.words(["same-cpu", "unpinned"]) == "one CPU, unpinned"
    assert vocabulary.words("rust-thread") == "Rust thread"
    assert vocabulary.words("as_published") == "as published"
    assert vocabulary.words("something_new") == "something new"


def test_the_runs_table_shows_words_not_parameter_identifiers() -> None:
    from threadcost.views import summary

    table = summary.runs_table(DATA, AMD)
    assert len(table) > 20
    shown = " ".join(table["experiment"]) + " " + " ".join(table["parameters"])
    snake = {w for w in re.findall(r"\b[a-z0-9]+_[a-z0-9_]+\b", shown)} - {"posix_spawn"}
    assert snake == set()
    for raw in ("same-cpu", "cross-cpu", "rust-thread", "tokio-task", "[", "None", "e+0"):
        assert raw not in shown, raw
    assert "no" in set(table["limit hit"])  # a word, not a dash that reads "not measured"
    brigade = table.set_index("experiment").loc["brigade", "parameters"]
    assert "placement one CPU, unpinned" in brigade and "stack 256 KiB" in brigade
    assert summary.parameters_text({"stack_kib": 0, "pin": None, "timeout_s": 10,
                                    "cpu_a": -1, "message_bytes": 1}) == \
        "stack default; CPUs pinned to none; timeout 10 s; CPU of task A not pinned; " \
        "message 1 byte"


def test_page_07_closes_on_this_runs_numbers_and_labels_the_published_ones() -> None:
    from threadcost.views import brigade

    text = brigade.conclusion_text(DATA, AMD)
    for name in (net_name("thread", "unpinned"), net_name("goroutine", "unpinned"),
                 net_name("epoll", "unpinned"), net_name("thread", "same-cpu"),
                 peer_name("rust-thread", "unpinned"), peer_name("tokio-task", "unpinned")):
        assert f'data-quantity="{name}"' in text, name
    closing = text.split("\n\n")[-1]
    assert closing.startswith("**Published**") and "not measured here" in closing
    assert "data-quantity" not in closing
    assert hygiene.problems(f"<p>{text}</p>") == []


def test_page_07_closing_words_without_runs(tmp_path: Path) -> None:
    from threadcost.views import brigade

    (tmp_path / "nowhere").mkdir()
    text = brigade.conclusion_text(tmp_path, "nowhere")
    assert "not measured on this machine" in text and "**Published**" in text


@pytest.mark.parametrize("placement", ["same-cpu", "unpinned"])
def test_the_peer_brigade_finding_is_net_of_the_tables_gross_hop(placement: str) -> None:
    """The table shows each kind's gross time per task per trip (I/O calls included, S5's
    unit), the one-thread brigade too; the page's finding is net of that baseline: between
    0 and the gross time."""
    from threadcost import findings
    from threadcost.store import datastore
    from threadcost.views import runtimes

    run = datastore.latest_run("peer_brigade", DATA, AMD)
    if run is None:
        pytest.skip("no peer_brigade run in the committed folder")
    table = runtimes.brigade_table(run.result())
    column = (f"per task per trip, I/O calls included, {vocabulary.words(placement)} "
              "(µs, mean over repeats)")
    link = runtimes.LINK_WORDS[peer_transports(run.result().tables["runs"])[0]]
    gross = float(table.loc[f"Rust thread, 500 tasks, {link}", column].replace(",", ""))
    alone = float(table.loc[f"{vocabulary.words('one-thread')}, 500 tasks, {link}", column]
                  .replace(",", ""))
    q = findings.get(peer_name("rust-thread", placement), DATA, AMD)
    assert q.measured
    assert 0 < q.value / 1000 < gross and alone < gross
