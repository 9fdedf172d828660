package filter

import (
	"fmt"
	"testing"

	"github.com/sstabletool/sstabletool/internal/format/murmur"
)

// Baseline: the Murmur3 hash alone, which every lookup must pay; the ratio
// of MightContain to it is the cost of the probes themselves.
func benchFilter(b *testing.B) (*BloomFilter, [][]byte) {
	f, err := New(100000, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 1024)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user:%016d", i)
		if i%2 == 0 {
			f.Add(keys[i])
		}
	}
	return f, keys
}

func BenchmarkMightContainBaselineHash(b *testing.B) {
	_, keys := benchFilter(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		murmur.Hash128(keys[i&1023], 0)
		i++
	}
}

func BenchmarkMightContain(b *testing.B) {
	f, keys := benchFilter(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.MightContain(keys[i&1023])
		i++
	}
}

func BenchmarkAdd(b *testing.B) {
	f, keys := benchFilter(b)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		f.Add(keys[i&1023])
		i++
	}
}

// BenchmarkAddBig adds keys to a filter sized for 15 million (18.75 MB,
// bigger than the caches, as the filter of a 300 MB sstable of small
// partitions): what a rewrite and verify pay per partition for the filter
// they build (see addBatch).
func BenchmarkAddBig(b *testing.B) {
	f, err := New(15_000_000, 0.01)
	if err != nil {
		b.Fatal(err)
	}
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "user:%016d", i*7919)
	}
	i := 0
	for b.Loop() {
		f.Add(keys[i&(1<<16-1)])
		i++
	}
	f.settle()
}
