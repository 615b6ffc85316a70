"""Executed notebooks to static HTML that reads offline, from the file system.

- Code is hidden by default, by tags: every code input is folded into a
  ``<details>`` element ("code", closed); cells tagged ``show-input`` start open;
  cells tagged ``remove_input`` lose their input, ``remove_cell`` the whole cell.
- Nothing is fetched from the network: the page loads require.js and, if it
  holds a chart, the Vega bundles from ``_static/`` next to it (copied from the
  repository's ``vendor/`` folder, see ``threadcost.vega_assets``), and MathJax
  and Mermaid are left out (the paper uses neither). Figures are embedded in the page.
- An index page lists every notebook with its sections, and each page links
  back to it and to its neighbours.
"""

from __future__ import annotations

import html
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor

from threadcost import paths, vega_assets

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
VENDOR_DIR = paths.REPO_ROOT / "vendor"
STATIC = "_static"
REQUIRE_JS = f"{STATIC}/requirejs/require.js"
HIDE_TAG = "remove_input"
SHOW_TAG = "show-input"

PAPER_CSS = """
body.jp-Notebook { background: #fff; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 1.5rem 3rem; }
.jp-InputPrompt, .jp-OutputPrompt { display: none; }
.jp-RenderedMarkdown { font-size: 15px; line-height: 1.6; }
.jp-RenderedMarkdown h1 { font-size: 1.9em; margin-top: 0.4em; }
.jp-RenderedMarkdown h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; }
details.tc-code > summary { cursor: pointer; color: #888; font-size: 12px;
  font-family: var(--jp-code-font-family); margin: 2px 0; }
details.tc-code:not([open]) { margin: 0; }
details.tc-code[open] > summary { color: #555; }
.jp-RenderedHTMLCommon table { border-collapse: collapse; font-size: 13px; margin: .6em 0; }
.jp-RenderedHTMLCommon thead th { border-bottom: 2px solid #444; background: #f4f4f4; }
.jp-RenderedHTMLCommon tbody tr:nth-child(odd) { background: #fafafa; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { padding: 3px 8px;
  vertical-align: top; text-align: left; }
.jp-RenderedImage img { max-width: 100%; height: auto; }
nav.tc-nav { max-width: 60rem; margin: 0 auto; padding: .6rem 1.5rem; font-size: 13px;
  font-family: var(--jp-ui-font-family); border-bottom: 1px solid #eee; }
nav.tc-nav-bottom { border-top: 1px solid #eee; border-bottom: none; }
nav.tc-nav a { margin-right: 1.2em; }
"""


@dataclass(frozen=True)
class Page:
    """A rendered notebook: its file, title, sections and whether it ran cleanly."""

    path: Path
    title: str
    sections: list[tuple[str, str]]  # (anchor id, heading text) of its h2 headings
    ok: bool = True


def copy_vendor(html_dir: Path, vendor_dir: Path = VENDOR_DIR) -> Path:
    """Copy the vendored JavaScript next to the pages (``<html_dir>/_static``)."""
    target = html_dir / STATIC
    vega_assets.copy_bundles(html_dir)
    for name in ("requirejs",):
        src = vendor_dir / name
        if not src.is_dir():
            raise FileNotFoundError(f"{src}: vendored JavaScript missing (see vendor/README.md)")
        shutil.copytree(src, target / name, dirs_exist_ok=True)
    return target


