"""The malloc-touch curve shows only what the experiment did (issue 38, item 1).

In a Jupyter kernel, threads the kernel owns start threads of their own at any time
(pyzmq's garbage-collector thread, on the IOPub thread's first large output): in the
kernel's process each start adds a stack and a glibc malloc arena to VSZ, a 72 MiB step
inside the measured window. The experiment runs in a one-thread child, so a thread the
caller starts meanwhile cannot reach its readings; :func:`malloc_touch.steps` names
any change of VSZ the experiment did not cause.
"""

from __future__ import annotations

import mmap
import threading

import pandas as pd
import pytest

from threadcost.experiments.malloc_touch import run as malloc_touch

MIB = 32


def _frames(result: object) -> tuple[pd.DataFrame, pd.DataFrame]:
    tables = result.tables  # type: ignore[attr-defined]
    return tables["stages"], tables["touch_curve"]


def test_steps_finds_a_thread_started_inside_the_window() -> None:
    # readings as the JupyterLab explorer drew them: 72 MiB appeared while touching
    base, size, step = 1_000_000, 256 * 1024, 72 * 1024
    stages = pd.DataFrame({"stage": list(malloc_touch.STAGES),
                           "vsz_kib": [base, base + size, base + size + step, base + step],
                           "threads": [14, 14, 17, 17]})
    curve = pd.DataFrame({"touched_kib": [0, 1024, 2048],
                          "vsz_kib": [base + size, base + size + step, base + size + step]})
    found = malloc_touch.steps(stages, curve)
    assert len(found) == 4
    assert "+73,728 KiB" in found[0]
    assert "at 1,024 KiB touched" in found[2]


@pytest.mark.parametrize("allocator", ["malloc", "mmap"])
def test_curve_has_no_step_while_the_caller_starts_threads(allocator: str) -> None:
    stop = threading.Event()
    started = 0

    def churn() -> None:
        # the caller's process keeps changing its own VSZ: threads come and go, each
        # mapping 8 MiB, as a kernel's helper threads would (bounded: 200 at most)
        nonlocal started
        while not stop.is_set() and started < 200:
            started += 1
            worker = threading.Thread(target=lambda: mmap.mmap(-1, 8 << 20).close())
            worker.start()
            worker.join()

    churner = threading.Thread(target=churn)
    churner.start()
    try:
        result = malloc_touch.run(mib=MIB, allocator=allocator, points=17)
    finally:
        stop.set()
        churner.join()
    stages, curve = _frames(result)
    assert malloc_touch.steps(stages, curve) == []
    # the curve sits at start + size all along, and free gives it all back
    vsz = dict(zip(stages.stage, stages.vsz_kib, strict=True))
    assert abs(vsz["after_alloc"] - vsz["before"] - MIB * 1024) <= malloc_touch.VSZ_SLACK_KIB
    assert abs(vsz["after_free"] - vsz["before"]) <= malloc_touch.VSZ_SLACK_KIB
