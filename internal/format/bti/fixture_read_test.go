package bti

import (
	"bytes"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
)

// TestFixturePartitionsPointAtPartitions reads each da fixture's
// Partitions.db and checks every entry against Data.db: entries come in key
// order, each points at the start of the partition whose key has the
// stored prefix and hash byte (directly or through its Rows.db entry), and
// a lookup of every real key finds its partition.
func TestFixturePartitionsPointAtPartitions(t *testing.T) {
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		pi, err := OpenPartitions(trie.BytesSource(readFile(t, dt.prefix+format.ComponentPartitions)), dt.prefix+format.ComponentPartitions, dt.partitioner)
		if err != nil {
			t.Fatal(err)
		}
		ri := OpenRows(trie.BytesSource(readFile(t, dt.prefix+format.ComponentRows)), dt.prefix+format.ComponentRows, dt.version)
		if pi.KeyCount != int64(len(dt.partitions)) {
			t.Fatalf("%s: key count %d, Data.db has %d partitions", dataPath, pi.KeyCount, len(dt.partitions))
		}
		first, last := dt.partitions[0].key, dt.partitions[len(dt.partitions)-1].key
		if !bytes.Equal(pi.FirstKey, first) || !bytes.Equal(pi.LastKey, last) {
			t.Fatalf("first/last %q %q, Data.db has %q %q", pi.FirstKey, pi.LastKey, first, last)
		}
		it := pi.Iter()
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			e := it.Entry()
			p := dt.partitions[i]
			bc, _ := bytecomparable.DecoratedKey(dt.partitioner, p.key)
			if !bytes.HasPrefix(bc, e.Prefix) || e.Hash != KeyHash(p.key) {
				t.Fatalf("entry %d: prefix %x hash %02x, key %q is %x hash %02x", i, e.Prefix, e.Hash, p.key, bc, KeyHash(p.key))
			}
			dataPos := e.DataPos()
			if e.InRowIndex() {
				re, err := ri.Entry(e.RowIndexPos())
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(re.Key, p.key) || re.Deletion != p.deletion {
					t.Fatalf("entry %d: Rows.db entry key %q deletion %v, partition %q %v", i, re.Key, re.Deletion, p.key, p.deletion)
				}
				dataPos = re.DataPos
			}
			if dataPos != p.pos {
				t.Fatalf("entry %d (%q): Data.db position %d, partition starts at %d", i, p.key, dataPos, p.pos)
			}
			got, ok, err := pi.Candidate(p.key)
			if err != nil || !ok || got != e.PartitionPayload {
				t.Fatalf("Candidate(%q) = %+v %v %v, want %+v", p.key, got, ok, err, e.PartitionPayload)
			}
			i++
		}
		if it.Err() != nil || i != len(dt.partitions) {
			t.Fatalf("%d entries, %d partitions, err %v", i, len(dt.partitions), it.Err())
		}
		// Keys that are not there: a key sharing no stored prefix, and one
		// that shares a prefix but not the hash byte.
		if _, ok, err := pi.Candidate([]byte("9")); ok || err != nil {
			t.Fatalf("Candidate(9) found a partition (%v)", err)
		}
		miss := 0
		for _, k := range []string{"00", "01", "02", "0a", "0b", "0c", "10", "11"} {
			if _, ok, _ := pi.Candidate([]byte(k)); !ok {
				miss++
			}
		}
		if miss == 0 {
			t.Fatalf("no absent key sharing a stored prefix was rejected by its hash byte")
		}
		// SeekKey positions at the candidate for a key, or the next entry.
		if !it.SeekKey([]byte("2x")) || !bytes.Equal(it.Entry().Prefix, []byte{0x40, '2'}) {
			t.Fatalf("SeekKey(2x) = %+v, want the entry of key 2", it.Entry())
		}
		if !it.SeekKey([]byte("")) || !bytes.Equal(it.Entry().Prefix, []byte{0x40, '0'}) {
			t.Fatalf("SeekKey() = %+v, want the first entry", it.Entry())
		}
		if it.SeekKey([]byte("5")) {
			t.Fatalf("SeekKey(5) found %+v past the last key", it.Entry())
		}
		st, err := pi.Stats()
		if err != nil || st.Keys != pi.KeyCount || st.PageCrossing != 0 {
			t.Fatalf("stats %+v %v", st, err)
		}
	}
}

