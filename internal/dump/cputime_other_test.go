//go:build !unix

package dump

import "time"

// cpuTime is not measured here: the CPU-time metrics read 0.
func cpuTime() time.Duration { return 0 }
