// Package cputime measures the CPU time of benchmarks, which on a shared
// machine stays within a few % under load while wall time swings: the
// matcher's benchmarks report it as cpu-ns/op (and cpu-MB/s) beside ns/op.
// Only benchmarks use it.
package cputime

import (
	"runtime"
	"syscall"
	"testing"
)

// Scope is whose CPU time a Timer measures.
type Scope uint8

const (
	// Process is the whole process's CPU time (getrusage RUSAGE_SELF):
	// with the garbage collector and any goroutine the benchmark starts.
	Process Scope = iota
	// Thread is the CPU time of the benchmark's own thread, which the
	// Timer locks to its goroutine (RUSAGE_THREAD, Linux only).
	Thread
)

// rusageThread is Linux's RUSAGE_THREAD, which package syscall does not
// name.
const rusageThread = 1

// Timer measures the CPU time of a benchmark loop from Start to Report.
type Timer struct {
	scope Scope
	start int64 // ns; -1 when not available
}

// Start starts a timer of the given scope.
func Start(scope Scope) Timer {
	if scope == Thread {
		runtime.LockOSThread()
	}
	return Timer{scope: scope, start: now(scope)}
}

// Report reports the CPU time per op of b.N ops as cpu-ns/op and, when
// bytesPerOp > 0, the throughput as cpu-MB/s; a Thread timer unlocks its
// thread. Nothing is reported where the CPU time is not available.
func (t Timer) Report(b *testing.B, bytesPerOp int) {
	end := now(t.scope)
	if t.scope == Thread {
		runtime.UnlockOSThread()
	}
	if t.start < 0 || end < 0 || b.N == 0 {
		return
	}
	ns := float64(end-t.start) / float64(b.N)
	b.ReportMetric(ns, "cpu-ns/op")
	if bytesPerOp > 0 && ns > 0 {
		b.ReportMetric(float64(bytesPerOp)/ns*1e3, "cpu-MB/s")
	}
}

// now returns the CPU time (user + system) of scope so far, or -1.
func now(scope Scope) int64 {
	who := syscall.RUSAGE_SELF
	if scope == Thread {
		if runtime.GOOS != "linux" {
			return -1
		}
		who = rusageThread
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return -1
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
