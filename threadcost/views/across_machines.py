"""The same study on several machines, side by side.

Every machine folder with stored runs is one column: the committed ones
(``data/<machine-id>/``) and yours (``runs/<machine-id>/``, marked "(this machine)"),
apart even when your machine id is the reference's. Two views:

- :func:`headline_table`: each headline number (launch, switch, memory of a
  thread, process, fiber, goroutine) per machine, from the one source of those
  numbers (``views.headline.cells``, which draws notebook 00's headline), and this
  machine's divided by the committed reference's;
- :func:`normalised_table`: times divided by the machine's own yardstick, when a
  ``yardsticks`` run is stored for it: a time that is "slow because the machine is
  slow" comes out the same on every machine.

With one machine, :func:`how_to_add_text` says how to add another.
"""

from __future__ import annotations

import hashlib
import math
import re
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from threadcost import findings, paths, vocabulary
from threadcost.claims import logic
from threadcost.findings import folder_cache
from threadcost.findings.headline import PEER_KERNEL_TASK
from threadcost.host import machine
from threadcost.measured.intervals import median_over_repeats
from threadcost.store import datastore, run_cache
from threadcost.textout import md_code, md_text, plain_label
from threadcost.views import headline, machine_line

YARDSTICKS_EXPERIMENT = "yardsticks"
TASKS = vocabulary.TASKS
METRICS = {  # metric -> (label, unit shown, factor from the stored unit)
    "launch_ns": ("launch", "µs", 1e-3),
    "switch_ns": ("switch", "µs", 1e-3),
    "memory_kib": ("memory, resident + kernel side", "KiB", 1.0),
}
PER = {"launch_ns": "per launch",
       "switch_ns": "per switch, half a batch's mean round trip",
       "memory_kib": "per idle task"}
# notebook 00's headline columns -> the metrics above
FROM_HEADLINE = {"launch": "launch_ns", "switch": "switch_ns", "memory": "memory_kib"}
# the yardstick times are divided by: one empty system call (yardsticks/repeats)
REFERENCE_YARDSTICK = "syscall"


THIS_MACHINE = " (this machine)"  # the column of your runs of this machine
YOURS = " (your runs)"  # your runs of another machine (copied into runs/)
RATIO = "this machine ÷ committed reference"


def _read_folder(root: Path, mid: str) -> dict[str, Any]:
    """What this section reads of one machine folder besides its verdicts and headline
    findings: whether it holds a complete run, the fingerprint its newest run recorded,
    and its yardstick (run id and ns, :func:`_yardstick_run`)."""
    runs = datastore.list_runs(data_dir=root, machine_id=mid)
    fp = runs[-1].meta.get("machine") if runs else None
    yard = None
    sticks = [r for r in runs if r.experiment == YARDSTICKS_EXPERIMENT]
    if sticks and "repeats" in sticks[-1].meta.get("tables", []):
        table = sticks[-1].table("repeats")
        rows = table[table["yardstick"] == REFERENCE_YARDSTICK]["ns_median"].astype(float)
        rows = rows[rows.map(math.isfinite) & (rows > 0)]
        if not rows.empty:
            yard = (str(sticks[-1].meta.get("run_id", "")),
                    median_over_repeats(rows, "ns").value)
    return {"complete": bool(runs), "fingerprint": dict(fp) if isinstance(fp, dict) else None,
            "yardstick": yard}


def _folder(root: Path, mid: str) -> dict[str, Any]:
    """:func:`_read_folder`, once per folder's contents: kept across the processes of a
    paper build (``threadcost.findings.folder_cache``), so page 06 reads no committed
    run again when the folder has not changed."""
    return folder_cache.memo("across-machines", root, mid, lambda: _read_folder(root, mid))


def _mids(root: Path) -> list[str]:
    """Machine folders of a data folder that hold at least one complete run (by the
    folder's name: what a run's meta.json says of its machine is not trusted)."""
    return [m.name for m in run_cache.subfolders(root)
            if not m.name.startswith(".") and m.name != "published" and not m.is_symlink()
            and _folder(root, m.name)["complete"]]


def _columns(data_dir: str | Path | None) -> dict[str, tuple[Path, str]]:
    """Column label -> (folder, machine id): a data folder's machines when one is named,
    else the committed machines (labelled by id) and yours (marked)."""
    if data_dir is not None:
        return {mid: (Path(data_dir), mid) for mid in _mids(Path(data_dir))}
    ref, mine = paths.reference_dir(), paths.data_dir()
    columns = {mid: (ref, mid) for mid in _mids(ref)} if ref is not None else {}
    if ref is None or mine.resolve() != ref.resolve():
        here = machine.machine_id()
        for mid in _mids(mine):
            columns[mid + (THIS_MACHINE if mid == here else YOURS)] = (mine, mid)
    return columns


