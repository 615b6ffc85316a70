"""The gallery: every machine folder of a data folder on one static page.

One row per machine: its card (CPU, cores, memory, kernel, mitigations, virtualization,
glibc, the runtimes whose peers ran), its headline numbers (the twelve headline findings,
:mod:`threadcost.findings.headline`, read as notebook 00 reads them: ``views.headline.cells``)
and one column per published claim with its verdict there (:func:`threadcost.claims.judge`).
A claim whose verdict differs between machines is marked, and listed below the table with
the machine property its record says the flip turns on (``flips_on``,
:mod:`threadcost.claims.properties`) and that property's value on each machine
(:func:`threadcost.claims.machines.rows`, the rows of ``threadcost claims
--all-machines``). Each machine links to its own rendered paper where one is rendered
(``reference/<id>/``, ``build/paper-<id>/html/``).

The page is one HTML file with its style and a small script inline: it sorts by any
column (click its head) and filters by any card field (the boxes under the heads, and one
box for every field), in the browser, without a kernel or a network. Nothing is measured:
each folder is read from its stored runs, in worker processes (one for each CPU this
process may use: :func:`default_workers`; ``tools/gallery_benchmark.py`` times it), and what
they judge is kept in ``build/cache/`` as a paper build keeps it
(``threadcost.findings.folder_cache``): a folder's verdicts judged before are reused (its
runs are still read and checked, which is most of the cost).

    threadcost gallery [--data-dir DIR] [--out DIR]     # make gallery
"""

from __future__ import annotations

import html
import json
import math
import os
import string
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from threadcost import claims, findings, paths, vocabulary
from threadcost.claims import machines, properties
from threadcost.claims import machines as across
from threadcost.claims.model import ClaimVerdict
from threadcost.errors import ParameterError
from threadcost.findings import folder_cache
from threadcost.measured.runs import Runs
from threadcost.store import datastore
from threadcost.views import headline

# The headline's tasks and columns the gallery shows: the twelve headline findings.
TASKS = ("thread", "process", "fiber", "goroutine")
# the kernel-entry mitigations named on the card (all of them in its tooltip)
CARD_MITIGATIONS = {"spectre_v2": "Spectre v2", "spec_rstack_overflow": "SRSO",
                    "retbleed": "Retbleed", "meltdown": "Meltdown", "mds": "MDS"}
CARD = {  # card field -> its head
    "cpu": "CPU", "cores": "CPUs", "memory": "memory", "kernel": "kernel",
    "mitigations": "mitigations", "virtualization": "virtualization", "glibc": "glibc",
    "runtimes": "runtimes that ran", "measured": "measured",
}


@dataclass(frozen=True)
class Machine:
    """What the gallery shows of one machine folder."""

    machine_id: str
    card: dict[str, str]
    card_detail: dict[str, str]  # field -> its tooltip (the whole value)
    headline: dict[str, tuple[float | None, str]]  # "task column" -> (value shown, text)
    verdicts: list[ClaimVerdict]
    properties: dict[str, str | None]
    runs: int
    skipped: int


def _mitigations(fp: dict[str, Any]) -> tuple[str, str]:
    found = fp.get("cpu_vulnerabilities")
    if not isinstance(found, dict) or not found:
        return "not recorded", "the fingerprint records no CPU vulnerability state"
    shown = [f"{label}: {str(found[key]).split(';')[0].removeprefix('Mitigation: ')}"
             for key, label in CARD_MITIGATIONS.items()
             if key in found and str(found[key]) != "Not affected"]
    whole = "; ".join(f"{k}: {v}" for k, v in sorted(found.items()))
    return ("; ".join(shown) or "none of the named ones affect this CPU"), whole


