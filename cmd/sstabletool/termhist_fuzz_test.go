package main

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// FuzzTermHistogram draws histograms of arbitrary bins: Statistics.db
// stores mc/me histograms without a checksum, so a damaged one may hold
// negative counts, counts whose sum overflows, or offsets of any value,
// and metadata must still print (it panicked with a negative Repeat count).
func FuzzTermHistogram(f *testing.F) {
	pair := func(off, count int64) []byte {
		return binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, uint64(off)), uint64(count))
	}
	f.Add(append(pair(1, 5), pair(2, 7)...), byte(0))
	f.Add(append(pair(73457, 5), pair(88148, -3)...), byte(1))                  // a negative count beside a positive one
	f.Add(append(pair(10, math.MaxInt32), pair(12, math.MaxInt64)...), byte(2)) // 2^31-1, and a sum that overflows
	f.Add(pair(-1, -1), byte(3))                                                // the only count negative: max stays 0
	f.Add(append(pair(math.MaxInt64, 1), pair(math.MinInt64, 0)...), byte(0))
	pr := metadataPrinter{}
	f.Fuzz(func(t *testing.T, raw []byte, flags byte) {
		var bins []termBin
		for len(raw) >= 16 && len(bins) < 200 {
			bins = append(bins, termBin{int64(binary.BigEndian.Uint64(raw)), int64(binary.BigEndian.Uint64(raw[8:]))})
			raw = raw[16:]
		}
		st := style{color: flags&1 != 0, unicode: flags&2 != 0}
		pr.style = st
		names := []func(int64) string{countName, pr.bytesName}
		var out bytes.Buffer
		h := termHistogram{title: "Size (bytes)", bins: bins, offsetName: names[int(flags>>2)%len(names)]}
		h.print(&out, st)
		if len(bins) > 0 && !bytes.Contains(out.Bytes(), []byte("Percentiles")) {
			t.Fatalf("no percentiles in %q", out.String())
		}
	})
}
