package merge_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/merge"
)

// Rules a node's sstables exercise that generated histories do not, each
// with its expected result worked out by hand from the Java named.

// marked is a counter context as streaming leaves one that holds legacy
// local shards (CounterContext.markLocalToBeCleared): its header count
// negated.
func marked(ctx []byte) []byte {
	out := bytes.Clone(ctx)
	n := int16(binary.BigEndian.Uint16(out))
	binary.BigEndian.PutUint16(out, uint16(-n))
	return out
}

// A counter context marked for clearing has its local shards cleared as
// it is read (DeserializationHelper.maybeClearCounterValue ->
// CounterContext.clearAllLocal): they become remote shards. Merged with
// another sstable's local shard of the same id, the local one then wins
// (CounterContext.compare: one local shard beats a remote one); had the
// marked shard stayed local, the two would add up (clock 5, count 14). A
// marked context only one sstable holds is written cleared.
func TestMarkedCounterContextReadsCleared(t *testing.T) {
	tt := newTestTable(true)
	old := marked(counterCtx([4]int64{1, 3, 10, 'l'}))
	newer := counterCtx([4]int64{1, 2, 4, 'l'})
	globalOnly := marked(counterCtx([4]int64{2, 7, 70, 'g'}))
	paths := writeSSTables(t, tt,
		[]testPartition{
			{key: "both", items: []*rows.Unfiltered{row(1, counterCell(2000, old))}},
			{key: "alone", items: []*rows.Unfiltered{row(1, counterCell(2000, old))}},
			{key: "global", items: []*rows.Unfiltered{row(1, counterCell(2000, globalOnly))}},
		},
		[]testPartition{{key: "both", items: []*rows.Unfiltered{row(1, counterCell(3000, newer))}}})
	got := merged(t, paths, merge.Options{})
	// The cleared context: no header elements, the shard as it was.
	cleared := counterCtx([4]int64{1, 3, 10, 'r'})
	for key, want := range map[string][]byte{"both": newer, "alone": cleared, "global": globalOnly} {
		u := got[key]
		if len(u) != 1 || len(u[0].Cells) != 1 {
			t.Fatalf("%s: %v", key, u)
		}
		if v := u[0].Cells[0].Value; !bytes.Equal(v, want) {
			t.Errorf("%s: context %x, want %x", key, v, want)
		}
	}
}