def card(fp: dict[str, Any], runtimes: str, newest: str) -> tuple[dict[str, str],
                                                                     dict[str, str]]:
    """(card field -> text, card field -> tooltip) of a fingerprint."""
    ident = [f"{k.removeprefix('cpu_').replace('_', ' ')} {fp[k]}"
             for k in ("cpu_family", "cpu_model_number", "cpu_stepping") if fp.get(k)]
    affinity = fp.get("affinity") or []
    logical = fp.get("logical_cpus")
    cores = f"{logical}" + (f" ({len(affinity)} usable)" if affinity and
                            len(affinity) != logical else "")
    mem = fp.get("mem_total_kib")
    virt = str(fp.get("virtualization") or "not recorded")
    virt = "bare metal" if virt == "none" else virt
    if fp.get("container") not in (None, "", "none"):
        virt += f", in a {fp['container']} container"
    mitigations, whole = _mitigations(fp)
    text = {
        "cpu": str(fp.get("cpu_model") or "not recorded"),
        "cores": cores,
        "memory": f"{mem / 1024**2:.0f} GiB" if isinstance(mem, int | float) else
        "not recorded",
        "kernel": str(fp.get("kernel") or "not recorded").removeprefix("Linux "),
        "mitigations": mitigations,
        "virtualization": virt,
        "glibc": str(fp.get("glibc") or "not recorded"),
        "runtimes": runtimes,
        "measured": newest,
    }
    detail = dict(text, cpu=f"{text['cpu']} ({', '.join(ident)}; microcode "
                            f"{fp.get('cpu_microcode') or 'not recorded'})",
                  mitigations=whole)
    return text, detail


def read_machine(data_dir: str, machine_id: str) -> Machine:
    """One folder, read from its stored runs (in a worker process)."""
    root = Path(data_dir)
    runs, skipped = datastore.scan(root, machine_id)
    fp = dict(runs[-1].meta.get("machine") or {}) if runs else {}
    toolchains = properties.toolchains(Runs.load(machine_id, root)) or ""
    ran = toolchains.removeprefix("ran: ")
    runtimes = ", ".join(vocabulary.words(r).capitalize() if r != "go" else "Go"
                         for r in ran.split(", ")) if ran != toolchains else \
        "none (no Go, Rust or Java peer ran)"
    newest = str(runs[-1].meta.get("created_utc", ""))[:10] if runs else ""
    text, detail = card(fp, runtimes, newest)
    shown: dict[str, tuple[float | None, str]] = {}
    cells = headline.cells(root, machine_id)
    for row in cells.itertuples(index=False):
        if row.task not in TASKS:
            continue
        _, unit, factor = headline.COLUMNS[row.column]
        key = f"{row.task} {row.column}"
        if row.value is None or (isinstance(row.value, float) and math.isnan(row.value)):
            shown[key] = (None, f"not measured: {row.not_run}")
        else:
            v = float(row.value) * factor
            shown[key] = (v, f"{findings.number(v, 'auto')} {unit}"
                          + (" (partial)" if row.partial else ""))
    return Machine(machine_id, text, detail, shown, claims.judge(machine_id, root),
                   machines.properties(machine_id, root), len(runs), len(skipped))


def machine_folders(data_dir: Path) -> list[str]:
    """The machine folders of a data folder that hold runs (published/ and hidden
    folders are none)."""
    return datastore.machines_with_runs(data_dir)


def default_workers() -> int:
    """The worker processes a gallery reads its folders in: one for each CPU this
    process may use (its affinity mask; a folder's judging is one process's work)."""
    return max(1, len(os.sched_getaffinity(0)))


def collect(data_dir: Path, workers: int | None = None) -> list[Machine]:
    """Every machine folder of ``data_dir``, read in worker processes (``workers``;
    default: :func:`default_workers`)."""
    mids = machine_folders(data_dir)
    n = max(1, min(workers or default_workers(), len(mids)))
    if n == 1:
        return [read_machine(str(data_dir), mid) for mid in mids]
    import multiprocessing

    with ProcessPoolExecutor(max_workers=n,
                             mp_context=multiprocessing.get_context("spawn")) as pool:
        return list(pool.map(read_machine, [str(data_dir)] * len(mids), mids))


