"""Where an idle thread's extra page lies, when two machines' stored runs differ by one.

Two machines can differ by a whole page of user memory per idle thread (one C library
starts its threads with a deeper frame, a CPU saves more register state on the thread's
stack, a library adds static thread-local storage). Page 02's two grids, stored with
every run, say where that page lies without any further measurement:

- the **touch grid** (each thread writes the top *d* KiB of its stack, for several *d*):
  if the gap closes once the threads write some depth, the page is one of the stack
  pages those writes make resident anyway: it is on the thread's own stack, within that
  depth of its top. If it stays at every depth, it lies outside the part the threads
  write (above the first frame: the thread descriptor and static TLS; or off the stack);
- the **stack-size grid**: a gap the same at every stack size, the smallest included,
  does not grow with the reservation;
- the other counters of the untouched row (virtual size, kernel stack, page tables):
  equal ones put the page in user memory only.

:func:`compare` reads two machines' grids (plain tables, so a test feeds it any);
:func:`gap_text` finds the other machine folders with both grids stored and says, per
machine that differs, what the grids show. Every number it prints is marked with the
run it reads (``findings.tag``); a machine that differs by less than a page is not
named.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from threadcost import findings, paths, textout
from threadcost.store import datastore
from threadcost.views.across_machines import name_part

TOUCH, STACKS = "thread_memory_touch", "thread_memory_stack"
TOUCH_TABLE, STACK_TABLE = "per_touch_depth", "per_stack_size"
RSS = "rss_kib_per_thread"
# the untouched row's counters that say whether the page is the user's or the kernel's
OTHER_COUNTERS = {"vsz_kib_per_thread": "virtual size",
                  "kernel_stack_kib_per_thread": "kernel stack",
                  "page_tables_kib_per_thread": "page tables"}
# a per-thread difference within this share of a page is "the same" (per-thread medians
# of a thousand threads carry glibc's heap bookkeeping, a fraction of a KiB)
PAGE_TOLERANCE = 0.15
ROLLUP = "rss_rollup_kib_per_thread"


@dataclass(frozen=True)
class Grids:
    """One machine's stored grids: the touch grid's and the stack grid's per-point
    medians (their stored tables), its page size and the runs they come from."""

    label: str  # the machine in words
    touch: pd.DataFrame
    stacks: pd.DataFrame
    page_kib: float
    touch_run: str
    stack_run: str
    machine_id: str = ""


@dataclass(frozen=True)
class Located:
    """How ``here`` differs from ``there`` by whole pages per idle thread."""

    pages: int  # here minus there, whole pages per untouched thread
    here_kib: float  # untouched RSS per thread, each machine
    there_kib: float
    by_page_walk: bool  # smaps_rollup shows the same gap
    closes_at_kib: int | None  # the smallest touch depth from which the gap is gone
    every_stack_size: bool  # the gap is the same at every stack size of both grids
    smallest_stack_kib: int | None
    same_counters: tuple[str, ...]  # other counters equal within the tolerance


def _row(table: pd.DataFrame, key: str, value: int) -> pd.Series | None:
    rows = table[table[key] == value]
    return None if rows.empty else rows.iloc[0]


def compare(here: Grids, there: Grids) -> Located | None:
    """``here``'s untouched idle thread against ``there``'s: None unless they differ by
    a whole number of pages (within :data:`PAGE_TOLERANCE` of one), on machines of one
    page size whose grids share the untouched point."""
    page = here.page_kib
    if page <= 0 or not math.isclose(page, there.page_kib):
        return None
    tol = PAGE_TOLERANCE * page
    a, b = _row(here.touch, "touch_kib_asked", 0), _row(there.touch, "touch_kib_asked", 0)
    if a is None or b is None:
        return None
    gap = float(a[RSS]) - float(b[RSS])
    pages = round(gap / page)
    if pages == 0 or abs(gap - pages * page) > tol:
        return None

    def whole(x: float) -> bool:
        return abs(x - pages * page) <= tol

    walk = ROLLUP in a and ROLLUP in b and whole(float(a[ROLLUP]) - float(b[ROLLUP]))
    depths = sorted(set(here.touch.touch_kib_asked) & set(there.touch.touch_kib_asked))
    gone = [d for d in depths if d > 0 and abs(
        float(_row(here.touch, "touch_kib_asked", d)[RSS])  # type: ignore[index]
        - float(_row(there.touch, "touch_kib_asked", d)[RSS])) <= tol]  # type: ignore[index]
    # the gap must stay closed at every depth from the first closed one on
    closes = next((d for d in gone if all(x in gone for x in depths if x >= d)), None)
    sizes = sorted(set(here.stacks.stack_kib_asked) & set(there.stacks.stack_kib_asked))
    held = [s for s in sizes if whole(
        float(_row(here.stacks, "stack_kib_asked", s)[RSS])  # type: ignore[index]
        - float(_row(there.stacks, "stack_kib_asked", s)[RSS]))]  # type: ignore[index]
    asked = [s for s in held if s > 0]
    same = tuple(words for col, words in OTHER_COUNTERS.items()
                 if col in a and col in b and abs(float(a[col]) - float(b[col])) <= tol)
    return Located(pages=pages, here_kib=float(a[RSS]), there_kib=float(b[RSS]),
                   by_page_walk=walk, closes_at_kib=closes,
                   every_stack_size=bool(sizes) and held == sizes,
                   smallest_stack_kib=min(asked) if asked else None, same_counters=same)


_COUNT = {1: "one page", 2: "two pages", 3: "three pages"}


def _pages(n: int) -> str:
    return _COUNT.get(abs(n), f"{abs(n):,} pages")


def _kib(x: float) -> str:
    return findings.number(x, "auto")


def _series(items: list[str], sep: str = ", ") -> str:
    """"a", "a and b", "a, b and c" (with ``sep`` between the first ones)."""
    return items[0] if len(items) == 1 else sep.join(items[:-1]) + " and " + items[-1]


def located_text(here: Grids, group: list[tuple[Grids, Located]]) -> str:
    """One paragraph for machines whose grids say the same of ``here`` (the same number
    of pages, closed at the same depth, ...): how many pages, and where they lie."""
    found = group[0][1]
    this_name = "memory_thread_untouched_rss_median_kib"
    here_v = findings.tag(this_name, _kib(found.here_kib), f"{_kib(found.here_kib)} KiB",
                          (here.touch_run,))
    values = []
    for there, theirs in group:
        name = f"{this_name}@{name_part(there.machine_id or there.label)}"
        shown = _kib(theirs.there_kib)
        values.append(f"{findings.tag(name, shown, f'{shown} KiB', (there.touch_run,))} "
                      f"on {there.label}")
    more = "here" if found.pages > 0 else "there"
    out = [f"**An untouched idle thread here keeps {_pages(found.pages)} "
           f"{'more' if found.pages > 0 else 'fewer'}** of user memory than on "
           f"{'one other machine' if len(group) == 1 else f'these {len(group):,} machines'}"
           f": {here_v} per thread here (the touch grid's untouched threads"
           + (", the same counted by page walk" if all(f.by_page_walk for _, f in group)
              else "") + f") against {_series(values, '; ')}."]
    if found.same_counters:
        out.append(f"The threads' {_series(list(found.same_counters))} are the same "
                   "(within a sixth of a page): the extra memory is user memory, neither "
                   "reserved address space nor these kernel parts.")
    if found.every_stack_size and found.smallest_stack_kib is not None:
        smallest = findings.parameter("stack_sizes_kib",
                                      f"{found.smallest_stack_kib:,} KiB")
        out.append(f"It is the same at every stack size of the grid, {smallest} included: "
                   "it does not grow with the stack reserved.")
    one = abs(found.pages) == 1
    if found.closes_at_kib is not None:
        depth = findings.parameter("touch_depths_kib", f"{found.closes_at_kib:,} KiB")
        out.append(f"Once each thread writes {depth} of its stack below its first frames, "
                   f"the machines hold the same number of pages: the extra "
                   f"{'page' if one else _pages(found.pages)} {more} "
                   f"{'is' if one else 'are'} on the thread's own stack, within "
                   f"those {depth} near its top, written by the thread's start on one "
                   "machine and not on the other; not the thread descriptor or its static "
                   "thread-local storage, which sit above the part the threads write. "
                   f"What writes {'it' if one else 'them'}, these runs do not record.")
    else:
        out.append(f"The gap stays at every depth the threads write: the extra "
                   f"{'page' if one else _pages(found.pages)} {more} "
                   f"{'lies' if one else 'lie'} outside the stack pages the threads "
                   "write, above their first frame (the thread descriptor and static "
                   "thread-local storage) or off the stack.")
    return " ".join(out)



def describe(fp: dict[str, Any], machine_id: str) -> str:
    """A machine in words for this paragraph: CPU, CPUs, C library, and its folder."""
    cpus = fp.get("logical_cpus")
    what = textout.md_text(str(fp.get("cpu_model") or "an unnamed CPU"))
    if isinstance(cpus, int):
        what += f" with {cpus:,} CPUs"
    if fp.get("glibc"):
        what += f" (glibc {textout.md_text(fp['glibc'])}; folder {textout.md_code(machine_id)})"
    else:
        what += f" (folder {textout.md_code(machine_id)})"
    return f"the {what}"


_RUN = re.compile(r"\d{8}T\d{6}Z-(?P<experiment>.+)-[0-9a-f]{6}")


def _newest(machine_dir: Path, experiment: str) -> datastore.Run | None:
    """The newest readable run of ``experiment`` in one machine folder, by folder name
    (a run id starts with its time): only that run is read, not the whole folder."""
    names = sorted((p for p in machine_dir.iterdir()
                    if (m := _RUN.fullmatch(p.name)) and m["experiment"] == experiment),
                   reverse=True)
    for path in names:
        try:
            return datastore.load_run(path)
        except (datastore.DataError, OSError, ValueError):
            continue
    return None


def stored_grids(machine_dir: Path) -> Grids | None:
    """A machine folder's newest touch and stack grids, or None when either is missing
    or cannot be read."""
    try:
        touch, stacks = _newest(machine_dir, TOUCH), _newest(machine_dir, STACKS)
        if touch is None or stacks is None:
            return None
        fp = touch.meta.get("machine") or {}
        return Grids(label=describe(fp, machine_dir.name), touch=touch.table(TOUCH_TABLE),
                     stacks=stacks.table(STACK_TABLE),
                     page_kib=float(fp.get("page_size") or 0) / 1024,
                     touch_run=touch.meta["run_id"], stack_run=stacks.meta["run_id"],
                     machine_id=machine_dir.name)
    except (datastore.DataError, OSError, ValueError, KeyError, TypeError):
        return None


def _others(machine_id: str, data_dir: str | Path | None = None) -> list[Path]:
    """The other machine folders (``data_dir``'s, yours, then the committed ones), one
    per id."""
    seen: dict[str, Path] = {}
    for root in [*([Path(data_dir)] if data_dir is not None else []), *paths.data_dirs()]:
        if not root.is_dir():
            continue
        for folder in sorted(root.iterdir()):
            if (folder.is_dir() and not folder.is_symlink() and folder.name != machine_id
                    and folder.name != "published" and not folder.name.startswith(".")):
                seen.setdefault(folder.name, folder)
    return list(seen.values())


def gap_text(touch: Any, stacks: Any, fingerprint: dict[str, Any], machine_id: str,
             run_ids: tuple[str, str], data_dir: str | Path | None = None) -> str:
    """Page 02's paragraph(s) on the other stored machines whose idle thread keeps a
    different number of pages than this one's (``touch`` and ``stacks``: this page's
    grids; ``run_ids``: the runs they are, or how the page names them unsaved). Empty
    when no other machine has both grids stored; one sentence when none differs."""
    try:
        here = Grids(label=describe(fingerprint, machine_id),
                     touch=touch.tables[TOUCH_TABLE], stacks=stacks.tables[STACK_TABLE],
                     page_kib=float(fingerprint.get("page_size") or 0) / 1024,
                     touch_run=run_ids[0], stack_run=run_ids[1], machine_id=machine_id)
    except (AttributeError, KeyError, TypeError, ValueError):
        return ""
    others = [g for g in (stored_grids(folder) for folder in _others(machine_id, data_dir))
              if g]
    if not others:
        return ""
    groups: dict[tuple[Any, ...], list[tuple[Grids, Located]]] = {}
    same = 0
    for there in others:
        try:
            found = compare(here, there)
        except (KeyError, TypeError, ValueError):
            continue
        if found is None:
            same += 1
            continue
        key = (found.pages, found.closes_at_kib, found.every_stack_size,
               found.smallest_stack_kib, found.same_counters)
        groups.setdefault(key, []).append((there, found))
    texts = [located_text(here, group) for group in groups.values()]
    if same:
        texts.append(f"An untouched idle thread keeps the same pages of user memory here as "
                     f"on {'the' if not texts else 'the other'} {same:,} machine "
                     f"folder{'s' if same > 1 else ''} whose grids are stored"
                     + (" beside this one." if not texts else "."))
    return "\n\n".join(texts)
