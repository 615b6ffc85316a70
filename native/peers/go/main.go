// Command tcpeers measures goroutines for threadcost's notebook 05: a channel
// ping-pong (switch time), idle goroutines (memory per goroutine) and many
// sleeping goroutines (memory and CPU time of the lot). It prints one JSON
// object on stdout; errors go to stderr with exit status 2.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const pinnedEnv = "TCPEERS_PINNED"

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "tcpeers: "+format+"\n", args...)
	os.Exit(2)
}

func emit(v any) {
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(v); err != nil {
		fail("cannot write JSON: %v", err)
	}
}

// procStatus reads the kB fields of /proc/self/status this program reports.
func procStatus() map[string]int64 {
	out := map[string]int64{}
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch name {
		case "VmSize", "VmRSS", "RssAnon", "VmHWM", "Threads", "VmPTE":
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				if v, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
					out[name] = v
				}
			}
		}
	}
	return out
}

// affinity lists the CPUs the calling thread may run on.
func affinity() []int {
	var mask [128]byte
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETAFFINITY, 0,
		uintptr(len(mask)), uintptr(unsafe.Pointer(&mask[0])))
	if errno != 0 {
		return nil
	}
	var cpus []int
	for i := 0; i < len(mask)*8; i++ {
		if mask[i/8]&(1<<(i%8)) != 0 {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// pinProcess pins the process to one CPU before anything else runs: it sets
// the calling thread's affinity and re-executes the program, so the new
// process and every runtime thread it starts inherit the mask.
func pinProcess(cpu int) {
	if cpu < 0 || os.Getenv(pinnedEnv) == "1" {
		return
	}
	if cpu >= 1024 {
		fail("cpu %d: must be below 1024", cpu)
	}
	runtime.LockOSThread()
	var mask [128]byte
	mask[cpu/8] |= 1 << (cpu % 8)
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY, 0,
		uintptr(len(mask)), uintptr(unsafe.Pointer(&mask[0])))
	if errno != 0 {
		fail("cannot pin to CPU %d: %v", cpu, errno)
	}
	exe, err := os.Executable()
	if err != nil {
		fail("cannot find own executable: %v", err)
	}
	env := append(os.Environ(), pinnedEnv+"=1")
	err = syscall.Exec(exe, os.Args, env)
	fail("cannot re-execute pinned: %v", err)
}

func rusageUs() (user, sys, maxrss int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1, -1, -1
	}
	return ru.Utime.Sec*1_000_000 + ru.Utime.Usec, ru.Stime.Sec*1_000_000 + ru.Stime.Usec,
		ru.Maxrss
}

// timerOverheadNs is the median cost of one time.Now() (monotonic reading).
func timerOverheadNs() int64 {
	const n = 10001
	d := make([]int64, n)
	for i := range d {
		a := time.Now()
		b := time.Now()
		d[i] = int64(b.Sub(a))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[n/2]
}

func pingpong(args []string) {
	fs := flag.NewFlagSet("pingpong", flag.ExitOnError)
	iterations := fs.Int("iterations", 100000, "timed round trips")
	warmup := fs.Int("warmup", 10000, "untimed round trips first")
	gomaxprocs := fs.Int("gomaxprocs", 0, "GOMAXPROCS (0: the runtime default)")
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: no pinning)")
	_ = fs.Parse(args)
	if *iterations < 1 || *warmup < 0 || *gomaxprocs < 0 {
		fail("pingpong: iterations >= 1, warmup >= 0, gomaxprocs >= 0 required")
	}
	pinProcess(*cpu)
	if *gomaxprocs > 0 {
		runtime.GOMAXPROCS(*gomaxprocs)
	}
	timer := timerOverheadNs()

	ping := make(chan int)
	pong := make(chan int)
	go func() {
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()
	for i := 0; i < *warmup; i++ {
		ping <- i
		<-pong
	}
	samples := make([]int64, *iterations)
	prev := time.Now()
	for i := range samples {
		ping <- i
		<-pong
		now := time.Now()
		samples[i] = int64(now.Sub(prev))
		prev = now
	}
	start := time.Now()
	for i := 0; i < *iterations; i++ {
		ping <- i
		<-pong
	}
	batch := int64(time.Since(start))
	close(ping)
	<-pong
	emit(map[string]any{
		"program":           "pingpong",
		"go_version":        runtime.Version(),
		"gomaxprocs":        runtime.GOMAXPROCS(0),
		"num_cpu":           runtime.NumCPU(),
		"affinity":          affinity(),
		"pinned_cpu":        *cpu,
		"iterations":        *iterations,
		"warmup":            *warmup,
		"timer_overhead_ns": timer,
		"batch_ns":          batch,
		"samples_ns":        samples,
	})
}

func memory(args []string) {
	fs := flag.NewFlagSet("memory", flag.ExitOnError)
	count := fs.Int("count", 10000, "idle goroutines to start")
	points := fs.Int("points", 11, "readings of /proc/self/status (0 and count included)")
	_ = fs.Parse(args)
	if *count < 1 || *points < 2 {
		fail("memory: count >= 1 and points >= 2 required")
	}
	block := make(chan struct{})
	var done sync.WaitGroup
	type point struct {
		Goroutines   int   `json:"goroutines"`
		VszKib       int64 `json:"vsz_kib"`
		RssKib       int64 `json:"rss_kib"`
		RssAnonKib   int64 `json:"rss_anon_kib"`
		StackInuseKB int64 `json:"stack_inuse_kib"`
		Threads      int64 `json:"threads"`
	}
	read := func(n int) point {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := procStatus()
		return point{n, s["VmSize"], s["VmRSS"], s["RssAnon"], int64(ms.StackInuse / 1024), s["Threads"]}
	}
	runtime.GC()
	out := []point{read(0)}
	made := 0
	for i := 1; i < *points; i++ {
		target := *count * i / (*points - 1)
		var ready sync.WaitGroup
		for ; made < target; made++ {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				ready.Done()
				<-block
			}()
		}
		ready.Wait()
		out = append(out, read(made))
	}
	close(block)
	done.Wait()
	emit(map[string]any{
		"program":    "memory",
		"go_version": runtime.Version(),
		"gomaxprocs": runtime.GOMAXPROCS(0),
		"count":      *count,
		"points":     out,
	})
}

