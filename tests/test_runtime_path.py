"""The path CONTRIBUTING.md gives for a new runtime of a peer, walked on a temporary
copy: one ``Runtime(...)`` declaration added to the Rust peer's registry entry
(threadcost/peers/rust.py), nothing else typed. In a fresh interpreter that loads the
copy in place of the entry, the runtime appears in the vocabulary, the experiments'
kind lists, the views' words, the headline and page 5's defaults. Nothing is built or
run: only the declarations are read."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from threadcost import paths, vocabulary
from threadcost.experiments.user_space_tasks import million, runtimes, sleepers

ENTRY = paths.REPO_ROOT / "threadcost" / "peers" / "rust.py"
KEY = "rust-" + "test-task"  # a kind no registry entry declares
DECLARATION = f'''
                Runtime(key="{KEY}", label="Test task", colour="#123456",
                        runtime="test runtime", flag="test-rt", kernel_task=True,
                        need_kib=32, sleepers=(SleepersVariant("test_tasks"),),
                        switch_how="test channels, pinned", memory_how="test tasks asleep"),'''

# Run in a fresh interpreter: the copied entry is loaded as threadcost.peers.rust, then
# every module that reads the declarations is imported and asked what it knows.
PROBE = """
import importlib.abc, importlib.util, json, sys

COPY, REPO = sys.argv[1], sys.argv[2]


class CopiedEntry(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "threadcost.peers.rust":
            return importlib.util.spec_from_file_location(name, COPY)
        return None


sys.meta_path.insert(0, CopiedEntry())
sys.path.insert(0, REPO + "/tools")

from threadcost import peers, vocabulary
from threadcost.experiments.user_space_tasks import million
from threadcost.experiments.user_space_tasks import runtimes
from threadcost.experiments.user_space_tasks import sleepers
from threadcost.findings import headline
from threadcost.results import Result
from threadcost.experiments import parameters
from threadcost.views import runtimes as runtimes_view
import parameters_cells

KEY = sys.argv[3]


def refused_or(ask):
    try:
        return ask()
    except parameters.ParameterError:
        return None


kinds = parameters.declared("tasks_peer_kinds")
quick = parameters.check_file(REPO + "/params/quick.yaml")["tasks_peer_kinds"]
not_run = Result("peer_runtimes", {}, {"kinds": {KEY: {"kind": KEY, "not_run": "why"}}}, {})
print(json.dumps({
    "entry": peers.LANGUAGES.get(KEY),
    "runtimes": list(peers.peer("rust").runtimes),
    "label": vocabulary.TASK_LABELS.get(KEY),
    "colour": vocabulary.TASK_COLOURS.get(KEY),
    "plural": vocabulary.task_label(KEY, runtime=True, plural=True),
    "headline_row": KEY in vocabulary.TASKS,
    "variant_words": vocabulary.words("test_tasks"),
    "runtimes_kinds": KEY in runtimes.KINDS,
    "runtimes_thread_kinds": KEY in runtimes.THREAD_KINDS,
    "runtimes_all": KEY in runtimes.check_params(kinds=quick, cpu=0)["kinds"],
    "brigade_kinds": KEY in runtimes.BRIGADE_KINDS,
    "million_need_kib": million.PEER_NEED_KIB.get(KEY),
    "million_thread_kinds": KEY in million.THREAD_KINDS,
    "million_kinds": refused_or(lambda: million.check_peer_tasks([KEY], 10, 0, 10)["kinds"]),
    "sleepers_variant": list(sleepers.PEER_VARIANTS.get("test_tasks", ())),
    "sleepers_all": "test_tasks" in sleepers.ALL_VARIANTS,
    "view_switch": runtimes_view.SWITCH_HOW.get(KEY),
    "view_memory": runtimes_view.MEMORY_HOW.get(KEY),
    "view_variant": runtimes_view.VARIANT_NAMES.get("test_tasks"),
    "view_row": runtimes_view.peer_rows(not_run)[0]["task"],
    "headline_kernel_task": headline.PEER_KERNEL_TASK.get(KEY),
    "headline_cells": [headline.CELLS.get((KEY, c)) for c in ("launch", "switch", "memory")],
    "page5_default": KEY in kinds.default,
    "page5_choice": KEY in kinds.choices,
    "page5_cell": KEY in parameters.cell("05_user_space_tasks"),
    "default_set": KEY in parameters_cells.default_set(),
}))
"""


def _probe(tmp_path: Path, entry: str) -> dict[str, object]:
    copy = tmp_path / "rust.py"
    copy.write_text(entry, encoding="utf-8")
    out = subprocess.run([sys.executable, "-c", PROBE, str(copy), str(paths.REPO_ROOT), KEY],
                         capture_output=True, text=True, timeout=300, check=False,
                         cwd=paths.REPO_ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_runtime_declared_once_appears_everywhere(tmp_path: Path) -> None:
    # as committed, no module knows the runtime
    assert KEY not in vocabulary.TASK_LABELS and KEY not in runtimes.KINDS
    assert KEY not in million.PEER_NEED_KIB and "test_tasks" not in sleepers.PEER_VARIANTS
    source = ENTRY.read_text(encoding="utf-8")
    assert source.count("kinds=(") == 1, "the Rust entry declares its runtimes in kinds=(...)"
    got = _probe(tmp_path, source.replace("kinds=(", "kinds=(" + DECLARATION, 1))
    key = KEY.replace("-", "_")
    assert got == {
        "entry": "rust", "runtimes": ["test-rt", "thread", "tokio-ct", "tokio-mt"],
        # the vocabulary: its words, colour and plural, its sleepers variant in words
        "label": "Test task", "colour": "#123456",
        "plural": "Test tasks (test runtime)", "headline_row": True,
        "variant_words": "Test tasks",
        # the experiments' kind lists
        "runtimes_kinds": True, "runtimes_thread_kinds": True, "runtimes_all": True,
        "brigade_kinds": True, "million_need_kib": 32, "million_thread_kinds": True,
        "million_kinds": [KEY], "sleepers_variant": [KEY, {}], "sleepers_all": True,
        # the views' words
        "view_switch": "test channels, pinned", "view_memory": "test tasks asleep",
        "view_variant": "Test tasks", "view_row": "Test task",
        # the headline: a kernel thread's switch is the OS thread's (an empty cell)
        "headline_kernel_task": True,
        "headline_cells": [f"launch_{key}_median_ns", None, f"memory_{key}_rss_slope_kib"],
        # page 5's defaults: the declared default and the generated cell and set
        # (`make params` writes them), and quick.yaml's [all]
        "page5_default": True, "page5_choice": True, "page5_cell": True, "default_set": True,
    }
