package bti

import (
	"bytes"
	"testing"
)

// AddCopy, fed every clustering through one buffer that the caller
// overwrites for the next unfiltered, cuts the same blocks with the same
// first and last clusterings as Add given a buffer per unfiltered, at
// granularities that close blocks on most unfiltereds and on few.
func TestAddCopyMatchesAdd(t *testing.T) {
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		for _, g := range []int64{1, 100, 4096, 1 << 20} {
			ref, cp := NewBlockCutter(g), NewBlockCutter(g)
			scratch := make([]byte, 0, 64)
			for _, p := range dt.partitions {
				ref.Reset()
				cp.Reset()
				for _, u := range p.unfiltereds {
					if err := ref.Add(u.bc, u.start, u.end, u.marker, u.openAfter); err != nil {
						t.Fatal(err)
					}
					scratch = append(scratch[:0], u.bc...)
					if err := cp.AddCopy(scratch, u.start, u.end, u.marker, u.openAfter); err != nil {
						t.Fatal(err)
					}
					for i := range scratch {
						scratch[i] = 0xEE // the caller reuses its buffer
					}
				}
				want, wi, err := ref.Finish(p.end)
				if err != nil {
					t.Fatal(err)
				}
				got, gi, err := cp.Finish(p.end)
				if err != nil {
					t.Fatal(err)
				}
				if wi != gi || len(want) != len(got) {
					t.Fatalf("granularity %d, %q: %d blocks (indexed %v), Add cut %d (%v)", g, p.key, len(got), gi, len(want), wi)
				}
				for i := range want {
					a, b := want[i], got[i]
					if !bytes.Equal(a.First, b.First) || !bytes.Equal(a.Last, b.Last) || a.Offset != b.Offset || a.OpenDeletion != b.OpenDeletion {
						t.Fatalf("granularity %d, %q block %d: AddCopy %x..%x @%d, Add %x..%x @%d", g, p.key, i, b.First, b.Last, b.Offset, a.First, a.Last, a.Offset)
					}
				}
			}
		}
	}
}