func sleepers(args []string) {
	fs := flag.NewFlagSet("sleepers", flag.ExitOnError)
	count := fs.Int("count", 10000, "sleeping goroutines")
	periodMs := fs.Int("period-ms", 10, "each sleep (ms)")
	durationMs := fs.Int("duration-ms", 2000, "total sleep of each goroutine (ms)")
	staggerMs := fs.Int("stagger-ms", 200, "pseudo-random start delay below this (ms)")
	_ = fs.Parse(args)
	if *count < 1 || *periodMs < 1 || *durationMs < *periodMs || *staggerMs < 0 {
		fail("sleepers: count >= 1, period-ms >= 1, duration-ms >= period-ms, stagger-ms >= 0")
	}
	period := time.Duration(*periodMs) * time.Millisecond
	each := *durationMs / *periodMs
	before := procStatus()
	spawnStart := time.Now()
	var wakeups atomic.Int64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := 0; i < *count; i++ {
		wg.Add(1)
		go func(index uint32) {
			defer wg.Done()
			<-gate // timing starts once every goroutine exists
			if *staggerMs > 0 {
				h := uint64(index*2654435761) % uint64(*staggerMs*1000)
				time.Sleep(time.Duration(h) * time.Microsecond)
			}
			for j := 0; j < each; j++ {
				time.Sleep(period)
			}
			wakeups.Add(int64(each))
		}(uint32(i))
	}
	spawn := time.Since(spawnStart)
	// page tables (VmPTE): the largest reading, once every goroutine exists, then
	// every period with the resident set
	peakPte := procStatus()["VmPTE"]
	u0, s0, _ := rusageUs()
	start := time.Now()
	close(gate)
	var peakRss, peakVsz, peakThreads int64
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	tick := time.NewTicker(period)
loop:
	for {
		s := procStatus()
		peakRss = max(peakRss, s["VmRSS"])
		peakVsz = max(peakVsz, s["VmSize"])
		peakThreads = max(peakThreads, s["Threads"])
		peakPte = max(peakPte, s["VmPTE"])
		select {
		case <-finished:
			break loop
		case <-tick.C:
		}
	}
	tick.Stop()
	wall := time.Since(start)
	u1, s1, maxrss := rusageUs()
	end := procStatus()
	emit(map[string]any{
		"program":                "sleepers",
		"go_version":             runtime.Version(),
		"gomaxprocs":             runtime.GOMAXPROCS(0),
		"count":                  *count,
		"period_ms":              *periodMs,
		"duration_ms":            *durationMs,
		"stagger_ms":             *staggerMs,
		"wakeups":                wakeups.Load(),
		"wall_ns":                int64(wall),
		"spawn_ns":               int64(spawn),
		"user_us":                u1 - u0,
		"sys_us":                 s1 - s0,
		"rss_before_kib":         before["VmRSS"],
		"vsz_before_kib":         before["VmSize"],
		"peak_rss_kib":           peakRss,
		"peak_vsz_kib":           peakVsz,
		"peak_threads":           peakThreads,
		"hwm_kib":                end["VmHWM"],
		"ru_maxrss_kib":          maxrss,
		"page_tables_before_kib": before["VmPTE"],
		"peak_page_tables_kib":   peakPte,
	})
}

