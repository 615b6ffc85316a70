"""Every interactive chart of the rendered paper is a valid Vega-Lite spec.

The pages embed each chart's spec without checking it against the schema as they are
drawn (threadcost.views.charts.to_html: checking took most of a second per chart
cell); this test checks what the quick rendering embedded, every chart of every page."""

from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt
from altair.utils import schemapi

EMBED = re.compile(r"vegaEmbed\(el, (\{.*?\}), \{\"mode\"")


def _specs(html: str) -> list[dict[str, object]]:
    out = []
    for match in EMBED.finditer(html):
        out.append(json.loads(match.group(1).replace("<\\/", "</")))
    return out


def test_every_embedded_chart_is_valid_vega_lite(quick_paper_html: Path) -> None:
    schema = alt.vegalite.v6.schema.core.load_schema()
    seen = 0
    for page in sorted(quick_paper_html.glob("*.html")):
        for spec in _specs(page.read_text(encoding="utf-8")):
            schemapi.validate_jsonschema(spec, schema)  # raises naming what is wrong
            seen += 1
    assert seen >= 5, f"only {seen} charts found in the rendered pages"
