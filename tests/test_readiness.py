"""Tokens in flight (notebook 09, issue #46): behaviour, never speed.

Bad values are refused naming the parameter before any C runs; a run's counts hold
together (one token per read and per write: reads == writes == events, every token
retired); a limit on fds (RLIMIT_NOFILE of the measuring process) gives the partial
result with the limit named; io_uring refused gives "not run here" with why while the
other models measure; the page draws from a stored run with the kernels hidden.
"""

from __future__ import annotations

import errno
import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_paper_without_kernels import _hidden_env
from threadcost.errors import ParameterError
from threadcost.experiments.readiness import run as readiness
from threadcost.store import datastore
from threadcost.views import readiness as view

REPO = Path(__file__).resolve().parent.parent
SMALL = {"tasks": 64, "tokens": [1, 8, 64], "events": 200, "repeats": 1}


@pytest.mark.parametrize(("name", "value", "allowed"), [
    ("tasks", 20_000, "10,000"),
    ("tasks", 1, "2"),
    ("tokens", [0, 10], "1"),
    ("tokens", [1, 65], "64"),
    ("models", ["fiber"], "epoll-lt"),
    ("channel", "fifo", "socketpair"),
    ("placements", ["everywhere"], "unpinned"),
    ("events", 10, "100"),
    ("repeats", 0, "1"),
])
def test_a_bad_value_is_refused_before_any_c_runs(monkeypatch: pytest.MonkeyPatch, name: str,
                                                  value: object, allowed: str) -> None:
    def no_kernel(*_: object, **__: object) -> None:
        raise AssertionError("a kernel ran before the parameters were checked")

    monkeypatch.setattr(readiness, "run_one", no_kernel)
    with pytest.raises(ParameterError) as refused:
        readiness.run(**{**SMALL, name: value})
    words = str(refused.value)
    assert name in words and allowed in words, words
    assert str(value if not isinstance(value, list) else value[0]) in words, words


def test_counts_hold_together_within_a_run() -> None:
    result = readiness.run(**SMALL, models=["thread", "epoll-lt", "epoll-et"])
    points = result.tables["points"]
    assert set(points.model) == {"thread", "epoll-lt", "epoll-et"}
    assert not result.summary["not_run"] and result.limit_hit is None
    for row in points.itertuples():
        assert row.events == row.tokens * row.hops, row
        assert row.reads == row.writes == row.events, row
        assert row.retired == row.tokens, row
    lt, et = (points[points.model == m] for m in ("epoll-lt", "epoll-et"))
    # level-triggered: one read per readiness event, none that finds nothing
    assert (lt.wait_events == lt.events).all() and (lt.empty_reads == 0).all()
    # edge-triggered: each ready channel read until it holds nothing, once per edge
    assert (et.wait_events <= et.events).all()
    assert (et.empty_reads == et.wait_events).all()
    cost = result.tables["cost"]
    assert len(cost) == 9 and (cost.repeats == 1).all()
    assert (cost.ns_per_event_min <= cost.ns_per_event_p50).all()
    assert (cost.ns_per_event_p50 <= cost.ns_per_event_max).all()


def test_repeats_are_interleaved_across_models() -> None:
    result = readiness.run(tasks=16, tokens=[1, 16], events=100, repeats=3,
                           models=["thread", "epoll-lt"])
    points = result.tables["points"]
    assert sorted(set(points.repeat)) == [0, 1, 2]
    assert (result.tables["cost"].repeats == 3).all()


def test_an_fd_limit_gives_the_partial_result_with_the_limit_named() -> None:
    # 150 fds for 100 tasks of 2 fds each: the kernel narrows N and measures on
    result = readiness.run(tasks=100, tokens=[1, 10], events=200, repeats=1,
                           models=["thread", "epoll-lt"], max_fds=150)
    assert result.limit_hit is not None
    assert "open files" in result.limit_hit["limit"], result.limit_hit
    points = result.tables["points"]
    assert set(points.model) == {"thread", "epoll-lt"}
    assert (points.tasks < 100).all() and (points.tasks > 10).all()
    assert points.limit.str.contains("open files").all()
    assert (points.reads == points.events).all()
    assert "a limit narrowed the run" in view.not_run_text(result)