def _tag_code_cells(nb: nbformat.NotebookNode) -> None:
    """Papermill's injected-parameters cell keeps its input (folded) for the record."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if not cell.source.strip() and HIDE_TAG not in tags:
            tags.append(HIDE_TAG)


def _exporter() -> HTMLExporter:
    exporter = HTMLExporter(template_name="threadcost",
                            extra_template_basedirs=[str(TEMPLATES_DIR)])
    exporter.require_js_url = REQUIRE_JS
    exporter.mathjax_url = ""
    remover = TagRemovePreprocessor(remove_input_tags={HIDE_TAG},
                                    remove_cell_tags={"remove_cell"})
    remover.enabled = True
    exporter.register_preprocessor(remover, enabled=True)
    return exporter


def render_notebook(executed: Path, html_dir: Path, nav: str = "") -> Path:
    """Render one executed notebook to ``<html_dir>/<stem>.html`` (atomically)."""
    nb = nbformat.read(str(executed), as_version=4)
    _tag_code_cells(nb)
    body, _ = _exporter().from_notebook_node(
        nb, resources={"tc_css": PAPER_CSS, "tc_nav": nav})
    target = html_dir / (executed.stem + ".html")
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(vega_assets.inject(body), encoding="utf-8")
    tmp.replace(target)
    return target


def nav_html(names: list[str], current: int) -> str:
    """Links to the index and the previous/next pages (by file stem)."""
    links = ['<a href="index.html">contents</a>']
    if current > 0:
        links.append(f'<a href="{names[current - 1]}.html">&larr; previous</a>')
    if current + 1 < len(names):
        links.append(f'<a href="{names[current + 1]}.html">next &rarr;</a>')
    return " ".join(links)


def _strip_tags(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(text).replace("¶", "").strip()


def read_page(path: Path, ok: bool = True) -> Page:
    """Title (first h1) and sections (h2 with ids) of a rendered page."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"<h1[^>]*>(.*?)</h1>", text, re.S)
    title = _strip_tags(m.group(1)) if m else path.stem
    sections = [(a, _strip_tags(t)) for a, t in
                re.findall(r'<h2 id="([^"]+)"[^>]*>(.*?)</h2>', text, re.S)]
    return Page(path=path, title=title or path.stem, sections=sections, ok=ok)


def render_index(pages: list[Page], html_dir: Path, params_name: str = "",
                 machine_text: str = "", figures: list[str] | None = None) -> Path:
    """The contents page: every notebook with its sections, the machine, the parameters."""
    items = []
    for page in pages:
        subs = "".join(f'<li><a href="{page.path.name}#{html.escape(a)}">{html.escape(t)}</a>'
                       f"</li>" for a, t in page.sections)
        flag = "" if page.ok else ' <span class="fail">(failed: see the page)</span>'
        items.append(f'<li><a href="{page.path.name}"><b>{html.escape(page.title)}</b></a>'
                     f"{flag}<ul>{subs}</ul></li>")
    figs = "".join(f'<figure><img src="{html.escape(f)}" alt="headline figure"></figure>'
                   for f in (figures or []))
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>threadcost: what does a thread cost?</title>
<style>
body{{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:48rem;
margin:2.5rem auto;padding:0 1rem;line-height:1.55;color:#222}}
h1{{margin-bottom:.2em}} .sub{{color:#555;margin-top:0}}
ol>li{{margin:.7em 0}} ul{{font-size:.93em}} a{{color:#1f5fa8}}
.fail{{color:#b00020}} figure{{margin:1.5em 0}} img{{max-width:100%}}
code{{background:#f4f4f4;padding:0 .25em}}
</style>
</head><body>
<h1>What does a thread cost?</h1>
<p class="sub">A study measured on this machine by <code>make paper</code>
(parameters: <code>{html.escape(params_name)}</code>).</p>
<p>{html.escape(machine_text)}</p>
{figs}
<h2>Contents</h2>
<ol>
{"".join(items)}
</ol>
<p class="sub">Code is folded under each result (click "code"). The executed notebooks
are in <code>../notebooks/</code>; the data behind every number in <code>data/</code>.</p>
</body></html>
"""
    target = html_dir / "index.html"
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(target)
    return target


REMOTE_REF = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""",
    re.I)
REMOTE_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?(?:https?:)?//|"""
                           r"""import\(\s*["'](?:https?:)?//""", re.I)


def remote_references(text: str) -> list[str]:
    """Script, style, image or import references to another host in an HTML page."""
    return [m.group(0) for m in REMOTE_REF.finditer(text)] + \
        [m.group(0) for m in REMOTE_IMPORT.finditer(text)]
