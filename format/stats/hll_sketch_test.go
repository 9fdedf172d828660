package stats

import (
	"fmt"
	"math"
	"testing"
)

// The sketch the writer stores is one HLLCardinality reads back, and its
// estimate stays within HyperLogLog's error (1.04/sqrt(2^13) ≈ 1.15%, so
// 5% is far outside noise) over four orders of magnitude.
func TestHLLSketchRoundTrip(t *testing.T) {
	for _, n := range []int{1, 5, 1000, 20000, 200000} {
		var h HLLSketch
		for i := 0; i < n; i++ {
			h.Add([]byte(fmt.Sprintf("key-%d", i)))
		}
		got, err := HLLCardinality(h.Bytes())
		if err != nil {
			t.Fatalf("%d keys: %v", n, err)
		}
		if math.Abs(float64(got)-float64(n)) > 0.05*float64(n)+1 {
			t.Errorf("%d keys: estimate %d", n, got)
		}
		// The same keys again change nothing.
		before := h.Bytes()
		for i := 0; i < n; i++ {
			h.Add([]byte(fmt.Sprintf("key-%d", i)))
		}
		if string(before) != string(h.Bytes()) {
			t.Errorf("%d keys: adding them again changed the sketch", n)
		}
	}
}
