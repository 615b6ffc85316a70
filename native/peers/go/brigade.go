// The goroutine kind of threadcost's bucket brigade (notebook 07): N goroutines
// joined by N+1 pipes from os.Pipe (-transport socketpair: Unix stream socket
// pairs, S5's transport, made non-blocking and handed to os.NewFile, which
// registers them with the poller as it does a pipe). os.Pipe's ends are non-blocking and
// registered with the runtime's poller, so a goroutine whose Read finds the
// pipe empty parks and is made runnable again when the poller (epoll) reports
// the pipe readable: the switch between tasks is driven by I/O readiness, as
// in the C epoll kind, but with the Go scheduler choosing what runs next.
package main

import (
	"errors"
	"flag"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func countFds() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries) - 1 // the directory's own fd
}

// kernelKib is KernelStack + PageTables + SUnreclaim from /proc/meminfo (kB,
// system-wide): the kernel's own memory that no process's RSS shows.
func kernelKib() int64 {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return -1
	}
	var total int64
	for _, line := range strings.Split(string(data), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "KernelStack" && name != "PageTables" && name != "SUnreclaim") {
			continue
		}
		if fields := strings.Fields(rest); len(fields) > 0 {
			if v, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
				total += v
			}
		}
	}
	return total
}

func brigade(args []string) {
	fs := flag.NewFlagSet("brigade", flag.ExitOnError)
	tasks := fs.Int("tasks", 100, "goroutines in the brigade")
	iterations := fs.Int("iterations", 1000, "timed trips")
	warmup := fs.Int("warmup", 100, "untimed trips first")
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: no pinning)")
	timeoutMs := fs.Int("timeout-ms", 10000, "no trip for this long ends the run")
	stallAfter := fs.Int("stall-after", -1, "test hook: the middle goroutine stops after this many trips")
	maxFds := fs.Int("max-fds", 0, "cap RLIMIT_NOFILE (soft and hard) at this many fds first (0: raise it)")
	transport := fs.String("transport", "pipe", "pipe or socketpair")
	_ = fs.Parse(args)
	if *transport != "pipe" && *transport != "socketpair" {
		fail("brigade: -transport %q: one of pipe, socketpair", *transport)
	}
	if *tasks < 1 || *iterations < 1 || *warmup < 0 || *timeoutMs < 1 {
		fail("brigade: tasks >= 1, iterations >= 1, warmup >= 0, timeout-ms >= 1 required")
	}
	pinProcess(*cpu)
	timer := timerOverheadNs()
	n := *tasks
	out := map[string]any{
		"program": "brigade", "go_version": runtime.Version(), "tasks": n,
		"iterations": *iterations, "warmup": *warmup, "affinity": affinity(),
		"gomaxprocs": runtime.GOMAXPROCS(0), "timer_overhead_ns": timer,
		"timed_out": false, "limit": nil, "errno": 0, "transport": *transport,
	}
	// The runtime raised the soft fd limit to the hard one at start-up; still
	// short, a privileged process may raise the hard limit too.
	var nofile syscall.Rlimit
	need := uint64(2*n + 64)
	if *maxFds > 0 {
		cap := uint64(*maxFds)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: cap, Max: cap}); err != nil {
			fail("brigade: cannot cap RLIMIT_NOFILE at %d: %v", cap, err)
		}
	} else if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil && nofile.Cur < need {
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: need, Max: max(need, nofile.Max)})
	}
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &nofile) == nil {
		out["nofile_soft"] = nofile.Cur
		out["nofile_hard"] = nofile.Max
	}
	runtime.GC()
	before := procStatus()
	out["rss_before_kib"] = before["VmRSS"]
	out["vsz_before_kib"] = before["VmSize"]
	before0 := runtime.NumGoroutine()
	out["goroutines_before"] = before0
	out["fds_before"] = countFds()
	out["kernel_before_kib"] = kernelKib()

	readers := make([]*os.File, 0, n+1)
	writers := make([]*os.File, 0, n+1)
	closeAll := func() {
		for i := range readers {
			readers[i].Close()
			writers[i].Close()
		}
	}
	for i := 0; i <= n; i++ {
		r, w, err := link(*transport == "socketpair")
		if err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) {
				out["errno"] = int(errno)
				switch errno {
				case syscall.EMFILE, syscall.ENFILE:
					out["limit"] = "fds"
				case syscall.ENOMEM:
					out["limit"] = "memory"
				}
			}
			if out["limit"] == nil {
				closeAll()
				fail("brigade: %s: %v", *transport, err)
			}
			out["tasks_ready"] = max(i-1, 0)
			closeAll()
			out["fds_after"] = countFds()
			emit(out)
			return
		}
		readers = append(readers, r)
		writers = append(writers, w)
	}

	var trips atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			buf := make([]byte, 1)
			for {
				if _, err := readers[i].Read(buf); err != nil {
					return // closed at the end of the run
				}
				if *stallAfter >= 0 && i == n/2 && trips.Load() >= int64(*stallAfter) {
					for !stop.Load() {
						time.Sleep(time.Millisecond)
					}
					return
				}
				if _, err := writers[i+1].Write(buf); err != nil {
					return
				}
			}
		}(i)
	}
	out["tasks_ready"] = n

	samples := make([]int64, *iterations)
	var sent, arrived, wrong int64
	var ready map[string]int64
	var totalNs int64
	done := make(chan error, 1)
	var driver sync.WaitGroup
	driver.Add(1)
	go func() {
		defer driver.Done()
		buf := make([]byte, 1)
		var start time.Time
		total := *warmup + *iterations
		for t := 0; t < total; t++ {
			if t == *warmup {
				ready = procStatus()
				out["kernel_ready_kib"] = kernelKib()
				out["goroutines_ready"] = runtime.NumGoroutine()
				out["fds_ready"] = countFds()
				start = time.Now()
			}
			v := byte(1 + t%200)
			t0 := time.Now()
			if _, err := writers[0].Write([]byte{v}); err != nil {
				done <- err
				return
			}
			if _, err := readers[n].Read(buf); err != nil {
				done <- err
				return
			}
			t1 := time.Now()
			sent++
			if buf[0] == v {
				arrived++
			} else {
				wrong++
			}
			if t >= *warmup {
				samples[t-*warmup] = int64(t1.Sub(t0))
			}
			trips.Store(int64(t + 1))
		}
		totalNs = int64(time.Since(start))
		done <- nil
	}()

	// The watchdog: no trip for timeout-ms ends the run.
	tick := time.NewTicker(50 * time.Millisecond)
	last, lastAt := int64(-1), time.Now()
	timedOut := false
	var runErr error
