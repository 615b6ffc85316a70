"""Strict numbers (#26 item 8): ASCII digits only, no '_', no empty list items, no
repeats where they mean nothing, long values cut in the message, and the API refuses
what the CLI refuses."""

from __future__ import annotations

import pytest

from tests.conftest import run_cli
from threadcost.errors import ParameterError
from threadcost.settings import validate

# Digits Python's int() and float() accept but a user did not type as ASCII.
ARABIC_100 = "\u0661\u0660\u0660"
FULLWIDTH_100 = "\uff11\uff10\uff10"
ARABIC_64 = "\u0666\u0664"
ARABIC_HALF = "\u0660.\u0665"
REFUSED = [ARABIC_100, FULLWIDTH_100, "6_4", "1e3", "100,", ",100", "100,,200", "100,100,100",
           "0x40", "64.0", " ", "+", ARABIC_64]


@pytest.mark.parametrize("text", REFUSED)
def test_integer_lists_refuse_lenient_text(text: str) -> None:
    with pytest.raises(ParameterError) as info:
        validate.integer_list("thread_counts", text, minimum=1)
    assert info.value.name == "thread_counts"


@pytest.mark.parametrize("value", [1e3, 64.0, "1e3", ARABIC_100, "6_4"])
def test_api_refuses_what_the_cli_refuses(value: object) -> None:
    with pytest.raises(ParameterError):
        validate.integer("mib", value, minimum=1)


@pytest.mark.parametrize("value", [ARABIC_HALF, "1_0", "0.5 ", "nan", "inf"])
def test_numbers_are_ascii_decimal(value: str) -> None:
    if value == "0.5 ":
        assert validate.fraction("f", value) == 0.5
        return
    with pytest.raises(ParameterError):
        validate.fraction("f", value)


def test_plain_integers_still_pass() -> None:
    assert validate.integer("mib", " 64 ", minimum=1) == 64
    assert validate.integer("mib", "+64", minimum=1) == 64
    assert validate.integer_list("n", "100,200", minimum=1) == [100, 200]
    assert validate.integer_list("n", [3, 1, 2], minimum=1) == [3, 1, 2]


def test_a_long_value_is_cut_in_the_message() -> None:
    with pytest.raises(ParameterError) as info:
        validate.integer("mib", "9" * 50 + "x" * 100_000, minimum=1)
    assert len(str(info.value)) < 400 and "..." in str(info.value)  # cut, never whole


@pytest.mark.parametrize("text", [ARABIC_100, FULLWIDTH_100, "6_4"])
def test_cli_refuses_non_ascii_digits(text: str) -> None:
    proc = run_cli("malloc-touch", "--mib", text)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_cli_refuses_empty_and_repeated_items() -> None:
    for text in ("100,", "100,100,100"):
        proc = run_cli("memory", "--threads", text)
        assert proc.returncode == 2, proc.stderr
        assert "--threads" in proc.stderr or "thread" in proc.stderr
