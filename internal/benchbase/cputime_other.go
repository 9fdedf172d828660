//go:build !unix

package benchbase

import "time"

// CPUTime is not measured here: the CPU-time metrics read 0.
func CPUTime() time.Duration { return 0 }