// TestFixtureRowsBlocks checks each Rows.db row index against the blocks
// the partition writer cuts from Data.db, and that a floor lookup of every
// row's clustering lands on the block holding it.
func TestFixtureRowsBlocks(t *testing.T) {
	indexed := 0
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		pi, err := OpenPartitions(trie.BytesSource(readFile(t, dt.prefix+format.ComponentPartitions)), "", dt.partitioner)
		if err != nil {
			t.Fatal(err)
		}
		ri := OpenRows(trie.BytesSource(readFile(t, dt.prefix+format.ComponentRows)), dt.prefix+format.ComponentRows, dt.version)
		it := pi.Iter()
		for i, ok := 0, it.First(); ok; i, ok = i+1, it.Next() {
			if !it.Entry().InRowIndex() {
				continue
			}
			indexed++
			p := dt.partitions[i]
			re, err := ri.Entry(it.Entry().RowIndexPos())
			if err != nil {
				t.Fatal(err)
			}
			blocks, end, err := ri.Blocks(re)
			if err != nil {
				t.Fatal(err)
			}
			cut := NewBlockCutter(4096)
			for _, u := range p.unfiltereds {
				if err := cut.Add(u.bc, u.start, u.end, u.marker, u.openAfter); err != nil {
					t.Fatal(err)
				}
			}
			want, _, _ := cut.Finish(p.end)
			if len(blocks) != len(want) || end.Offset != p.end {
				t.Fatalf("%q: %d blocks ending at %d, cutter has %d ending at %d", p.key, len(blocks), end.Offset, len(want), p.end)
			}
			for j, b := range blocks {
				if b.Offset != want[j].Offset || b.OpenDeletion != want[j].OpenDeletion {
					t.Fatalf("%q block %d: offset %d open %v, want %d %v", p.key, j, b.Offset, b.OpenDeletion, want[j].Offset, want[j].OpenDeletion)
				}
				// The separator sorts after the previous block's last
				// clustering and not after this block's first.
				if j > 0 && (bytes.Compare(b.Separator, want[j-1].Last) <= 0 || bytes.Compare(b.Separator, want[j].First) > 0) {
					t.Fatalf("%q block %d: separator %x not in (%x, %x]", p.key, j, b.Separator, want[j-1].Last, want[j].First)
				}
				dc, err := bytecomparable.DecodeClustering(b.Separator, dt.clustering)
				if err != nil || (j > 0 && (len(dc.Values) != 1 || dc.Position != bytecomparable.Partial)) {
					t.Fatalf("%q block %d: separator %x decodes to %+v %v", p.key, j, b.Separator, dc, err)
				}
			}
			for _, u := range p.unfiltereds {
				b, closing, err := ri.Floor(re, u.bc)
				if err != nil || closing || b.Offset > u.start {
					t.Fatalf("%q: floor of row at %d is block at %d (closing %v, %v)", p.key, u.start, b.Offset, closing, err)
				}
				// The next block, if any, starts after the row.
				for j := range blocks {
					if blocks[j].Offset == b.Offset && j+1 < len(blocks) && blocks[j+1].Offset <= u.start {
						t.Fatalf("%q: row at %d found in block %d, but block %d starts at %d", p.key, u.start, j, j+1, blocks[j+1].Offset)
					}
				}
			}
			if _, closing, err := ri.Floor(re, []byte{0x40, 0xFF}); err != nil || !closing {
				t.Fatalf("a clustering after the last one did not reach the closing entry (%v)", err)
			}
		}
	}
	if indexed == 0 {
		t.Fatal("no fixture partition has a row index")
	}
}