wait:
	for {
		select {
		case runErr = <-done:
			break wait
		case now := <-tick.C:
			if cur := trips.Load(); cur != last {
				last, lastAt = cur, now
			} else if now.Sub(lastAt) >= time.Duration(*timeoutMs)*time.Millisecond {
				timedOut = true
				break wait
			}
		}
	}
	tick.Stop()
	stop.Store(true)
	closeAll() // every Read parked in the poller returns an error: the goroutines end
	wg.Wait()
	driver.Wait() // the driver's Read on a closed pipe returned too
	out["timed_out"] = timedOut
	if runErr != nil && !timedOut {
		fail("brigade: trip failed: %v", runErr)
	}
	if timedOut {
		out["samples_ns"] = []int64{}
		out["completed"] = 0
	} else {
		out["samples_ns"] = samples
		out["completed"] = *iterations
	}
	out["total_ns"] = totalNs
	out["bytes_sent"], out["bytes_arrived"], out["bytes_wrong"] = sent, arrived, wrong
	if ready != nil {
		out["rss_ready_kib"] = ready["VmRSS"]
		out["vsz_ready_kib"] = ready["VmSize"]
		out["threads_ready"] = ready["Threads"]
	}
	// wg.Done runs just before a goroutine exits, so the count can lag for a moment:
	// give the exiting goroutines up to a second to be gone before counting.
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before0 &&
		time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	out["goroutines_after"] = runtime.NumGoroutine()
	out["fds_after"] = countFds()
	emit(out)
}

// link returns one link of the chain, (read end, write end): a pipe, or a Unix
// stream socket pair (one end read, the other written).
func link(socket bool) (*os.File, *os.File, error) {
	if !socket {
		return os.Pipe()
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX,
		syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "socketpair-r"), os.NewFile(uintptr(fds[1]), "socketpair-w"), nil
}