def test_io_uring_refused_is_not_run_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = functools.partial(readiness.run_one, uring_errno=errno.ENOSYS)
    monkeypatch.setattr(readiness, "run_one", refused)
    result = readiness.run(**SMALL, models=["epoll-lt", "io_uring"])
    why = result.summary["not_run"]["io_uring"]
    assert "io_uring" in why and "ENOSYS" in why, why
    assert result.limit_hit is None  # a model not run is no limit on the run
    points = result.tables["points"]
    assert set(points.model) == {"epoll-lt"}
    assert view.uring_text(result).startswith("**io_uring: not run here: ")
    assert "not run here" in view.not_run_text(result)


def test_io_uring_when_this_kernel_allows_it() -> None:
    result = readiness.run(**SMALL, models=["io_uring"])
    if "io_uring" in result.summary["not_run"]:
        pytest.skip(result.summary["not_run"]["io_uring"])
    points = result.tables["points"]
    assert (points.reads == points.events).all() and (points.writes == points.events).all()
    # one io_uring_enter serves many events once many tokens are in flight
    most = points[points.tokens == points.tokens.max()].iloc[0]
    assert most.waits < most.events


def test_the_page_renders_from_a_stored_run_without_kernels(tmp_path: Path) -> None:
    data = tmp_path / "runs"
    result = readiness.run(**SMALL, models=["thread", "epoll-lt", "epoll-et"])
    stored = datastore.save_run(result, data, label="readiness")
    machine = stored.parent.name
    meta = json.loads((stored / "meta.json").read_text())
    assert meta["experiment"] == "readiness" and set(meta["tables"]) == {"points", "cost"}
    out = tmp_path / "paper"
    env = {**_hidden_env(tmp_path, "missing"), "THREADCOST_DATA_DIR": str(data),
           "THREADCOST_FIGURES_DIR": str(tmp_path / "figures")}
    built = subprocess.run(
        [sys.executable, "-m", "threadcost.paper", "--only", "09", "--machine", machine,
         "--params", "params/quick.yaml", "--out", str(out)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=400, check=False,
        stdin=subprocess.DEVNULL)
    assert built.returncode == 0, built.stderr[-3000:]
    page = (out / "html" / "09_readiness.html").read_text(encoding="utf-8")
    assert "Tokens in flight" in page
    assert 'data-quantity="readiness_threads_over_loop_most_tokens_ratio"' in page


def test_the_answer_prints_no_raw_values() -> None:
    result = readiness.run(**SMALL, models=["thread", "epoll-lt"])
    text = view.answer_text(results=[result]) + view.uring_text(result)
    assert "readiness_thread_most_tokens_median_ns" in text  # read by name
    shown = re.sub(r"<[^>]+>", "", text)
    for raw in ("nan", "None", "e+0", "e-0", " us ", "epoll-lt", "readiness_", "ns_per"):
        assert raw not in shown, (raw, shown)


def test_goroutines_without_go_are_not_run_with_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(readiness, "_go_absent", lambda: "the Go toolchain is not installed")
    result = readiness.run(**SMALL, models=["goroutine", "epoll-lt"])
    assert result.summary["not_run"] == {"goroutine": "the Go toolchain is not installed"}
    assert set(result.tables["points"].model) == {"epoll-lt"}
    assert "not run here: the Go toolchain is not installed" in view.not_run_text(result)


def test_goroutines_count_like_the_c_models() -> None:
    why = readiness._go_absent()
    if why:
        pytest.skip(why)
    result = readiness.run(**SMALL, models=["goroutine"])
    points = result.tables["points"]
    assert (points.reads == points.events).all() and (points.writes == points.events).all()
    assert (points.retired == points.tokens).all()
    assert points.cross_cpu_per_event.isna().all()  # not counted, never a made-up zero


def test_tokio_tasks_without_rust_are_not_run_with_why(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(readiness, "_rust_absent", lambda: "cargo is not installed")
    result = readiness.run(**SMALL, models=["tokio-task", "epoll-lt"])
    assert result.summary["not_run"] == {"tokio-task": "cargo is not installed"}
    assert set(result.tables["points"].model) == {"epoll-lt"}


def test_tokio_tasks_count_like_the_c_models() -> None:
    why = readiness._rust_absent()
    if why:
        pytest.skip(why)
    result = readiness.run(**SMALL, models=["tokio-task"])
    points = result.tables["points"]
    assert (points.reads == points.events).all() and (points.writes == points.events).all()
    assert (points.retired == points.tokens).all()
