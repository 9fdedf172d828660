package main

import "testing"

// prettyMemory is FBUtilities.prettyPrintMemory(bytes, " "), whose %.3f
// rounds half up: 1088 bytes are 1.0625 KiB, printed 1.063 (Go's %.3f
// would print 1.062).
func TestPrettyMemory(t *testing.T) {
	for in, want := range map[int64]string{
		0: "0 B", 1: "1 B", 1023: "1023 B", 1024: "1.000 KiB", 1088: "1.063 KiB",
		67205: "65.630 KiB", 73457: "71.735 KiB", 1 << 20: "1.000 MiB", 3<<40 + 1<<39: "3.500 TiB",
	} {
		if got := prettyMemory(in); got != want {
			t.Errorf("prettyMemory(%d) = %q, want %q", in, got, want)
		}
	}
}
