"""Tables and text of S1's one-million-task runs (C10, C11)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from threadcost import claims, findings, vocabulary
from threadcost.findings.memory import CEILING
from threadcost.findings.tasks import VARIANTS, million_name
from threadcost.results import Result
from threadcost.views.more_sources import reading_text

# C11's readings of S1's program (``claims.measure``'s words): the prose prints them,
# means over the runs, as the verdict judges them
C11_READINGS = {"wall_s": "S1's program: wall", "user_s": "S1's program: user",
                "sys_s": "S1's program: sys",
                "max_rss_kib_per_goroutine": "Resident memory per sleeping goroutine"}


def goroutines_text(result: Result, machine_id: str | None = None,
                    data_dir: Any = None) -> str:
    """Each variant in words. S1's program, run several times: wall, user, system time and
    max RSS per goroutine as C11 judges them (``claims.measure``: the mean over the runs,
    with its 95% interval, marked with the reading's name), and the time to start them
    as the median of the runs, said so. The held variant: its one run (its findings)."""
    s = result.summary
    if s.get("skipped"):
        return f"**C11 not run here:** {str(s['skipped']).removeprefix('not run here: ')}."
    table = result.tables["runs"]

    parts = []
    for variant, rows in table.groupby("variant", sort=False):
        r = rows.median(numeric_only=True)
        n = len(rows)

        def median(column: str, v: str = str(variant)) -> str:
            if v not in VARIANTS:
                return "n/a"
            return findings.span(findings.of_results(million_name(v, column), [result]))

        def judged(column: str, unit: str, bold: bool = False) -> str:
            words = C11_READINGS[column]
            got = claims.measure("C11", words, machine_id, data_dir, [result])
            if getattr(got, "value", None) is None:
                return median(column)
            text = reading_text(got, unit, claims.reading_name("C11", words), interval="")
            return f"**{text}**" if bold else text

        head = ("S1's program" if variant == "as_published" else
                "Held until all existed, then asleep together")
        count = findings.parameter("tasks_c11_count", f"{int(r['count']):,} goroutines")
        sleep = findings.parameter("sleep_ms", f"{result.params['sleep_ms']:,} ms")
        if variant == "as_published" and n > 1:
            text = (f"{head} ({n} runs, each a fresh process; means over the runs with "
                    f"their 95% intervals, as C11 judges them): {count} each sleeping "
                    f"{sleep} took {judged('wall_s', 's', bold=True)} wall, "
                    f"{judged('user_s', 's')} user, {judged('sys_s', 's')} system, and a max "
                    f"RSS of {judged('max_rss_kib_per_goroutine', 'KiB', bold=True)} per "
                    f"goroutine (the runs' max RSS are in the table); starting them took "
                    f"{median('spawn_s')} (median of the runs)")
            asleep = f"only {int(r['alive_at_spawn_end']):,} (median of the runs)"
        else:
            runs = f" (median of {n} runs)" if n > 1 else ""
            text = (f"{head}{runs}: {count} each sleeping {sleep} took **{median('wall_s')}** "
                    f"wall, {median('user_s')} user, {median('sys_s')} system, max RSS "
                    f"**{median('max_rss_kib')}** ({median('max_rss_kib_per_goroutine')} per "
                    f"goroutine); starting them took {median('spawn_s')}")
            asleep = f"only {int(r['alive_at_spawn_end']):,}"
        if r["alive_at_spawn_end"] < r["count"]:
            text += (f", and {asleep} were still asleep when the last one started, so its "
                     "max RSS is that of fewer goroutines at once")
        parts.append(text + ".")
    return " ".join(parts)


def goroutines_table(result: Result) -> pd.DataFrame:
    t = result.tables["runs"].drop(columns=["gomaxprocs", "finished"])
    # S1's runs first, in order, then the held variant; RSS in MiB as the prose prints it
    t = t.sort_values("variant", key=lambda v: v != "as_published", kind="stable")
    t["max_rss_kib"] = t["max_rss_kib"] / 1024
    t["variant"] = t["variant"].map({"as_published": "S1's program",
                                     "all_at_once": "all asleep at once"})
    if "repeat" in t:  # runs before repeats existed have one row per variant
        t["variant"] = [f"{v}, run {r + 1}" if (t["variant"] == v).sum() > 1 else v
                        for v, r in zip(t["variant"], t.pop("repeat"), strict=True)]
    return t.rename(columns={
        "variant": "run", "count": "goroutines",
        "alive_at_spawn_end": "asleep when the last started",
        "spawn_s": "start all (s)", "wall_s": "wall (s)", "user_s": "user (s)",
        "sys_s": "system (s)", "max_rss_kib": "max RSS (MiB)",
        "max_rss_kib_per_goroutine": "max RSS per goroutine (KiB)"}).set_index("run")


def threads_text(result: Result) -> str:
    """The largest count measured, each number a named finding of this run (the base that
    ``c10_million_threads_*`` scale)."""
    p = result.params

    def f(key: str) -> str:
        unit = CEILING[key][1].lower()
        name = f"threads_ceiling_{key.replace('_kib_per_thread', '')}_recorded_{unit}"
        return findings.span(findings.of_results(name, [result]))

    count = findings.parameter("count", f"{p['count']:,} threads")
    stack = findings.parameter("stack_kib", f"{p['stack_kib']:,} KiB")
    sleep = findings.parameter("sleep_ms", f"{p['sleep_ms']:,} ms")
    return (f"The largest count tried here was **{count}** "
            f"(set by {vocabulary.bound_words(str(result.summary['count_bound']))}), each with a "
            f"{stack} stack, "
            f"sleeping {sleep}: {f('wall_s')} wall (starting them: {f('spawn_s')}), "
            f"{f('user_s')} user, {f('sys_s')} system; resident growth "
            f"{f('rss_kib_per_thread')} and virtual growth "
            f"{f('vsz_kib_per_thread')} per thread. The one-million figures below "
            "are **computed** from these by scaling, not measured.")


# quantity stored -> (its name in words, display unit, factor from the stored unit,
# format): the formats of the c10_million_threads_* findings, so notebook 3's table of
# the same numbers prints the same values
_SCALED = {
    "rss_kib": ("resident memory (RSS growth)", "MiB", 1 / 1024, ",.0f"),
    "vsz_kib": ("virtual size (VSZ growth)", "GiB", 1 / 1024 ** 2, ",.0f"),
    "user_s": ("user CPU time", "s", 1.0, ",.1f"),
    "sys_s": ("system CPU time", "s", 1.0, ",.1f"),
}


def scaled_table(result: Result) -> pd.DataFrame:
    """The run's numbers scaled to one million threads, in words and display units
    (computed, not measured: the "how" column says from how many threads)."""
    rows = []
    for _, r in result.tables["scaled"].iterrows():
        name, unit, factor, fmt = _SCALED.get(
            str(r["quantity"]), (str(r["quantity"]), str(r["unit"]), 1.0, ",.3g"))
        rows.append({"quantity": name,
                     "value for 1,000,000 threads": findings.number(
                         float(r["value"]) * factor, fmt),
                     "unit": unit, "how": r["label"]})
    return pd.DataFrame(rows).set_index("quantity")
