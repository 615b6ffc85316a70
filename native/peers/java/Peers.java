// threadcost's Java peer: platform threads and virtual threads (JDK 21+).
// One named workload per run (-runtime platform|virtual), one JSON object on
// stdout, errors on stderr with exit status 2. Flags and fields follow the Go peer's.

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

public final class Peers {
    private Peers() {}

    static void fail(String msg) {
        System.err.println("tcpeers-java: " + msg);
        System.exit(2);
    }

    static Map<String, String> flags(String[] args) {
        Map<String, String> out = new HashMap<>();
        for (int i = 1; i < args.length; i++) {
            String name = args[i].replaceFirst("^-+", "");
            if (name.equals("gate")) {
                out.put(name, "1");
            } else if (i + 1 < args.length) {
                out.put(name, args[++i]);
            } else {
                fail("flag -" + name + " needs a value");
            }
        }
        return out;
    }

    static long num(Map<String, String> f, String name, long dflt, long min) {
        long v = dflt;
        if (f.containsKey(name)) {
            try {
                v = Long.parseLong(f.get(name));
            } catch (NumberFormatException e) {
                fail("-" + name + " " + f.get(name) + ": not an integer");
            }
        }
        if (v < min) {
            fail("-" + name + " " + v + ": must be at least " + min);
        }
        return v;
    }

