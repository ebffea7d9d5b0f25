package harness

import (
	"syscall"
	"time"
	"unsafe"
)

// clockProcessCPUTime is CLOCK_PROCESS_CPUTIME_ID.
const clockProcessCPUTime = 2

// Usage returns the CPU time all the process's threads have used and how
// often the OS preempted one of them; ok is false when it cannot say.
// The CPU time is the process clock, exact to the nanosecond: the one
// getrusage reports is adjusted to stay monotonic across its tick-based
// split of user and system time, and stands still for tens of
// microseconds at a time, which would make a short sample look starved.
// Two system calls, cheap enough for every sample.
func Usage() (cpu time.Duration, involuntary int64, ok bool) {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockProcessCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return 0, 0, false
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ts.Nano()), int64(ru.Nivcsw), true
}
