"""The machine card shows what sets an idle thread's memory (the smallest thread stack,
the thread descriptor and static TLS, the saved register state, the transparent huge page
settings) in words with units, this machine's as the fingerprint records them, and says
"not recorded" for a folder measured before they were recorded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from threadcost.host import machine
from threadcost.views import summary

DATA = Path(__file__).resolve().parents[1] / "data"
FACTS = ("smallest thread stack", "thread descriptor and static thread-local storage",
         "saved register state", "transparent huge pages")
# what a reader must never see: a fingerprint key, sysfs's own spelling, a Python value
RAW = re.compile(r"static_tls|stack_min|hugepage|register_state|\[|\{|\bNone\b|\d+kB|_")


def _card(fp: dict[str, object]) -> dict[str, str]:
    table = summary.machine_card(fp)
    return dict(zip(table["fact"], table["this machine"], strict=True))


def test_this_machines_card_shows_the_thread_memory_facts_in_words() -> None:
    fp = machine.fingerprint(include_git=False)
    card = _card(fp)
    for fact in FACTS:
        assert fact in card, fact
        assert not RAW.search(card[fact]), (fact, card[fact])
    assert card["smallest thread stack"].startswith(f"{fp['thread_stack_min_kib']:,} KiB")
    if isinstance(fp["static_tls_bytes"], int):
        assert card["thread descriptor and static thread-local storage"].startswith(
            f"{fp['static_tls_bytes']:,} bytes")


def test_the_huge_page_settings_read_as_words_with_sizes_in_the_papers_units() -> None:
    fp = {"transparent_hugepages": {
        "enabled": "madvise", "defrag": "defer+madvise",
        "sizes": {"16kB": "never", "32kB": "never", "64kB": "never", "128kB": "always",
                  "2048kB": "inherit"}}}
    text = _card(fp)["transparent huge pages"]
    assert text.startswith("only where a program asks (madvise); defragmentation: deferred")
    assert "16 KiB to 64 KiB: never" in text and "128 KiB: always" in text
    assert "2 MiB" not in text  # a size that follows the global setting is not repeated
    assert _card({"transparent_hugepages": None})["transparent huge pages"] == (
        "not available in this kernel")


def test_a_card_from_a_c_library_that_does_not_say_reads_not_known() -> None:
    card = _card({"static_tls_bytes": None, "saved_register_state_bytes": None})
    assert card["thread descriptor and static thread-local storage"].startswith("not known")
    assert card["saved register state"].startswith("not known")


@pytest.mark.parametrize("folder", sorted(p.name for p in DATA.iterdir()
                                          if p.is_dir() and p.name != "published"))
def test_a_stored_folder_without_them_reads_not_recorded(folder: str) -> None:
    newest = sorted((DATA / folder).glob("*/meta.json"))[-1]  # as the page reads it
    fp = json.loads(newest.read_text())["machine"]
    card = _card(fp)
    for fact, key in zip(FACTS, ("thread_stack_min_kib", "static_tls_bytes",
                                 "saved_register_state_bytes", "transparent_hugepages"),
                         strict=True):
        if key not in fp:
            assert card[fact] == "not recorded", (folder, fact)
        assert not RAW.search(card[fact]), (folder, fact, card[fact])


def test_the_card_names_the_cpu_revision_and_microcode() -> None:
    """The guide asks that the machine be recorded with its microcode: the fingerprint
    holds it, the card shows it beside family, model and stepping."""
    fp = machine.fingerprint(include_git=False)
    text = _card(fp)["CPU family, model, stepping; microcode"]
    if fp.get("cpu_microcode"):
        assert text.endswith(f"microcode {fp['cpu_microcode']}")
    assert _card({})["CPU family, model, stepping; microcode"] == (
        "not recorded; microcode not recorded")
