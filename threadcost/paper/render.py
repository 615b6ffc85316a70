"""Executed notebooks to static HTML that reads offline, from the file system.

- Code is hidden by default, by tags: every code input is folded into a
  ``<details>`` element ("code", closed); cells tagged ``show-input`` start open;
  cells tagged ``remove_input`` lose their input, ``remove_cell`` the whole cell.
- Nothing is fetched from the network: the page loads require.js and, if it
  holds a chart, the Vega bundles from ``_static/`` next to it (copied from the
  repository's ``vendor/`` folder, see ``threadcost.views.vega_assets``), and MathJax
  and Mermaid are left out (the paper uses neither). Figures are embedded in the page.
- One stylesheet, ``_static/paper.css``, serves every page (written once per
  rendering: nbconvert's JupyterLab styles, the code highlighting and the paper's
  own rules); no page inlines CSS.
- No ``In[]``/``Out[]`` prompts. A stream a cell wrote to stderr is not shown to
  the reader: it is printed on the runner's terminal, naming the page and cell.
- Under every figure and table a provenance line links to the CSV files it was
  drawn from (copied next to the pages, so it works offline and from a zip) and
  to the experiment module that produced them (``Provenance``).
- An index page carries the title, the abstract, the verdict tally, the headline
  figure, the contents and the references; each page links back to it and to its
  neighbours.
"""

from __future__ import annotations

import html
import re
import shutil
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor

from threadcost import paths, vocabulary
from threadcost.paper import summary as paper_summary
from threadcost.views import vega_assets

TEMPLATES_DIR = Path(__file__).resolve().parent.parent / "templates"
VENDOR_DIR = paths.REPO_ROOT / "vendor"
STATIC = "_static"
HIDE_TAG = "remove_input"
STYLESHEET = f"{STATIC}/paper.css"

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
.jp-RenderedHTMLCommon table { border-collapse: collapse; font-size: 13px; margin: .6em 0;
  table-layout: auto; max-width: 100%; }