// launch times a goroutine's whole life: go statement, first run, wg.Done, and
// the Wait that sees it, one goroutine at a time, per sample and as a batch.
func launch(args []string) {
	fs := flag.NewFlagSet("launch", flag.ExitOnError)
	iterations := fs.Int("iterations", 10000, "timed launches")
	warmup := fs.Int("warmup", 1000, "untimed launches first")
	gomaxprocs := fs.Int("gomaxprocs", 0, "GOMAXPROCS (0: the runtime default)")
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: no pinning)")
	_ = fs.Parse(args)
	if *iterations < 1 || *warmup < 0 || *gomaxprocs < 0 {
		fail("launch: iterations >= 1, warmup >= 0, gomaxprocs >= 0 required")
	}
	pinProcess(*cpu)
	if *gomaxprocs > 0 {
		runtime.GOMAXPROCS(*gomaxprocs)
	}
	timer := timerOverheadNs()
	var wg sync.WaitGroup
	var ran atomic.Int64
	one := func() {
		wg.Add(1)
		go func() {
			ran.Add(1)
			wg.Done()
		}()
		wg.Wait()
	}
	for i := 0; i < *warmup; i++ {
		one()
	}
	samples := make([]int64, *iterations)
	for i := range samples {
		t0 := time.Now()
		one()
		samples[i] = int64(time.Since(t0))
	}
	start := time.Now()
	for i := 0; i < *iterations; i++ {
		one()
	}
	batch := int64(time.Since(start))
	emit(map[string]any{
		"program":           "launch",
		"go_version":        runtime.Version(),
		"gomaxprocs":        runtime.GOMAXPROCS(0),
		"affinity":          affinity(),
		"pinned_cpu":        *cpu,
		"iterations":        *iterations,
		"warmup":            *warmup,
		"launched":          ran.Load(),
		"timer_overhead_ns": timer,
		"batch_ns":          batch,
		"samples_ns":        samples,
	})
}

// million is S1's goroutine program (claim C11): start count goroutines that
// each sleep, and wait for them all. It is timed from outside, like
// /usr/bin/time (wait4's rusage), so it prints only how many ran.
func million(args []string) {
	fs := flag.NewFlagSet("million", flag.ExitOnError)
	count := fs.Int("count", 1000000, "goroutines")
	sleepMs := fs.Int("sleep-ms", 1000, "how long each sleeps (ms)")
	gated := fs.Bool("gate", false, "each waits until all exist, then sleeps (all asleep at once)")
	_ = fs.Parse(args)
	if *count < 1 || *sleepMs < 0 {
		fail("million: count >= 1, sleep-ms >= 0 required")
	}
	var wg sync.WaitGroup
	var done atomic.Int64
	d := time.Duration(*sleepMs) * time.Millisecond
	gate := make(chan struct{})
	if !*gated {
		close(gate)
	}
	start := time.Now()
	for i := 0; i < *count; i++ {
		wg.Add(1)
		go func() {
			<-gate
			time.Sleep(d)
			done.Add(1)
			wg.Done()
		}()
	}
	spawn := time.Since(start)
	// how many were still asleep when the last one started: all of them
	// coexist only if starting them took less than one sleep
	aliveAtSpawnEnd := int64(*count) - done.Load()
	if *gated {
		close(gate)
	}
	wg.Wait()
	emit(map[string]any{
		"program":            "million",
		"go_version":         runtime.Version(),
		"gomaxprocs":         runtime.GOMAXPROCS(0),
		"count":              *count,
		"finished":           done.Load(),
		"spawn_ns":           int64(spawn),
		"alive_at_spawn_end": aliveAtSpawnEnd,
		"hwm_kib":            procStatus()["VmHWM"],
	})
}

func main() {
	if len(os.Args) < 2 {
		fail("usage: tcpeers pingpong|memory|sleepers|launch|million [flags]")
	}
	switch os.Args[1] {
	case "pingpong":
		pingpong(os.Args[2:])
	case "memory":
		memory(os.Args[2:])
	case "sleepers":
		sleepers(os.Args[2:])
	case "brigade":
		brigade(os.Args[2:])
	case "launch":
		launch(os.Args[2:])
	case "million":
		million(os.Args[2:])
	case "lockosthread":
		lockosthread(os.Args[2:])
	case "readiness":
		readiness(os.Args[2:])
	default:
		fail("unknown program %q (pingpong, memory, sleepers, brigade, launch, million)", os.Args[1])
	}
}