# --- the page ---------------------------------------------------------------------------

def _paper_link(machine_id: str, out: Path) -> str | None:
    """The machine's rendered paper, relative to the page, where one is rendered."""
    for index in (paths.REPO_ROOT / "reference" / machine_id / "index.html",
                  paths.build_dir() / f"paper-{machine_id}" / "html" / "index.html"):
        if index.is_file():
            return os.path.relpath(index, out)
    return None


def _cell(text: str, sort: str | float | None = None, title: str = "",
          cls: str = "", style: str = "") -> str:
    attrs = ""
    if sort is not None:
        attrs += f' data-sort="{html.escape(str(sort))}"'
    if title:
        attrs += f' title="{html.escape(title)}"'
    if cls:
        attrs += f' class="{cls}"'
    if style:
        attrs += f' style="{style}"'
    return f"<td{attrs}>{text}</td>"


def _short(verdict: str) -> str:
    return {"not run here": "not run", "not reproduced": "not repr."}.get(verdict, verdict)


def page(machines: list[Machine], out: Path, data_label: str,
         this_paper: str | None = None) -> str:
    """The gallery's HTML; ``this_paper``: the machine whose paper the page sits in (its
    link is that paper's index, one folder up)."""
    by_id = {m.machine_id: m for m in machines}
    rows = across.rows({m.machine_id: m.verdicts for m in machines},
                       lambda mid: by_id[mid].properties)
    words = {c.claim_id: c.claim for c in claims.claims().itertuples(index=False)}
    flipped = [r for r in rows if r.flips]
    heads = ['<th data-kind="text" class="sticky">machine</th>']
    heads += [f'<th data-kind="text" data-group="card">{html.escape(h)}</th>'
              for h in CARD.values()]
    keys = [f"{t} {c}" for c in headline.COLUMNS for t in TASKS]
    for key in keys:
        task, column = key.split()
        unit = headline.COLUMNS[column][1]
        heads.append(f'<th data-kind="number" data-group="headline" title="'
                     f'{html.escape(headline.COLUMNS[column][0])}">'
                     f'{html.escape(vocabulary.TASK_LABELS[task])}<br>{column} ({unit})</th>')
    for r in rows:
        mark = " ↕" if r.flips else ""
        title = words.get(r.claim, r.claim) + (
            f" Its verdict differs between machines; it turns on {r.property_name}."
            if r.flips and r.property_name else
            " Its verdict differs between machines." if r.flips else "")
        heads.append(f'<th data-kind="text" data-group="claims" title="{html.escape(title)}"'
                     f'{" class=flip" if r.flips else ""}>{r.claim}{mark}</th>')
    filters = ['<td class="sticky"><input aria-label="filter machine" data-col="0"></td>']
    filters += [f'<td data-group="card"><input aria-label="filter {html.escape(h)}" '
                f'data-col="{i}"></td>' for i, h in enumerate(CARD.values(), 1)]
    filters += ['<td data-group="headline"></td>'] * len(keys)
    filters += ['<td data-group="claims"></td>'] * len(rows)
    body = []
    for m in machines:
        link = "../index.html" if m.machine_id == this_paper else _paper_link(m.machine_id, out)
        name = html.escape(m.machine_id)
        shown = (f'<a href="{html.escape(link)}">{name}</a>' if link else
                 f'{name} <span class="note">(no paper rendered)</span>')
        runs = f"{m.runs} stored runs" + (f", {m.skipped} unreadable (skipped)"
                                          if m.skipped else "")
        if not link:
            runs += (f"; its paper: make paper-from-data MACHINE={m.machine_id}, then "
                     "make gallery again")
        cells = [_cell(shown, m.machine_id, runs, "sticky")]
        cells += [_cell(html.escape(m.card[f]), m.card[f], m.card_detail[f], "", "")
                  for f in CARD]
        for key in keys:
            value, text = m.headline.get(key, (None, "not measured"))
            cells.append(_cell(html.escape(text) if value is not None else
                               '<span class="note">not measured</span>',
                               value if value is not None else "", text, "num"))
        for r in rows:
            verdict = r.classes.get(m.machine_id, vocabulary.NOT_RUN)
            title = r.cells[m.machine_id]
            if r.flips and r.property_values:
                title += f" ({r.property_name}: {r.property_values[m.machine_id]})"
            cells.append(_cell(html.escape(_short(verdict)), vocabulary.verdict_order(verdict),
                               title, "verdict",
                               f"background:{vocabulary.verdict_colour(verdict)}"))
        body.append(f"<tr>{''.join(cells)}</tr>")
    sections = []
    for r in flipped:
        items = "".join(
            f"<tr><td>{html.escape(mid)}</td><td style=\"background:"
            f"{vocabulary.verdict_colour(r.classes.get(mid, vocabulary.NOT_RUN))}\">"
            f"{html.escape(r.cells[mid])}</td><td>"
            f"{html.escape(r.property_values.get(mid, '')) if r.property_name else ''}"
            "</td></tr>" for mid in by_id)
        decided = (f"It turns on {html.escape(r.property_name)}, whose value on each machine "
                   "is beside its verdict." if r.property_name else
                   "Its record names no machine property for it to turn on.")
        sections.append(
            f'<details><summary><b>{r.claim}</b>: {html.escape(words.get(r.claim, ""))}'
            f"</summary><p>{decided}</p><table class=flips><tr><th>machine</th>"
            f"<th>verdict</th><th>{html.escape(r.property_name or 'property')}</th></tr>"
            f"{items}</table></details>")
    legend = " ".join(f'<span class="chip" style="background:{c.background}">'
                      f"{html.escape(c.name)}</span> {html.escape(c.meaning)}."
                      for c in vocabulary.VERDICT_CLASSES)
    template = resources.files("threadcost").joinpath("templates/gallery/page.html")
    return string.Template(template.read_text("utf-8")).substitute(
        count=len(machines), claims=len(rows), flipped=len(flipped),
        data=html.escape(data_label),
        when=datetime.now(UTC).strftime("%Y-%m-%d"), legend=legend,
        heads="".join(heads), filters="".join(filters), body="\n".join(body),
        flips="\n".join(sections) or "<p>No verdict differs between these machines.</p>",
        groups=json.dumps(["card", "headline", "claims"]))


