"""What each page of the paper links to: the runs its notebook stored (their CSV files
and meta.json) and the experiment modules that made them, copied next to the pages or
linked in place (:class:`Links`); the summary pages' index of every run read; the
headline figure beside the index. Used by :mod:`threadcost.paper.build`."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from threadcost import paths
from threadcost.experiments import specs
from threadcost.findings import folder_cache
from threadcost.paper.render import GALLERY, STATIC, Provenance
from threadcost.results import reading, run_files
from threadcost.store import datastore, run_cache
from threadcost.views import gallery

HEADLINE_FIGURE = "summary_headline"


def write_gallery(html_dir: Path, machine_id: str) -> Path:
    """The gallery of the committed machine folders (one row per machine, a verdict per
    claim, sorting and filtering in the browser) as :data:`GALLERY` beside the pages; a
    checkout without one gets a page that says so, so the pages' link always works.
    ``machine_id``'s row links to this paper."""
    committed = paths.reference_dir()
    out = html_dir / Path(GALLERY).parent
    if committed is not None and gallery.machine_folders(committed):
        return gallery.build(committed, out, this_paper=machine_id)
    return gallery.write("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
                         "<title>threadcost: the gallery of machines</title></head><body>"
                         "<p>No committed machine folder to show: this copy of threadcost "
                         "has no data folder.</p></body></html>\n", out)


def copy_headline(html_dir: Path, figures_dir: Path) -> list[str]:
    """Put the headline figure beside the index, when the summary produced it."""
    src = figures_dir / f"{HEADLINE_FIGURE}.png"
    if not src.is_file():
        return []
    (html_dir / "figures").mkdir(exist_ok=True)
    shutil.copy2(src, html_dir / "figures" / src.name)
    return [f"figures/{src.name}"]


class Links:
    """How a page reaches the runs, the code and the vendored bundles it links to.

    ``copy`` (the default, ``make paper``): copied next to the pages (``html/data/``,
    ``html/code/``, ``html/_static/``), so the folder reads offline on its own.
    ``repo``: no copy; relative links into the repository's ``data/``, code and
    ``vendor/`` from where the pages will live (``final_html``), so a rendering
    committed inside the clone (``reference/<machine>/``) reads offline from it.
    A run outside the repository (``THREADCOST_DATA_DIR``) is still copied.
    """

    def __init__(self, html_dir: Path, final_html: Path, link_repo: bool = False) -> None:
        self.html_dir, self.final_html, self.link_repo = html_dir, final_html, link_repo

    def _repo_href(self, target: Path) -> str | None:
        if not self.link_repo:
            return None
        try:
            target.resolve().relative_to(paths.REPO_ROOT)
        except ValueError:
            return None
        return Path(os.path.relpath(target.resolve(), self.final_html.resolve())).as_posix()

    @property
    def assets(self) -> str:
        """Where pages find ``requirejs/`` and ``vega/``."""
        href = self._repo_href(paths.REPO_ROOT / "vendor")
        return href if href is not None else STATIC

    def data(self, run: Path, src: Path) -> str:
        href = self._repo_href(src)
        if href is not None:
            return href
        target = self.html_dir / "data" / run.parent.name / run.name
        target.mkdir(parents=True, exist_ok=True)
        # a file of a validated run, read as one (a regular file of the run, bounded)
        raw, _ = run_files.read_file(src, run_files.MAX_TABLE_FILE_BYTES)
        (target / src.name).write_bytes(raw)
        return f"data/{run.parent.name}/{run.name}/{src.name}"

    def code(self, rel: str) -> str:
        src = paths.REPO_ROOT / rel
        href = self._repo_href(src)
        if href is not None:
            return href
        (self.html_dir / "code" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, self.html_dir / "code" / rel)
        return "code/" + rel


def experiment_module(experiment: str) -> Path | None:
    """The module of ``threadcost/experiments/`` that produces runs named ``experiment``
    (from :mod:`threadcost.experiments.specs`); None when it is not registered."""
    rel = specs.module_path(experiment)
    return paths.REPO_ROOT / rel if rel is not None else None


