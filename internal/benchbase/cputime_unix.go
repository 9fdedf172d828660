//go:build unix

package benchbase

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user and system) the process has used so far,
// which other tenants of a shared machine do not inflate as they do wall
// time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
