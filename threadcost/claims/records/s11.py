"""S11, golang/go issue 18023: a channel benchmark at 500 ns/op, 7,887 ns/op when
the goroutines are locked to OS threads (``-test.cpu=1``: GOMAXPROCS=1), and, in the
thread, "approximately 1000X more thread context switches with LockOSThread" (rsc,
citing a golang-nuts thread). The numbers were checked against the issue's text;
the benchmark's code (play.golang.org/p/nI4LO1wu17) could not be read here, so the
channel round trip measured here (``go_lockosthread``) is this project's reading of
"the channel communication" the issue describes. A Go benchmark's ns/op is a mean
(the loop's time over its iterations), and so is every time read here."""

from __future__ import annotations

from threadcost.claims import properties, whys
from threadcost.claims.model import Claim, Published, Quote, Reading
from threadcost.claims.records._help import of_source
from threadcost.findings import more_sources as sel

PUBLISHED_RATIO = 7887 / 500

SOURCE_DOC = ("golang/go issue 18023: runtime: unexpectedly large slowdown with "
                      "runtime.LockOSThread")

claim = of_source("S11", SOURCE_DOC, "amd64, Go tip of November 2016")

# the source's sentences, each reading's among them
C34_QUOTES = (Quote(("BenchmarkUnlocked 3000000 500 ns/op ... BenchmarkLocked 200000 7887 "
                         "ns/op"),
                       "https://github.com/golang/go/issues/18023"),
                  Quote(("The golang-nuts thread about this says that using 'perf stat' shows "
                         "approximately 1000X more thread context switches with LockOSThread "
                         "than without."),
                       "https://github.com/golang/go/issues/18023 (comment by rsc, 2016-11-22)"),)

CLAIMS: tuple[Claim, ...] = (
    claim("C34",
          words=("A channel benchmark runs at 500 ns/op unlocked and 7887 ns/op with "
                 "runtime.LockOSThread (-test.cpu=1); in the thread, perf stat showed "
                 "approximately 1000X more thread context switches with LockOSThread."),
          quotes=C34_QUOTES,
          published=(Published("unlocked_ns_per_op", 500, "ns", "BenchmarkUnlocked (GOMAXPROCS 1)"),
                     Published("locked_ns_per_op", 7887, "ns", "BenchmarkLocked (GOMAXPROCS 1)"),
                     Published("locked_over_unlocked_ratio", 15.8, "ratio", "derived: 7887 / 500"),
                     Published("switch_count_ratio", 1000, "ratio",
                               ("approximately 1000X more thread context switches (perf stat, "
                                "golang-nuts thread, as reported in the issue)")),),
          pages=("08_more_sources",), experiments=("go_lockosthread",),
          flips_on=properties.TOOLCHAINS,
          as_published=(
        Reading("LockOSThread makes the channel ping-pong about 16 times slower (7,887 ns/op "
                "against 500 ns/op)", "ratio", PUBLISHED_RATIO * 0.8,
                PUBLISHED_RATIO * 1.2, sel.s11_time_ratio, timing=True,
                published=PUBLISHED_RATIO, tolerance_words="about 15.8 (+/- 20%)",
                # the slowdown split by the switches counted, and the pipe hand-off
                # yardsticks: the reading's own kind (a hand-off's time), context only
                why=(whys.computed(whys.s11_why, whys.PER_ADDED_SWITCH, explains=False),),
                quote=C34_QUOTES[0].text),
        # one measurement, one verdict: the slowdown ratio above is not judged again
        # against a looser "much slower" bound of the project's own
        Reading("Approximately 1000 times more thread context switches with LockOSThread "
                "(kernel counters, locked / unlocked)", "ratio", 800, 1200,
                sel.s11_switch_ratio, published=1000.0,
                tolerance_words="about 1000 (+/- 20%)", quote=C34_QUOTES[1].text),
    )),
)
