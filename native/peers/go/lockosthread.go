// lockosthread.go - the channel ping-pong of golang/go#18023, with and without
// runtime.LockOSThread (claim S11 of threadcost).
//
// Two goroutines pass an int back and forth over two unbuffered channels: one
// round trip is a send and a receive on each side. With -locked both
// goroutines lock themselves to their own OS thread first, so every hand-off
// must wake the other OS thread (a kernel context switch) instead of a
// goroutine switch inside the runtime. The process's own kernel counters
// (getrusage RUSAGE_SELF: voluntary and involuntary context switches of all
// its threads, the runtime's included) are read around the untimed-inside
// batch, so the output says how many kernel switches each round trip took.
package main

import (
	"flag"
	"runtime"
	"syscall"
	"time"
)

func processSwitches() (int64, int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1, -1
	}
	return int64(ru.Nvcsw), int64(ru.Nivcsw)
}

func lockosthread(args []string) {
	fs := flag.NewFlagSet("lockosthread", flag.ExitOnError)
	iterations := fs.Int("iterations", 20000, "round trips in the batch")
	warmup := fs.Int("warmup", 2000, "untimed round trips first")
	gomaxprocs := fs.Int("gomaxprocs", 1, "GOMAXPROCS (0: the runtime default)")
	locked := fs.Bool("locked", false, "lock each goroutine to its own OS thread")
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: no pinning)")
	_ = fs.Parse(args)
	if *iterations < 1 || *warmup < 0 || *gomaxprocs < 0 {
		fail("lockosthread: iterations >= 1, warmup >= 0, gomaxprocs >= 0 required")
	}
	pinProcess(*cpu)
	if *gomaxprocs > 0 {
		runtime.GOMAXPROCS(*gomaxprocs)
	}
	if *locked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	ping := make(chan int)
	pong := make(chan int)
	go func() {
		if *locked {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		for v := range ping {
			pong <- v
		}
		close(pong)
	}()
	for i := 0; i < *warmup; i++ {
		ping <- i
		<-pong
	}
	vol0, invol0 := processSwitches()
	start := time.Now()
	for i := 0; i < *iterations; i++ {
		ping <- i
		<-pong
	}
	batch := int64(time.Since(start))
	vol1, invol1 := processSwitches()
	close(ping)
	<-pong
	emit(map[string]any{
		"program":     "lockosthread",
		"go_version":  runtime.Version(),
		"gomaxprocs":  runtime.GOMAXPROCS(0),
		"locked":      *locked,
		"pinned_cpu":  *cpu,
		"iterations":  *iterations,
		"warmup":      *warmup,
		"batch_ns":    batch,
		"voluntary":   vol1 - vol0,
		"involuntary": invol1 - invol0,
		"counted":     vol0 >= 0 && vol1 >= 0,
	})
}
