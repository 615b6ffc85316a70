"""A claim is declared once, in its record (threadcost/claims/records/): its words,
source, quotes, published values, the pages that show it and the experiments it reads.
Everything else is computed from the records: the published tables in
data/published/, the notebooks' claim lists (``claims.for_page``) and the claims an
experiment feeds (``claims.for_experiment``).

A claim id (C01, C35: ``CLAIM_ID``) may still be *named* elsewhere: in prose and
comments, and as the argument of a call that looks its claim up (``claims.value("C07",
...)``, ``findings.published("C31", ...)``), where a stale id fails loudly. What
may not appear outside the records is an id typed as data: a list, tuple, set or
dict of ids, an id compared or assigned, or an id in a data file."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from threadcost import claims, paths
from threadcost.claims import catalogue, publish
from threadcost.experiments import specs

CLAIM_ID = re.compile(r"\bC\d{2}\b")
ROOT = paths.REPO_ROOT
RECORDS = ROOT / "threadcost" / "claims" / "records"
SCANNED = ("threadcost", "notebooks")
DOCS = {ROOT / "data" / "published" / "README.md"}  # prose about the published tables


# the calls that name one claim by its id: claims.value / values_for / measure /
# reading_name (they raise on an id no record declares), findings.published (a mark on a
# published number), and two page-local wrappers of them (views/brigade.py's pub,
# notebook 08's judged); a stale id there fails the next test
LOOKUPS = {"value", "values_for", "measure", "reading_name", "published", "pub", "judged"}


def _called(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _python_files() -> list[Path]:
    return [p for folder in SCANNED for p in sorted((ROOT / folder).rglob("*.py"))
            if RECORDS not in p.parents]


def _data_files() -> list[Path]:
    """Files under data/ that are not a stored run (a run folder holds meta.json: what a
    run recorded is a measurement, never a declaration) and not a doc."""
    runs = {p.parent for p in (ROOT / "data").rglob("meta.json")}
    return [p for p in sorted((ROOT / "data").rglob("*")) if p.is_file()
            and not (runs & set(p.parents)) and p not in DOCS]


def test_published_tables_are_written_from_the_records() -> None:
    assert publish.stale() == [], "run make published: data/published/ is stale"


def test_no_claim_id_is_typed_as_data_outside_its_record() -> None:
    typed = []
    for path in _python_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parent = {child: node for node in ast.walk(tree)
                  for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and CLAIM_ID.fullmatch(node.value)):
                continue
            up = parent[node]
            if isinstance(up, ast.Call) and up.args and up.args[0] is node and \
                    _called(up) in LOOKUPS:
                continue  # a look-up of one claim by its id: fails loudly when stale
            typed.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r} "
                         f"(in {type(up).__name__})")
    generated = {ROOT / "data" / "published" / name for name in publish.TABLES}
    for path in _data_files():
        if path in generated:
            continue  # written from the records (checked above)
        found = sorted(set(CLAIM_ID.findall(path.read_text(encoding="utf-8",
                                                           errors="replace"))))
        if found:
            typed.append(f"{path.relative_to(ROOT)}: {', '.join(found)}")
    assert not typed, ("claim ids typed outside their records (declare them in the "
                       "record; read them with claims.for_page / for_experiment):\n"
                       + "\n".join(typed))


def test_every_claim_id_named_anywhere_is_a_record() -> None:
    known = {c.id for c in catalogue.CLAIMS}
    stale = []
    for path in _python_files() + _data_files() + sorted(DOCS):
        text = path.read_text(encoding="utf-8", errors="replace")
        for line_no, line in enumerate(text.splitlines(), 1):
            stale += [f"{path.relative_to(ROOT)}:{line_no} {cid}"
                      for cid in CLAIM_ID.findall(line) if cid not in known]
    assert not stale, "claim ids no record declares:\n" + "\n".join(stale)


def test_each_record_declares_its_words_pages_and_experiments() -> None:
    notebooks = {p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py")}
    cited = set(claims.sources().key)
    for claim in catalogue.CLAIMS:
        assert claim.words and claim.source in cited, claim.id
        assert claim.pages and set(claim.pages) <= notebooks, (claim.id, claim.pages)
        assert claim.experiments, claim.id
        unknown = [e for e in claim.experiments if not specs.known(e)]
        assert not unknown, f"{claim.id} reads unregistered experiments {unknown}"
        assert not any(specs.get(e).auxiliary for e in claim.experiments), claim.id


def test_lists_are_computed_from_the_records() -> None:
    ids = [c.id for c in catalogue.CLAIMS]
    on_pages = {cid for c in catalogue.CLAIMS for p in c.pages for cid in claims.for_page(p)}
    assert on_pages == set(ids)  # every claim is shown on a page besides the claims page
    for claim in catalogue.CLAIMS:
        assert all(claim.id in claims.for_experiment(e) for e in claim.experiments)
        assert claim.id in claims.for_page(claim.pages[0][:2])  # by number too
    assert list(claims.claims().claim_id) == ids
    assert set(claims.values().claim_id) <= set(ids)