def _run_label(run: Path, names: list[str]) -> str:
    label = run.name.split("-", 1)[-1]  # experiment-suffix, e.g. malloc_touch-3a1f7f
    if names.count(label.rsplit("-", 1)[0]) == 1:
        label = label.rsplit("-", 1)[0]
    return label


def provenance_for(runs: list[Path], links: Links) -> Provenance:
    """Links to the runs' CSV files and their experiment modules (copied or in place)."""
    data: list[tuple[str, str]] = []
    code: list[tuple[str, str]] = []
    names = [run.name.split("-", 1)[-1].rsplit("-", 1)[0] for run in runs]
    for run in sorted(runs):
        label = _run_label(run, names)
        meta = _validated_meta(run)
        if meta is None:
            continue
        for name in meta.get("tables", []):
            src = reading.table_path(run, name)
            if src.is_file():
                data.append((f"{label}/{src.name}", links.data(run, src)))
        links.data(run, run / datastore.META)  # copied beside its tables (copy mode)
        module = experiment_module(str(meta.get("experiment", "")))
        if module is not None and module.is_file():
            rel = module.relative_to(paths.REPO_ROOT).as_posix()
            if rel not in {t for t, _ in code}:
                code.append((rel, links.code(rel)))
    return Provenance(data=data, code=code)


def summary_provenance(links: Links, stored: dict[str, list[Path]],
                       modules: tuple[str, ...]) -> Provenance:
    """A summary page reads the runs the others stored: link their index and its views."""
    rows = ["notebook,experiment,run_id,table,csv"]
    for book, runs in stored.items():
        for run in sorted(runs):
            meta = _validated_meta(run)
            if meta is None:
                continue
            for name in meta.get("tables", []):
                rows.append(f"{book},{meta['experiment']},{run.name},{name},"
                            f"{run.parent.name}/{run.name}/{name}.csv")
            if not meta.get("tables"):  # a run stored as not run here (no toolchain): its
                # meta.json says why, and the index still lists it
                rows.append(f"{book},{meta['experiment']},{run.name},,"
                            f"{run.parent.name}/{run.name}/{datastore.META}")
    # An index of the runs (generated, not a copy of data/): beside the pages.
    (links.html_dir / "runs.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    code = [(mod, links.code(mod)) for mod in modules if (paths.REPO_ROOT / mod).is_file()]
    return Provenance(data=[("runs.csv (every run read)", "runs.csv")], code=code)


def _validated_meta(run: Path) -> dict[str, Any] | None:
    """The meta.json of a run that passes every check of :func:`datastore.load_run`
    (only its validated, in-folder tables are linked or copied); None for one that
    does not (the build's log names it)."""
    try:
        return datastore.load_run(run).meta
    except datastore.DataError:
        return None


def logged_runs(log: Path) -> list[Path]:
    """The run folders a notebook wrote or read, from its run log, in order, once each."""
    if not log.is_file():
        return []
    seen: dict[Path, None] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        _, _, path = line.partition(" ")
        if path:
            seen[Path(path)] = None
    return [p for p in seen if (p / datastore.META).is_file()]


SUMMARY_CODE = ("threadcost/views/summary.py", "threadcost/views/headline.py",
                "threadcost/claims/__init__.py", "threadcost/paper/summary.py")


def skipped_runs(data_dir: Path) -> list[datastore.Skipped]:
    """:func:`datastore.skipped_runs` of a data folder (the run folders that could not be
    read), each machine folder's kept with its contents (reading every run of every
    folder to find them takes seconds)."""
    out: list[datastore.Skipped] = []
    for mdir in run_cache.subfolders(Path(data_dir)):
        if mdir.name.startswith(".") or mdir.name == "published":
            continue
        out += folder_cache.memo(
            "skipped", data_dir, mdir.name,
            lambda name=mdir.name: datastore.skipped_runs(data_dir, name),
            (datastore.Skipped,))
    return out
