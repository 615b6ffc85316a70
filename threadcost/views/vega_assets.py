"""The vendored Vega bundles: copied next to the rendered pages, loaded without a CDN.

The paper's charts are Vega-Lite specs (written by Altair) embedded in each page as
``<div class="tc-vega">`` plus a call to ``vegaEmbed``. A page that holds such a
chart loads ``vega``, ``vega-lite`` and ``vega-embed`` from ``_static/vega/`` (copied
from the repository's ``vendor/vega/``); nothing is fetched from the network.

``threadcost.paper.render`` calls :func:`copy_bundles` once per rendering and
:func:`inject` on each page's HTML.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from threadcost import paths

# The npm versions vendored by `make vendor` (Makefile VEGA_PKGS): the ones Altair 6.3
# targets. tests/test_vendor.py checks they agree with Altair and the Makefile.
VERSIONS = {"vega": "6.4.0", "vega-lite": "6.4.1", "vega-embed": "7.3.0"}
BUNDLES = tuple(f"{name}.min.js" for name in VERSIONS)  # load order matters
VENDOR_DIR = paths.REPO_ROOT / "vendor" / "vega"
STATIC = "_static"
CHART_CLASS = "tc-vega"  # the class of every chart's <div> (render looks for it)
# The controls under each chart, in the page's type and with room to click.
CONTROLS_CSS = (
    ".tc-vega { margin: .8em 0 1.2em; }"
    " .tc-vega .vega-bindings { font: 13px system-ui, -apple-system, 'Segoe UI', sans-serif;"
    " margin-top: .4em; display: flex; flex-wrap: wrap; gap: .3em 1.4em; }"
    " .tc-vega .vega-bind-name { margin-right: .4em; color: #333; }"
    " .tc-vega .vega-bind input[type=range] { vertical-align: middle; width: 12em; }"
    " .tc-vega .vega-bind-radio label { margin-right: .6em; }")


def copy_bundles(html_dir: Path, vendor_dir: Path = VENDOR_DIR) -> Path:
    """Copy the bundles (and their licenses) to ``<html_dir>/_static/vega``."""
    missing = [b for b in BUNDLES if not (vendor_dir / b).is_file()]
    if missing:
        raise FileNotFoundError(
            f"{vendor_dir}: vendored Vega bundles missing ({', '.join(missing)}); "
            "see vendor/README.md (make vendor)")
    target = html_dir / STATIC / "vega"
    shutil.copytree(vendor_dir, target, dirs_exist_ok=True)
    return target


def head_html(static: str = STATIC) -> str:
    """Script tags that load the bundles as globals (``vega``, ``vegaLite``, ``vegaEmbed``).

    require.js may already be on the page: its ``define`` would make the UMD
    bundles register as anonymous AMD modules (and fail), so it is hidden while they
    load and restored after.
    """
    tags = "\n".join(f'<script src="{static}/vega/{b}"></script>' for b in BUNDLES)
    return (f"<style>{CONTROLS_CSS}</style>\n"
            "<script>window.__tcDefine = window.define; window.define = undefined;</script>\n"
            f"{tags}\n"
            "<script>window.define = window.__tcDefine;</script>\n")


def inline_html(vendor_dir: Path = VENDOR_DIR) -> str:
    """The bundles inlined in one HTML snippet (for a live kernel in JupyterLab, which
    cannot load files from ``vendor/``)."""
    body = "\n".join(
        "<script>" + (vendor_dir / b).read_text(encoding="utf-8").replace("</script", "<\\/script")
        + "</script>" for b in BUNDLES)
    return (f"<style>{CONTROLS_CSS}</style>\n"
            "<script>window.__tcDefine = window.define; window.define = undefined;</script>\n"
            f"{body}\n<script>window.define = window.__tcDefine;</script>\n")


def inject(page: str, static: str = STATIC) -> str:
    """A rendered page with the bundles loaded in its ``<head>`` if it holds a chart."""
    if f'class="{CHART_CLASS}"' not in page or "</head>" not in page:
        return page
    head, rest = page.split("</head>", 1)
    return f"{head}{head_html(static)}</head>{rest}"