    static Map<String, Long> status() {
        Map<String, Long> out = new HashMap<>();
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                String[] kv = line.split(":", 2);
                if (kv.length == 2 && List.of("VmSize", "VmRSS", "RssAnon", "VmHWM", "Threads", "VmPTE").contains(kv[0])) {
                    out.put(kv[0], Long.parseLong(kv[1].trim().split("\\s+")[0]));
                }
            }
        } catch (Exception e) {
            // readings stay absent (0)
        }
        return out;
    }

    static long st(Map<String, Long> s, String k) {
        return s.getOrDefault(k, 0L);
    }

    /** User and system CPU time of this process (µs), from /proc/self/stat (100 Hz ticks). */
    static long[] cpuUs() {
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return new long[] {Long.parseLong(f[11]) * 10_000, Long.parseLong(f[12]) * 10_000};
        } catch (Exception e) {
            return new long[] {-1, -1};
        }
    }

    static Thread start(boolean virtual, Runnable r) {
        return virtual ? Thread.ofVirtual().start(r) : Thread.ofPlatform().start(r);
    }

    static String json(String program, String runtime, Object... kv) {
        StringBuilder b = new StringBuilder("{\"program\":\"" + program + "\",\"language\":\"java\",\"runtime\":\""
                + runtime + "\",\"version\":\"" + Runtime.version() + "\"");
        for (int i = 0; i < kv.length; i += 2) {
            b.append(",\"").append(kv[i]).append("\":");
            Object v = kv[i + 1];
            if (v instanceof long[] arr) {
                b.append('[');
                for (int j = 0; j < arr.length; j++) {
                    b.append(j > 0 ? "," : "").append(arr[j]);
                }
                b.append(']');
            } else {
                b.append(v);
            }
        }
        return b.append('}').toString();
    }

    static long staggerUs(long index, long staggerMs) {
        return staggerMs <= 0 ? 0 : ((index * 2_654_435_761L) & 0xffff_ffffL) % (staggerMs * 1000);
    }

    static void sleep(long us) {
        try {
            Thread.sleep(us / 1000, (int) (us % 1000) * 1000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void await(CountDownLatch gate) {
        try {
            gate.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    static void joinAll(List<Thread> ts) throws InterruptedException {
        for (Thread t : ts) {
            t.join();
        }
    }

    static String sleepers(Map<String, String> f, boolean virtual, String rt) throws Exception {
        long count = num(f, "count", 10_000, 1);
        long periodMs = num(f, "period-ms", 10, 1);
        long durationMs = num(f, "duration-ms", 2000, periodMs);
        long staggerMs = num(f, "stagger-ms", 200, 0);
        long each = durationMs / periodMs;
        Map<String, Long> before = status();
        CountDownLatch gate = new CountDownLatch(1);
        AtomicLong wakeups = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        long t0 = System.nanoTime();
        for (long i = 0; i < count; i++) {
            final long index = i;
            ts.add(start(virtual, () -> {
                await(gate);
                sleep(staggerUs(index, staggerMs));
                for (long j = 0; j < each; j++) {
                    sleep(periodMs * 1000);
                }
                wakeups.addAndGet(each);
            }));
        }
        long spawn = System.nanoTime() - t0;
        long peakPte = st(status(), "VmPTE"); // page tables: once every thread exists, then each period
        long[] c0 = cpuUs();
        long start = System.nanoTime();
        gate.countDown();
        long peakRss = 0, peakVsz = 0, peakThreads = 0;
        while (ts.stream().anyMatch(Thread::isAlive)) {
            Map<String, Long> s = status();
            peakRss = Math.max(peakRss, st(s, "VmRSS"));
            peakVsz = Math.max(peakVsz, st(s, "VmSize"));
            peakThreads = Math.max(peakThreads, st(s, "Threads"));
            peakPte = Math.max(peakPte, st(s, "VmPTE"));
            Thread.sleep(periodMs);
        }
        joinAll(ts);
        long wall = System.nanoTime() - start;
        long[] c1 = cpuUs();
        Map<String, Long> end = status();
        return json("sleepers", rt, "count", count, "started", count, "spawn_errno", 0,
                "period_ms", periodMs, "duration_ms", durationMs, "stagger_ms", staggerMs,
                "wakeups", wakeups.get(), "wall_ns", wall, "spawn_ns", spawn,
                "user_us", c1[0] - c0[0], "sys_us", c1[1] - c0[1],
                "rss_before_kib", st(before, "VmRSS"), "vsz_before_kib", st(before, "VmSize"),
                "peak_rss_kib", peakRss, "peak_vsz_kib", peakVsz, "peak_threads", peakThreads,
                "hwm_kib", st(end, "VmHWM"), "page_tables_before_kib", st(before, "VmPTE"),
                "peak_page_tables_kib", peakPte);
    }

    static String million(Map<String, String> f, boolean virtual, String rt) throws Exception {
        long count = num(f, "count", 1_000_000, 1);
        long sleepMs = num(f, "sleep-ms", 1000, 0);
        CountDownLatch gate = new CountDownLatch(f.containsKey("gate") ? 1 : 0);
        AtomicLong done = new AtomicLong();
        List<Thread> ts = new ArrayList<>();
        long t0 = System.nanoTime();
        String error = "null";
        try {
            for (long i = 0; i < count; i++) {
                ts.add(start(virtual, () -> {
                    await(gate);
                    sleep(sleepMs * 1000);
                    done.incrementAndGet();
                }));
            }
        } catch (OutOfMemoryError e) { // "unable to create native thread"
            error = "\"thread creation refused\"";
        }
        long spawn = System.nanoTime() - t0;
        long alive = ts.size() - done.get();
        Map<String, Long> peak = status();
        gate.countDown();
        joinAll(ts);
        return json("million", rt, "count", count, "started", (long) ts.size(), "spawn_error", error,
                "finished", done.get(), "spawn_ns", spawn, "alive_at_spawn_end", alive,
                "rss_at_spawn_end_kib", st(peak, "VmRSS"), "hwm_kib", st(status(), "VmHWM"));
    }

    static String launch(Map<String, String> f, boolean virtual, String rt) throws Exception {
        int iterations = (int) num(f, "iterations", 10_000, 1);
        int warmup = (int) num(f, "warmup", 1000, 0);
        AtomicLong ran = new AtomicLong();
        Runnable body = ran::incrementAndGet;
        for (int i = 0; i < warmup; i++) {
            start(virtual, body).join();
        }
        long[] samples = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            long t0 = System.nanoTime();
            start(virtual, body).join();
            samples[i] = System.nanoTime() - t0;
        }
        long t0 = System.nanoTime();
        for (int i = 0; i < iterations; i++) {
            start(virtual, body).join();
        }
        long batch = System.nanoTime() - t0;
        return json("launch", rt, "iterations", iterations, "warmup", warmup, "launched", ran.get(),
                "timer_overhead_ns", 0, "batch_ns", batch, "samples_ns", samples);
    }

    static String memory(Map<String, String> f, boolean virtual, String rt) throws Exception {
        long count = num(f, "count", 10_000, 1);
        long points = num(f, "points", 11, 2);
        CountDownLatch gate = new CountDownLatch(1);
        List<Thread> ts = new ArrayList<>();
        StringBuilder out = new StringBuilder("[");
        for (long i = 0; i < points; i++) {
            long target = count * i / (points - 1);
            CountDownLatch ready = new CountDownLatch((int) (target - ts.size()));
            while (ts.size() < target) {
                ts.add(start(virtual, () -> {
                    ready.countDown();
                    await(gate);
                }));
            }
            ready.await();
            Thread.sleep(5); // let the last ones park
            System.gc();
            Map<String, Long> s = status();
            out.append(i > 0 ? "," : "").append("{\"tasks\":").append(target)
                    .append(",\"vsz_kib\":").append(st(s, "VmSize"))
                    .append(",\"rss_kib\":").append(st(s, "VmRSS"))
                    .append(",\"rss_anon_kib\":").append(st(s, "RssAnon"))
                    .append(",\"threads\":").append(st(s, "Threads")).append('}');
        }
        gate.countDown();
        joinAll(ts);
        return json("memory", rt, "count", count, "points", out.append(']'));
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            fail("usage: Peers sleepers|million|launch|memory -runtime platform|virtual [flags]");
        }
        Map<String, String> f = flags(args);
        String rt = f.getOrDefault("runtime", "platform");
        if (!rt.equals("platform") && !rt.equals("virtual")) {
            fail("-runtime " + rt + ": one of platform, virtual");
        }
        boolean virtual = rt.equals("virtual");
        String out = switch (args[0]) {
            case "sleepers" -> sleepers(f, virtual, rt);
            case "million" -> million(f, virtual, rt);
            case "launch" -> launch(f, virtual, rt);
            case "memory" -> memory(f, virtual, rt);
            default -> {
                fail("unknown program " + args[0] + " (sleepers, million, launch, memory)");
                yield "";
            }
        };
        System.out.println(out);
    }
}