.jp-OutputArea-child { display: block; min-width: 0; max-width: 100%; overflow-x: auto; }
.jp-OutputArea-output { display: block; min-width: 0; max-width: 100%; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { white-space: normal;
  overflow-wrap: break-word; max-width: 24rem; }
.jp-OutputArea-output.jp-RenderedHTMLCommon td,
.jp-OutputArea-output.jp-RenderedHTMLCommon th { text-align: left; }
.jp-OutputArea-output.jp-RenderedHTMLCommon td.tc-num,
.jp-OutputArea-output.jp-RenderedHTMLCommon th.tc-num { text-align: right;
  font-variant-numeric: tabular-nums; }
.jp-OutputArea-output.jp-RenderedHTMLCommon td.tc-num { white-space: nowrap; }
.tc-provenance { font-size: 12px; color: #666; margin: 0 0 1.2em;
  font-family: var(--jp-ui-font-family); }
.tc-provenance a { color: #1f5fa8; }
.tc-table-note { font-size: 12px; color: #555; margin: -.3em 0 .6em; }
.tc-run { font-size: 12px; color: #666; margin: .2em 0 .8em;
  font-family: var(--jp-ui-font-family); }
.tc-not-measured { color: #8a5a00; background: #fff8e6; border-left: 3px solid #e0a800;
  padding: .3em .7em; margin: .4em 0 1em; font-family: var(--jp-ui-font-family); }
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
    """A rendered notebook: its file, title and sections."""

    path: Path
    title: str
    sections: list[tuple[str, str]]  # (anchor id, heading text) of its h2 headings


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


@dataclass(frozen=True)
class Provenance:
    """Where a page's figures and tables come from.

    ``data``: (link text, href relative to the page) of each CSV, already copied
    next to the pages; ``code``: (link text, href) of each module that produced it.
    """

    data: list[tuple[str, str]] = field(default_factory=list)
    code: list[tuple[str, str]] = field(default_factory=list)

    def html(self, first: bool = True) -> str:
        """The line under an output. A page with more than ``SHORT`` data files lists
        them once, under its first figure or table (``id="tc-data"``); every later line
        points there, so a dozen outputs do not repeat the same long list."""
        def links(items: list[tuple[str, str]]) -> str:
            return ", ".join(f'<a href="{html.escape(h)}">{html.escape(t)}</a>' for t, h in items)

        parts = []
        if self.data and (first or len(self.data) <= SHORT):
            parts.append(f"data: {links(self.data)}")
        elif self.data:
            parts.append(f'data: <a href="#{DATA_ANCHOR}">this page\'s {len(self.data)} files, '
                         "listed under its first figure</a>")
        if self.code:
            parts.append(f"code: {links(self.code)}")
        anchor = f'<span id="{DATA_ANCHOR}"></span>' if first and len(self.data) > SHORT else ""
        return f'<p class="tc-provenance">{anchor}{" · ".join(parts)}</p>' if parts else ""


SHORT = 3  # data files a provenance line lists under every output
DATA_ANCHOR = "tc-data"


def _tag_code_cells(nb: nbformat.NotebookNode) -> None:
    """Papermill's injected-parameters cell keeps its input (folded) for the record,
    under an id of its own words (papermill draws a random one: the page would differ
    from one rendering of the same runs to the next)."""
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if "injected-parameters" in cell.metadata.get("tags", []):
            cell.id = "injected-parameters"
        tags = cell.metadata.setdefault("tags", [])
        if not cell.source.strip() and HIDE_TAG not in tags:
            tags.append(HIDE_TAG)


def _is_figure_or_table(output: nbformat.NotebookNode) -> bool:
    data = output.get("data") or {}
    if "image/png" in data or "image/svg+xml" in data:
        return True
    if any(k.startswith("application/vnd.vegalite") for k in data):
        return True
    return "<table" in str(data.get("text/html", ""))


def move_stderr(nb: nbformat.NotebookNode, name: str, stream: object = None) -> int:
    """Take every stderr stream out of the notebook and print it on the runner's
    terminal (naming the page and cell), so nothing is lost and the page stays clean."""
    out = stream or sys.stderr
    moved = 0
    for number, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        kept = []
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output.get("name") == "stderr":
                text = str(output.get("text", "")).rstrip()
                if text:
                    print(f"{name}, cell {number}: stderr:\n{text}", file=out)  # type: ignore[call-overload]
                moved += 1
                continue
            kept.append(output)
        cell["outputs"] = kept
    return moved


def add_provenance(nb: nbformat.NotebookNode, provenance: Provenance | None) -> int:
    """Add the provenance line after each figure and table output; return how many."""
    if provenance is None:
        return 0
    if not provenance.html():
        return 0
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.get("outputs", []):
            outputs.append(output)
            if _is_figure_or_table(output):
                outputs.append(nbformat.v4.new_output(
                    "display_data", data={"text/html": provenance.html(first=count == 0)},
                    metadata={}))
                count += 1
        cell["outputs"] = outputs
    return count


# Exporters made so far, one per thread and kind: making one loads and compiles its
# templates (about 0.6 s of CPU a page); rendering with one is independent of the pages it
# rendered before. Per thread, since a rendering registers its own filters on it.
_EXPORTERS: dict[tuple[int, bool, str, str], HTMLExporter] = {}
_EXPORTERS_MAX = 16


def _exporter(inline_css: bool = False, assets: str = STATIC, lexer: str = "") -> HTMLExporter:
    """The page exporter (the ``lab`` template with ``inline_css``: the stylesheet's)."""
    key = (threading.get_ident(), inline_css, assets, lexer)
    if key not in _EXPORTERS:
        if len(_EXPORTERS) >= _EXPORTERS_MAX:
            _EXPORTERS.pop(next(iter(_EXPORTERS)))
        _EXPORTERS[key] = _new_exporter(inline_css, assets)
    return _EXPORTERS[key]


def _new_exporter(inline_css: bool, assets: str) -> HTMLExporter:
    exporter = HTMLExporter(template_name="lab" if inline_css else "threadcost",
                            extra_template_basedirs=[str(TEMPLATES_DIR)])
    exporter.require_js_url = f"{assets}/requirejs/require.js"
    exporter.mathjax_url = ""
    exporter.exclude_input_prompt = True
    exporter.exclude_output_prompt = True
    remover = TagRemovePreprocessor(remove_input_tags={HIDE_TAG},
                                    remove_cell_tags={"remove_cell"})
    remover.enabled = True
    exporter.register_preprocessor(remover, enabled=True)
    return exporter


def write_stylesheet(html_dir: Path) -> Path:
    """``_static/paper.css``: JupyterLab's styles as nbconvert would inline them, the
    code highlighting, and the paper's own rules; every page links to it."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1")]
    body, _ = _exporter(inline_css=True).from_notebook_node(nb)
    styles = re.findall(r"<style[^>]*>(.*?)</style>", body, re.S)
    target = html_dir / STYLESHEET
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(s.strip() for s in styles) + "\n" + PAPER_CSS,
                      encoding="utf-8")
    return target


def render_notebook(executed: Path, html_dir: Path, nav: str = "",
                    provenance: Provenance | None = None, assets: str = STATIC) -> Path:
    """Render one executed notebook to ``<html_dir>/<stem>.html`` (atomically).

    ``assets``: where the page finds ``requirejs/`` and ``vega/`` (relative to it):
    ``_static`` (copied next to the pages) or the repository's ``vendor`` folder."""
    nb = nbformat.read(str(executed), as_version=4)
    _tag_code_cells(nb)
    move_stderr(nb, executed.stem)
    add_provenance(nb, provenance)
    info = nb.metadata.get("language_info", {})
    lexer = str(info.get("pygments_lexer", info.get("name", "")))
    body, _ = _exporter(assets=assets, lexer=lexer).from_notebook_node(
        nb, resources={"tc_css_href": STYLESHEET, "tc_nav": nav})
    target = html_dir / (executed.stem + ".html")
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(vega_assets.inject(body, static=assets), encoding="utf-8")
    tmp.replace(target)
    return target


# The gallery of machines, beside the pages (threadcost.paper.pages.write_gallery).
GALLERY = "gallery/index.html"


def nav_html(names: list[str], current: int) -> str:
    """Links to the index, the previous/next pages (by file stem) and the gallery of
    machines (:data:`GALLERY`)."""
    links = ['<a href="index.html">contents</a>']
    if current > 0:
        links.append(f'<a href="{names[current - 1]}.html">&larr; previous</a>')
    if current + 1 < len(names):
        links.append(f'<a href="{names[current + 1]}.html">next &rarr;</a>')
    links.append(f'<a href="{GALLERY}">every machine</a>')
    return " ".join(links)


def _strip_tags(text: str) -> str:
    text = re.sub(r"<[^>]+>", "", text)
    return html.unescape(text).replace("¶", "").strip()


def read_page(path: Path) -> Page:
    """Title (first h1) and sections (h2 with ids) of a rendered page."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"<h1[^>]*>(.*?)</h1>", text, re.S)
    title = _strip_tags(m.group(1)) if m else path.stem
    sections = [(a, _strip_tags(t)) for a, t in
                re.findall(r'<h2 id="([^"]+)"[^>]*>(.*?)</h2>', text, re.S)]
    return Page(path=path, title=title or path.stem, sections=sections)


TALLY_COLOURS = vocabulary.VERDICT_COLOURS

INDEX_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:64rem;
margin:2.5rem auto;padding:0 1.2rem;line-height:1.55;color:#222}
h1{margin-bottom:.2em;font-size:2.1em} .sub{color:#555;margin-top:0}
.abstract{font-size:1.08em;background:#f7f9fc;border-left:4px solid #1f5fa8;
padding:.8em 1.1em;margin:1.2em 0}
.abstract ul.abstract-claims{font-size:1em;margin:.2em 0 .4em;padding-left:1.3em}
.abstract ul.abstract-claims li{margin:.25em 0}
.tally{display:flex;flex-wrap:wrap;gap:.6em;margin:.6em 0 1.2em;padding:0;list-style:none}
.tally li{padding:.35em .8em;border-radius:4px;font-size:.95em}
ol>li{margin:.7em 0} ul{font-size:.93em} a{color:#1f5fa8}
figure{margin:1.5em 0} figure img{width:100%;height:auto} figcaption{font-size:.9em;color:#555}
code{background:#f4f4f4;padding:0 .25em} .refs li{margin:.4em 0}
.tc-provenance{font-size:12px;color:#666}
"""


def render_index(pages: list[Page], html_dir: Path, params_name: str = "",
                 machine_text: str = "", figures: list[str] | None = None,
                 data_dir: Path | None = None, machine_id: str | None = None,
                 measured_by: list[tuple[str, bool]] | None = None,
                 from_stored: bool = False) -> Path:
    """The front page: title, abstract, verdict tally, headline figure, contents,
    references (the abstract and tally from :mod:`threadcost.paper.summary`).

    ``measured_by``: (commit, with uncommitted changes) of the code that measured the
    runs shown;
    ``from_stored``: the paper was drawn from a machine folder without measuring."""
    items = []
    for page in pages:
        subs = "".join(f'<li><a href="{page.path.name}#{html.escape(a)}">{html.escape(t)}</a>'
                       f"</li>" for a, t in page.sections)
        items.append(f'<li><a href="{page.path.name}"><b>{html.escape(page.title)}</b></a>'
                     f"<ul>{subs}</ul></li>")
    sentences = paper_summary.abstract_html(data_dir, machine_id, machine_text)  # HTML
    tally = paper_summary.verdict_tally(data_dir, machine_id)
    total = sum(tally.values())
    chips = "".join(
        f'<li style="background:{vocabulary.verdict_colour(k)}"><b>{v}</b> {html.escape(k)}</li>'
        for k, v in sorted(tally.items(), key=lambda kv: vocabulary.verdict_order(kv[0])) if v)
    claims_page = next((p.path.name for p in pages if "claim" in p.path.stem), None)
    tally_link = (f' (<a href="{claims_page}">every claim with its verdict</a>)'
                  if claims_page else "")
    figs = "".join(
        f'<figure><img src="{html.escape(f)}" alt="The cost of one thread, process, fiber '
        f'and goroutine on this machine: launch, switch and memory"><figcaption>Launch, '
        f"context switch and memory of one task on this machine, one definition per column "
        f'(<a href="00_introduction.html">page 0</a> says what each number is and which run '
        f"it comes from).</figcaption></figure>"
        for f in (figures or []))
    refs = "".join(
        f'<li id="{html.escape(r["key"])}"><b>[{html.escape(r["key"])}]</b> '
        f'{html.escape(r["author"])}. “{html.escape(r["title"])}”. '
        f'{html.escape(r["year"] or "n.d")}. {_link(r["address"])}'
        + (f'. Code: {_link(r["code"])}' if r.get("code") and r["code"] != r["address"]
           else "")
        + (f' ({html.escape(r["note"])})' if r.get("note") else "") + "</li>"
        for r in paper_summary.references())
    commits = ", ".join(f"<code>{html.escape(c[:10])}</code>"
                        + (" (with uncommitted changes)" if dirty else "")
                        for c, dirty in (measured_by or []))
    origin = (f"Drawn from the stored runs of <code>{html.escape(machine_id or '')}</code> "
              "without measuring (<code>threadcost paper --machine</code>). "
              if from_stored else "")
    if commits:
        origin += f"Numbers measured by the code at commit {commits}."
    origin_html = f'<p class="sub tc-measured-by">{origin}</p>' if origin else ""
    # a paper drawn from stored runs says so below, rather than "measured by make paper"
    measured_how = ("" if from_stored else ", measured by <code>make paper</code> "
                    f"(parameters: <code>{html.escape(params_name)}</code>)")
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>threadcost: what does a thread cost?</title>
<style>{INDEX_CSS}</style>
</head><body>
<h1>What does a thread cost?</h1>
<p class="sub">Launch, context switch and memory of Linux threads, set against processes,
fibers, goroutines, Rust and Tokio tasks and Java's platform and virtual threads, and
against the published numbers{measured_how}.</p>
{origin_html}
<h2>Abstract</h2>
<div class="abstract"><p>{" ".join(sentences[:3])}</p>{_claims_list(sentences[3:])}</div>
<h2>Verdicts on {total} published claims</h2>
<ul class="tally">{chips}</ul>
<p class="sub">Each claim of the sources below, judged on this machine{tally_link}.</p>
{figs}
<h2>Contents</h2>
<ol>
{"".join(items)}
</ol>
<p>And <a href="{GALLERY}">every machine</a>: the committed machine folders side
by side, each with its card, its headline numbers and a verdict per claim, to sort and
filter.</p>
<p class="sub">Code is folded under each result (click "code"). Under every figure and
table a line links to the CSV it was drawn from and the code that measured it.</p>
<h2>References</h2>
<ol class="refs" style="list-style:none;padding-left:0">{refs}</ol>
</body></html>
"""
    target = html_dir / "index.html"
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(target)
    return target


def _claims_list(sentences: list[str]) -> str:
    """The abstract's sentences on the published claims, one point each: a reader finds
    the tally, the examples and the causes apart, not in one paragraph."""
    if not sentences:
        return ""
    items = "".join(f"<li>{s}</li>" for s in sentences)
    return f'<p>Against the published claims:</p><ul class="abstract-claims">{items}</ul>'


def _link(address: str) -> str:
    """An address as a link when it is a URL, else as text; words after the URL
    ("https://... (folders a, b)") stay text beside the link, not in its href."""
    if address.startswith(("https://", "http://")):
        url, sep, rest = address.partition(" ")
        return (f'<a href="{html.escape(url)}">{html.escape(url)}</a>'
                + (f" {html.escape(rest)}" if sep else ""))
    return html.escape(address)


REMOTE_REF = re.compile(
    r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""",
    re.I)
REMOTE_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?(?:https?:)?//|"""
                           r"""import\(\s*["'](?:https?:)?//""", re.I)


def remote_references(text: str) -> list[str]:
    """Script, style, image or import references to another host in an HTML page."""
    return [m.group(0) for m in REMOTE_REF.finditer(text)] + \
        [m.group(0) for m in REMOTE_IMPORT.finditer(text)]
