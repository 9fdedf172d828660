package benchbase

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
)

// ResetPeakRSS starts a new peak of the process's resident set (Linux:
// "5" written to /proc/self/clear_refs resets VmHWM to the current
// resident set), after the heap's free memory is returned to the system,
// so that PeakRSS then says what the work between the two took at most,
// on top of what the process already held. It reports whether the reset
// was made (false where /proc cannot do it).
func ResetPeakRSS() bool {
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// PeakRSS is the process's peak resident set in bytes since it started or
// since the last ResetPeakRSS (VmHWM); 0 where /proc does not say.
func PeakRSS() int64 { return procStatus("VmHWM:") }

// RSS is the process's resident set in bytes now (VmRSS); 0 where /proc
// does not say.
func RSS() int64 { return procStatus("VmRSS:") }

// procStatus is a size field of /proc/self/status, in bytes.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(field)); ok {
			kb, err := strconv.ParseInt(string(bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(v), []byte("kB")))), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