def _where(data_dir: str | Path | None, label: str) -> tuple[Path | None, str]:
    """(folder, machine id) of a column label (a bare id: in ``data_dir``)."""
    found = _columns(data_dir).get(label)
    return found if found is not None else (
        Path(data_dir) if data_dir is not None else None, label)


def machines(data_dir: str | Path | None = None) -> list[str]:
    """Column labels: machine folders that hold at least one complete run."""
    return list(_columns(data_dir))


def reference_column(labels: list[str]) -> str | None:
    """The committed column "this machine" is divided by: the same machine's committed
    runs, else the machine of the committed reference rendering (``reference/<id>/``)."""
    mine = next((label for label in labels if label.endswith(THIS_MACHINE)), None)
    if mine is None:
        return None
    same = mine.removesuffix(THIS_MACHINE)
    if same in labels:
        return same
    rendered = paths.REPO_ROOT / "reference"
    return next((label for label in labels if (rendered / label).is_dir()), None)


def name_part(machine_id: str) -> str:
    """A machine's id as part of a finding's name (an attribute of the page): the id
    itself when it is made of letters, digits, dots, dashes and underscores (every id
    this study makes), else a digest of it, so no text of a foreign folder's name
    reaches an attribute."""
    if re.fullmatch(r"[A-Za-z0-9._-]{1,200}", machine_id):
        return machine_id
    return "machine-" + hashlib.blake2b(machine_id.encode("utf-8", "replace"),
                                        digest_size=6).hexdigest()


def describe(data_dir: str | Path | None, machine_id: str) -> str:
    """The machine in words, from the fingerprint stored with its newest run, as Markdown
    (its RAM marked ``machine_memory_gib@<machine id>``)."""
    root, mid = _where(data_dir, machine_id)
    fp = _folder(root if root is not None else paths.data_dir_for(mid), mid)["fingerprint"]
    if not isinstance(fp, dict):
        return md_text(machine_id)
    try:
        return machine_line.markdown(fp, f"machine_memory_gib@{name_part(machine_id)}")
    except (KeyError, TypeError, ValueError):
        return md_text(machine_id)


def headline_values(data_dir: str | Path | None = None) -> pd.DataFrame:
    """Long table: machine, task, metric, value (stored units), for every machine, read
    from notebook 00's headline cells (cells not measured on a machine are left out)."""
    frames = []
    for mid, (root, folder_mid) in _columns(data_dir).items():
        cells = headline.cells(root, folder_mid)
        cells = cells[cells["value"].notna()]
        if not cells.empty:
            frames.append(pd.DataFrame({"machine": mid, "task": cells["task"],
                                        "metric": cells["column"].map(FROM_HEADLINE),
                                        "value": cells["value"].astype(float)}))
    if not frames:
        return pd.DataFrame(columns=["machine", "task", "metric", "value"])
    return pd.concat(frames, ignore_index=True)


def _quantity(task: str, metric: str) -> str:
    label, unit, _ = METRICS[metric]
    if metric == "memory_kib" and PEER_KERNEL_TASK.get(task):
        # its peer reads RSS only: the headline marks the cell partial, and so does this
        label = "memory, resident only (its kernel side is not counted)"
    return f"{vocabulary.TASK_LABELS[task]} {label} ({unit})"


def headline_table(values: pd.DataFrame) -> pd.DataFrame:
    """One row per headline quantity, one column per machine (figure units)."""
    mids = sorted(values.machine.unique()) if not values.empty else []
    rows = []
    for metric in METRICS:
        for task in TASKS:
            hit = values[(values.task == task) & (values.metric == metric)]
            if hit.empty:
                continue
            row: dict[str, Any] = {"quantity": _quantity(task, metric)}
            for mid in mids:
                got = hit[hit.machine == mid]
                row[mid] = (float(got.value.iloc[-1]) * METRICS[metric][2]
                            if not got.empty else None)
            rows.append(row)
    table = pd.DataFrame(rows, columns=["quantity", *mids])
    ref = reference_column(mids)
    mine = next((m for m in mids if m.endswith(THIS_MACHINE)), None)
    if ref is not None and mine is not None and not table.empty:
        table[RATIO] = [m / r if isinstance(m, float) and isinstance(r, float) and r > 0
                        else None for m, r in zip(table[mine], table[ref], strict=True)]
    return table


def _yardstick_run(data_dir: str | Path | None, machine_id: str) -> tuple[str, float] | None:
    """(run id, ns): one empty system call, the median over the repeats of the machine's
    newest ``yardsticks`` run, the statistic the claims' whys print it in (table
    ``repeats``: repeat, yardstick, ns_median, ...)."""
    root, mid = _where(data_dir, machine_id)
    folder = root if root is not None else paths.data_dir_for(mid)
    got = _folder(folder, mid)["yardstick"]
    return None if got is None else (str(got[0]), float(got[1]))


