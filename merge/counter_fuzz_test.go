package merge

import (
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// FuzzMergeCounters merges two arbitrary counter contexts: a context that
// does not decode is an error, never a panic; a merge of two that do is
// one of them or a new context that decodes, whose shards are theirs.
func FuzzMergeCounters(f *testing.F) {
	g := func(i int) []byte {
		b := []byte{0, 1, 0x80, 0}
		id := make([]byte, 16)
		id[15] = byte(i)
		b = append(b, id...)
		return append(b, 0, 0, 0, 0, 0, 0, 0, byte(i), 0, 0, 0, 0, 0, 0, 0, 3)
	}
	f.Add(g(1), g(2))
	f.Add(g(1), g(1))
	f.Add([]byte{0, 0}, g(3))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		out, _, took, err := mergeCounters(nil, a, b)
		if err != nil {
			return
		}
		switch took {
		case tookLeft:
			if &out[0] != &a[0] {
				t.Fatal("took the left context but returned another")
			}
		case tookRight:
			if &out[0] != &b[0] {
				t.Fatal("took the right context but returned another")
			}
		}
		// cqltype's decoder and this package's walk are both
		// CounterContext.ContextState: they take the same contexts and
		// mark the same shards global and local.
		sa, errA := cqltype.CounterShards(a)
		sb, errB := cqltype.CounterShards(b)
		if errA != nil || errB != nil {
			t.Fatalf("the merge took contexts cqltype refuses: %v, %v", errA, errB)
		}
		for i, ctx := range [][]byte{a, b} {
			shards := [][]cqltype.CounterShard{sa, sb}[i]
			st, _ := wrapCounter(ctx)
			for k := 0; st.hasRemaining(); k++ {
				if k >= len(shards) || shards[k].Global != st.isGlobal || shards[k].Local != st.isLocal {
					t.Fatalf("context %x, shard %d: cqltype and the walk disagree (%+v)", ctx, k, shards)
				}
				st.next()
			}
		}
		so, err := cqltype.CounterShards(out)
		if err != nil {
			t.Fatalf("merged context does not decode: %v", err)
		}
		ids := map[[16]byte]bool{}
		for _, s := range append(sa, sb...) {
			ids[s.ID] = true
		}
		for _, s := range so {
			if !ids[s.ID] {
				t.Fatalf("merged shard %x is in neither context", s.ID)
			}
		}
		// And through the cell rule, tombstones included.
		l := rows.Cell{Timestamp: 1, Value: a}
		r := rows.Cell{Timestamp: 2, Value: b, Flags: rows.CellFlagDeleted}
		if c, _, _, why, err := resolveCounter(nil, &l, &r); err != nil || why != CounterTombstoneWins || c.Timestamp != 2 {
			t.Fatalf("a counter tombstone lost: %+v %v %v", c, why, err)
		}
	})
}
