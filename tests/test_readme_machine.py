"""Words about a machine come from its card, never typed (#49 item 7): the README's
description of the reference machine is the card's own sentence
(``threadcost.host.machine.describe``) and its CPU family and model, and names no
microarchitecture the card does not hold (it once said "Zen 3" of a family 25, model 17
CPU, a Zen 4)."""

from __future__ import annotations

import json
import re

from tests.conftest import REPO
from threadcost.host import machine

REFERENCE = "x86_64-amd-epyc-2cpu-24g-kvm-1650d2c6"


def test_the_readme_describes_the_reference_machine_by_its_card() -> None:
    meta = sorted((REPO / "data" / REFERENCE).glob("*/meta.json"))[-1]
    card = json.loads(meta.read_text(encoding="utf-8"))["machine"]
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    words = (machine.describe(card).removesuffix(".")
             + f" (CPU family {card['cpu_family']}, model {card['cpu_model_number']})")
    assert f"in its card's words: {words}." in readme
    assert not re.search(r"\b(?:Zen \d|Skylake|Cascade Lake|Ice Lake|Sapphire Rapids)\b",
                         readme.split("## Install")[0])
