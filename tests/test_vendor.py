"""The vendored JavaScript: files match the committed manifest, versions agree with
Altair and the Makefile, and chart pages load only the local copies."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import altair as alt

from threadcost.paper import render
from threadcost.views import charts, vega_assets

REPO = Path(__file__).resolve().parents[1]
VENDOR = REPO / "vendor"
MANIFEST = VENDOR / "SHA256SUMS"


def _manifest() -> dict[str, str]:
    entries = {}
    for line in MANIFEST.read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        entries[name.strip()] = digest
    return entries


def test_every_vendored_file_matches_the_manifest() -> None:
    entries = _manifest()
    assert entries, "vendor/SHA256SUMS is empty"
    for name, digest in entries.items():
        data = (VENDOR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == digest, f"vendor/{name}: sha256 differs " \
            "from vendor/SHA256SUMS (refresh with make vendor, or restore the file)"


def test_no_vendored_file_is_missing_from_the_manifest() -> None:
    listed = set(_manifest())
    on_disk = {str(p.relative_to(VENDOR)) for d in ("vega", "requirejs")
               for p in (VENDOR / d).rglob("*") if p.is_file()}
    assert on_disk == listed, f"not in the manifest: {sorted(on_disk - listed)}; " \
                              f"listed but missing: {sorted(listed - on_disk)}"
    for bundle in vega_assets.BUNDLES:
        assert f"vega/{bundle}" in listed


def test_pinned_versions_are_the_ones_altair_expects() -> None:
    v = vega_assets.VERSIONS
    assert v["vega-lite"] == alt.VEGALITE_VERSION
    assert v["vega"].split(".")[0] == str(alt.VEGA_VERSION).lstrip("v").split(".")[0]
    assert v["vega-embed"].split(".")[0] == str(alt.VEGAEMBED_VERSION).lstrip("v").split(".")[0]
    pkgs = re.search(r"^VEGA_PKGS\s*:=\s*(.+)$", (REPO / "Makefile").read_text(), re.M)
    assert pkgs, "Makefile: no VEGA_PKGS"
    assert pkgs.group(1).split() == [f"{k}@{ver}" for k, ver in v.items()]


def test_each_bundle_is_the_pinned_version() -> None:
    for name, version in vega_assets.VERSIONS.items():
        text = (VENDOR / "vega" / f"{name}.min.js").read_text(encoding="utf-8")
        assert f'"{version}"' in text, f"vendor/vega/{name}.min.js: version {version} not found"


def test_a_chart_page_loads_only_local_bundles(tmp_path: Path) -> None:
    chart = alt.Chart(alt.Data(values=[{"x": 1, "y": 2}])).mark_point().encode(x="x:Q", y="y:Q")
    body = charts.to_html(chart)
    page = vega_assets.inject(f"<html><head></head><body>{body}</body></html>")
    sources = re.findall(r'<script src="([^"]+)"', page)
    assert sources == [f"_static/vega/{b}" for b in vega_assets.BUNDLES]
    assert render.remote_references(page) == []
    assert "https://" not in body and "http://" not in body
    copied = vega_assets.copy_bundles(tmp_path)
    for b in vega_assets.BUNDLES:
        assert (copied / b).read_bytes() == (VENDOR / "vega" / b).read_bytes()
    # a page without a chart is left alone
    assert vega_assets.inject("<html><head></head><body></body></html>") == \
        "<html><head></head><body></body></html>"
