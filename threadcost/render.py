"""Executed notebooks to static HTML that reads offline.

Code cells are hidden unless tagged ``show-input`` (tag-based, through
nbconvert's TagRemovePreprocessor); figures are embedded; widgets are drawn by
the widget manager JavaScript vendored under ``<html>/_static`` when present.
"""

from __future__ import annotations

import html
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from nbconvert.preprocessors import TagRemovePreprocessor

HIDE_TAG = "remove_input"
SHOW_TAG = "show-input"


def _tag_code_cells(nb: nbformat.NotebookNode) -> None:
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        if SHOW_TAG not in tags and HIDE_TAG not in tags:
            tags.append(HIDE_TAG)


def render_notebook(executed: Path, html_dir: Path) -> Path:
    nb = nbformat.read(str(executed), as_version=4)
    _tag_code_cells(nb)
    exporter = HTMLExporter(template_name="lab")
    remover = TagRemovePreprocessor(remove_input_tags={HIDE_TAG},
                                    remove_cell_tags={"remove_cell"})
    remover.enabled = True
    exporter.register_preprocessor(remover, enabled=True)
    body, _ = exporter.from_notebook_node(nb)
    target = html_dir / (executed.stem + ".html")
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(body, encoding="utf-8")
    tmp.replace(target)
    return target


def _title(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    start = text.find("<h1")
    if start < 0:
        return page.stem
    start = text.find(">", start) + 1
    end = text.find("</h1>", start)
    inner = text[start:end]
    while "<" in inner:  # drop anchor links and other tags
        a = inner.find("<")
        b = inner.find(">", a)
        inner = inner[:a] + inner[b + 1:]
    return html.unescape(inner).replace("¶", "").strip() or page.stem


def render_index(pages: list[Path], html_dir: Path, params_name: str = "") -> Path:
    items = "\n".join(
        f'<li><a href="{p.name}">{html.escape(_title(p))}</a></li>' for p in pages)
    body = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>threadcost: what does a thread cost?</title>
<style>body{{font-family:sans-serif;max-width:46rem;margin:3rem auto;line-height:1.5}}</style>
</head><body>
<h1>What does a thread cost?</h1>
<p>Measured on this machine by <code>make paper</code>
(parameters: <code>{html.escape(params_name)}</code>).</p>
<ol>
{items}
</ol>
</body></html>
"""
    target = html_dir / "index.html"
    target.write_text(body, encoding="utf-8")
    return target