def build(data_dir: Path | None = None, out: Path | None = None,
          workers: int | None = None, this_paper: str | None = None) -> Path:
    """Render the gallery of ``data_dir`` (default: the committed data/) into
    ``out/index.html`` (default: build/gallery/) and return its path (``this_paper``: as
    :func:`page` takes it)."""
    root = data_dir if data_dir is not None else (paths.reference_dir() or paths.data_dir())
    if not root.is_dir():
        raise ParameterError("--data-dir", str(root), "an existing folder")
    if not machine_folders(root):
        raise ParameterError("--data-dir", str(root), "a data folder holding "
                                                      "<machine-id>/<run-id>/ folders")
    out = (out if out is not None else paths.build_dir() / "gallery").resolve()
    with folder_cache.kept_results():  # what a paper build judged is reused, and kept for it
        machines = collect(root, workers)
    label = "data/" if paths.reference_dir() is not None and \
        root.resolve() == paths.reference_dir().resolve() else root.name + "/"  # type: ignore[union-attr]
    return write(page(machines, out, label, this_paper), out)


def write(text: str, out: Path) -> Path:
    """The page's HTML written as ``out/index.html`` in one step (never half a page);
    its path."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".index.html.{os.getpid()}.partial"
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out / "index.html")
    return out / "index.html"
