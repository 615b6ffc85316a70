// readiness: tokens in flight (threadcost notebook 09). K tokens circulate among N
// goroutines joined in a ring of N channels (Unix socket pairs or pipes, registered
// with the Go runtime's poller): goroutine i reads one 8-byte token from channel i,
// counts its hops down and, unless that was its last hop, writes it on channel i+1.
// One event = one token handled. For each entry of the sweep the driver puts K tokens
// in (spread over the ring) and times them until the last is retired; getrusage
// counts the process's context switches over the same window. Prints one JSON object.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

const rdStop = 0xFFFFFFFF

type rdCounters struct {
	events, retired, reads, writes atomic.Int64
	_                              [32]byte
}

type rdRing struct {
	n        int
	readers  []*os.File
	writers  []*os.File
	c        []rdCounters
	retired  atomic.Int64
	target   atomic.Int64
	done     chan struct{}
	failures atomic.Int64
}

func rdList(s string) []int64 {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
		if err != nil || v < 1 {
			fail("readiness: %q is not a list of positive integers", s)
		}
		out = append(out, v)
	}
	return out
}

func rdChannel(kind string) (*os.File, *os.File, error) {
	if kind == "pipe" {
		return os.Pipe()
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX,
		syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, nil, os.NewSyscallError("socketpair", err)
	}
	// non-blocking fds: os.NewFile registers them with the runtime's poller
	return os.NewFile(uintptr(fds[1]), "r"), os.NewFile(uintptr(fds[0]), "w"), nil
}

func (r *rdRing) task(i int) {
	var buf [8]byte
	c := &r.c[i]
	next := r.writers[(i+1)%r.n]
	for {
		if _, err := readFull(r.readers[i], buf[:]); err != nil {
			r.failures.Add(1)
			return
		}
		c.reads.Add(1)
		left := binary.LittleEndian.Uint32(buf[0:4])
		if left == rdStop || left == 0 {
			return
		}
		c.events.Add(1)
		if left == 1 {
			c.retired.Add(1)
			if r.retired.Add(1) == r.target.Load() {
				r.done <- struct{}{}
			}
			continue
		}
		binary.LittleEndian.PutUint32(buf[0:4], left-1)
		c.writes.Add(1)
		if _, err := next.Write(buf[:]); err != nil {
			r.failures.Add(1)
			return
		}
	}
}

func readFull(f *os.File, buf []byte) (int, error) {
	got := 0
	for got < len(buf) {
		m, err := f.Read(buf[got:])
		got += m
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

func rdUsage() (int64, int64, int64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, 0
	}
	cpu := (ru.Utime.Sec+ru.Stime.Sec)*1e9 + (ru.Utime.Usec+ru.Stime.Usec)*1e3
	return int64(ru.Nvcsw), int64(ru.Nivcsw), int64(cpu)
}

func (r *rdRing) sums() (events, retired, reads, writes int64) {
	for i := range r.c {
		events += r.c[i].events.Load()
		retired += r.c[i].retired.Load()
		reads += r.c[i].reads.Load()
		writes += r.c[i].writes.Load()
	}
	return
}

// entry: K tokens of `hops` hops put in, timed until the last is retired.
func (r *rdRing) entry(k, hops int64, timeout time.Duration) (map[string]any, bool) {
	r.retired.Store(0)
	r.target.Store(k)
	e0, t0r, rd0, w0 := r.sums()
	v0, i0, c0 := rdUsage()
	start := time.Now()
	var buf [8]byte
	binary.LittleEndian.PutUint32(buf[0:4], uint32(hops))
	for j := int64(0); j < k; j++ {
		if _, err := r.writers[int(j*int64(r.n)/k)].Write(buf[:]); err != nil {
			return nil, false
		}
	}
	ok := true
	select {
	case <-r.done:
	case <-time.After(timeout):
		ok = false
	}
	wall := time.Since(start).Nanoseconds()
	v1, i1, c1 := rdUsage()
	e1, t1r, rd1, w1 := r.sums()
	return map[string]any{
		"tokens": k, "hops": hops, "events": e1 - e0, "retired": t1r - t0r,
		"wall_ns": wall, "cpu_ns": c1 - c0, "reads": rd1 - rd0, "empty_reads": 0,
		"writes": w1 - w0 + k, "waits": 0, "wait_events": 0,
		"voluntary": v1 - v0, "involuntary": i1 - i0,
	}, ok
}

func readiness(args []string) {
	fs := flag.NewFlagSet("readiness", flag.ExitOnError)
	tasks := fs.Int("tasks", 100, "goroutines N in the ring")
	tokens := fs.String("tokens", "1", "tokens in flight K of each entry, a comma list")
	hops := fs.String("hops", "8", "hops of every token of each entry, a comma list")
	channel := fs.String("channel", "socketpair", "socketpair or pipe")
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: no pinning)")
	timeoutMs := fs.Int("timeout-ms", 10000, "an entry not done in this long ends the run")
	maxFds := fs.Int("max-fds", 0, "cap RLIMIT_NOFILE (soft and hard) at this many fds first")
	_ = fs.Parse(args)
	ks, hs := rdList(*tokens), rdList(*hops)
	if *tasks < 2 || len(ks) != len(hs) || *timeoutMs < 1 {
		fail("readiness: tasks >= 2, as many hops as tokens, timeout-ms >= 1 required")
	}
	pinProcess(*cpu)
	if *maxFds > 0 {
		lim := uint64(*maxFds)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
			fail("readiness: cannot cap RLIMIT_NOFILE at %d: %v", lim, err)
		}
	}
	out := map[string]any{"program": "readiness", "go_version": runtime.Version(),
		"gomaxprocs": runtime.GOMAXPROCS(0), "limit": nil, "errno": 0, "timed_out": false}
	var nofile syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		out["nofile_hard"] = nofile.Max
	}
	r := &rdRing{n: *tasks, done: make(chan struct{}, 1)}
	for i := 0; i < *tasks; i++ {
		rf, wf, err := rdChannel(*channel)
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				out["errno"] = int(errno)
				if errno == syscall.EMFILE || errno == syscall.ENFILE {
					out["limit"] = "fds"
				} else if errno == syscall.ENOMEM {
					out["limit"] = "memory"
				}
			}
			if out["limit"] == nil {
				fail("readiness: channel %d: %v", i, err)
			}
			for len(r.readers) > 1 && len(r.readers) > i-8 { // fds back for the runtime
				last := len(r.readers) - 1
				r.readers[last].Close()
				r.writers[last].Close()
				r.readers, r.writers = r.readers[:last], r.writers[:last]
			}
			break
		}
		r.readers = append(r.readers, rf)
		r.writers = append(r.writers, wf)
	}
	r.n = len(r.readers)
	out["tasks_ready"] = r.n
	if r.n < 2 {
		emit(out)
		return
	}
	r.c = make([]rdCounters, r.n)
	for i := 0; i < r.n; i++ {
		go r.task(i)
	}
	timeout := time.Duration(*timeoutMs) * time.Millisecond
	points := []map[string]any{}
	if _, ok := r.entry(int64(r.n), 1, timeout); !ok { // warm-up: every task one token
		out["timed_out"] = true
	}
	for i := range ks {
		if out["timed_out"] == true {
			break
		}
		k := min(ks[i], int64(r.n))
		pt, ok := r.entry(k, hs[i], timeout)
		if !ok || r.failures.Load() > 0 {
			out["timed_out"] = !ok
			break
		}
		points = append(points, pt)
	}
	out["points"] = points
	emit(out)
	os.Exit(0) // the goroutines, blocked in their reads, end with the process
}
