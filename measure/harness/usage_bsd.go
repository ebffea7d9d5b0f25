//go:build unix && !linux

package harness

import (
	"syscall"
	"time"
)

// Usage returns the CPU time all the process's threads have used and how
// often the OS preempted one of them; ok is false when it cannot say.
// It is a single system call, cheap enough for every sample; the CPU
// time comes in the ticks of the OS's accounting, so that short samples
// read coarse shares.
func Usage() (cpu time.Duration, involuntary int64, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return cpu, int64(ru.Nivcsw), true
}