def yardstick(data_dir: str | Path | None, machine_id: str) -> tuple[str, float] | None:
    """(name, ns) of the machine's reference operation: one empty system call, the median
    over the repeats of its newest ``yardsticks`` run."""
    got = _yardstick_run(data_dir, machine_id)
    return None if got is None else (REFERENCE_YARDSTICK, got[1])


def normalised_table(data_dir: str | Path | None, values: pd.DataFrame) -> pd.DataFrame:
    """Times in multiples of each machine's yardstick (machines without one: absent)."""
    sticks = {mid: yardstick(data_dir, mid) for mid in sorted(values.machine.unique())} \
        if not values.empty else {}
    sticks = {k: v for k, v in sticks.items() if v is not None}
    if not sticks:
        return pd.DataFrame()
    rows = []
    for metric in ("launch_ns", "switch_ns"):
        for task in TASKS:
            hit = values[(values.task == task) & (values.metric == metric)]
            if hit.empty:
                continue
            row: dict[str, Any] = {
                "quantity": f"{vocabulary.TASK_LABELS[task]} {METRICS[metric][0]} "
                            "(empty system calls)"}
            for mid, (_, ns) in sticks.items():
                got = hit[hit.machine == mid]
                row[mid] = float(got.value.iloc[-1]) / ns if not got.empty else None
            rows.append(row)
    return pd.DataFrame(rows, columns=["quantity", *sticks])


def yardstick_text(data_dir: str | Path | None, mids: list[str]) -> str:
    """Which yardstick each machine's times are divided by, or why none; each value
    marked ``yardstick_syscall_newest_median_ns@<machine id>`` (the median over the
    repeats of that machine's newest yardsticks run)."""
    parts = []
    for mid in mids:
        got = _yardstick_run(data_dir, mid)
        if got is None:
            parts.append(f"{md_code(mid)}: no yardsticks run stored")
            continue
        shown = logic.number(got[1])  # as every why and context row prints the call
        parts.append(f"{md_code(mid)}: one empty system call = " + findings.tag(
            f"yardstick_syscall_newest_median_ns@{name_part(mid)}", shown, f"{shown} ns",
            (got[0],)))
    return ("Times divided by each machine's yardstick (a fixed piece of work timed on "
            "that machine: one empty system call (getppid), the median over the repeats of its "
            "newest yardsticks run), so a machine that is slower overall does not look "
            "slower at switching or launching: " + "; ".join(parts) + ".")


def figure(values: pd.DataFrame) -> plt.Figure:
    """One panel per headline metric: each task's value, one marker per machine."""
    mids = sorted(values.machine.unique())
    fig, axes = plt.subplots(1, len(METRICS), figsize=(12, 1.6 + 0.5 * len(TASKS)),
                             squeeze=False)
    markers = "osD^v<>"
    for ax, (metric, (label, unit, factor)) in zip(axes[0], METRICS.items(), strict=True):
        y = np.arange(len(TASKS))
        for i, mid in enumerate(mids):
            pick = values[(values.metric == metric) & (values.machine == mid)]
            xs = [float(pick[pick.task == t].value.iloc[-1]) * factor
                  if (pick.task == t).any() else np.nan for t in TASKS]
            ax.scatter(xs, y + (i - (len(mids) - 1) / 2) * 0.18, marker=markers[i % 7],
                       s=40, label=plain_label(mid), zorder=3)
        ax.set_yticks(y, [vocabulary.TASK_LABELS[t] for t in TASKS] if ax is axes[0][0]
                      else [""] * len(TASKS))
        ax.set_ylim(len(TASKS) - 0.5, -0.5)
        shown = values[values.metric == metric].value.to_numpy(dtype=float) * factor
        top = float(np.nanmax(shown)) if shown.size else 1.0
        # every panel on a log axis: a process holds ~100x a goroutine's memory, as a
        # goroutine's launch is ~100x faster than a process's
        ax.set_xscale("log")
        positive = shown[np.isfinite(shown) & (shown > 0)]
        low = float(positive.min()) if positive.size else 0.1
        ax.set_xlim(low / 1.6, top * 1.6)
        ax.set_title(label, fontsize=11)
        ax.set_xlabel(f"{unit} {PER.get(metric, 'per task')} (log scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=max(len(mids), 1), frameon=False,
               bbox_to_anchor=(0.5, -0.08))
    fig.suptitle("The same measurements on each machine", fontweight="bold")
    fig.tight_layout()
    return fig


def how_to_add_text(mids: list[str]) -> str:
    """What to do when fewer than two machines have runs."""
    have = f"only {md_code(mids[0])} has runs" if mids else "no machine has runs yet"
    return (f"In this data folder {have}, so there is nothing to set side by side. To add "
            "another machine: run `make paper` there and `threadcost share`, then "
            "`threadcost import <archive>` here and rerun this notebook (or `make "
            "paper`). Each machine keeps its own "
            "folder, so nothing is overwritten.")
