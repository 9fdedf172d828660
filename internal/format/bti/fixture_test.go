package bti

import (
	"bytes"
	"testing"

	"github.com/sstabletool/sstabletool/format"
)

// TestFixturesRebuiltByteForByte rebuilds Partitions.db and Rows.db of every
// da fixture from the real partition keys, positions and rows of its
// Data.db, cutting row index blocks as Cassandra's partition writer does
// (4 KiB: the column_index_size of Cassandra's test configuration, which
// wrote the fixtures), and compares the bytes.
func TestFixturesRebuiltByteForByte(t *testing.T) {
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		var parts, rowsOut bytes.Buffer
		pw := NewPartitionsWriter(&parts, dt.partitioner)
		rw := NewRowsWriter(&rowsOut, dt.version)
		cut := NewBlockCutter(4096)
		for _, p := range dt.partitions {
			cut.Reset()
			for _, u := range p.unfiltereds {
				if err := cut.Add(u.bc, u.start, u.end, u.marker, u.openAfter); err != nil {
					t.Fatal(err)
				}
			}
			blocks, indexed, err := cut.Finish(p.end)
			if err != nil {
				t.Fatal(err)
			}
			// AddUnfiltered, fed the decoder's unfiltereds, cuts the same.
			if indexed != p.indexed || len(blocks) != len(p.blocks) {
				t.Fatalf("%q: AddUnfiltered cut %d blocks (indexed %v), Add %d (%v)", p.key, len(p.blocks), p.indexed, len(blocks), indexed)
			}
			for j := range blocks {
				a, b := blocks[j], p.blocks[j]
				if !bytes.Equal(a.First, b.First) || !bytes.Equal(a.Last, b.Last) || a.Offset != b.Offset || a.OpenDeletion != b.OpenDeletion {
					t.Fatalf("%q block %d: AddUnfiltered %+v, Add %+v", p.key, j, b, a)
				}
			}
			if !indexed {
				if err := pw.AddData(p.key, p.pos); err != nil {
					t.Fatal(err)
				}
				continue
			}
			pos, err := rw.AddPartition(p.key, p.pos, p.deletion, blocks, p.end)
			if err != nil {
				t.Fatal(err)
			}
			if err := pw.AddRowIndex(p.key, pos); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := pw.Finish(); err != nil {
			t.Fatal(err)
		}
		if err := rw.Flush(); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			component string
			got       []byte
		}{{format.ComponentPartitions, parts.Bytes()}, {format.ComponentRows, rowsOut.Bytes()}} {
			want := readFile(t, dt.prefix+c.component)
			if !bytes.Equal(c.got, want) {
				t.Errorf("%s%s: rebuilt %d bytes differ from Cassandra's %d at byte %d\n got %x\nwant %x", dt.prefix, c.component, len(c.got), len(want), firstDiff(c.got, want), c.got, want)
			} else {
				t.Logf("%s%s: %d bytes identical", dt.prefix, c.component, len(want))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
