package bti

import (
	"bytes"
	"encoding/binary"
	"sort"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/bti/trie"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// TestFixturesRebuiltFromDecoded decodes each fixture index completely
// (stored prefixes and payloads, separators and blocks, entries, footer)
// and writes it again from those decoded values alone: the bytes must be
// Cassandra's.
func TestFixturesRebuiltFromDecoded(t *testing.T) {
	for _, dataPath := range btiTables(t) {
		dt := readDataTable(t, dataPath)
		pdb := readFile(t, dt.prefix+format.ComponentPartitions)
		pi, err := OpenPartitions(trie.BytesSource(pdb), "", dt.partitioner)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		out := trie.NewOutput(&buf, 0)
		tw := trie.NewWriter[PartitionPayload](out, partitionCodec{})
		var rowsPositions []int64
		it := pi.Iter()
		for ok := it.First(); ok; ok = it.Next() {
			e := it.Entry()
			if err := tw.Add(e.Prefix, e.PartitionPayload); err != nil {
				t.Fatal(err)
			}
			if e.InRowIndex() {
				rowsPositions = append(rowsPositions, e.RowIndexPos())
			}
		}
		root, err := tw.Complete()
		if err != nil {
			t.Fatal(err)
		}
		keysPos := out.Pos()
		var tail []byte
		for _, k := range [][]byte{pi.FirstKey, pi.LastKey} {
			tail = append(binary.BigEndian.AppendUint16(tail, uint16(len(k))), k...)
		}
		tail = binary.BigEndian.AppendUint64(tail, uint64(keysPos))
		tail = binary.BigEndian.AppendUint64(tail, uint64(pi.KeyCount))
		tail = binary.BigEndian.AppendUint64(tail, uint64(root))
		out.Write(tail)
		out.Flush()
		if !bytes.Equal(buf.Bytes(), pdb) {
			t.Errorf("%s: Partitions.db rewritten from its entries differs at byte %d", dataPath, firstDiff(buf.Bytes(), pdb))
		}

		rdb := readFile(t, dt.prefix+format.ComponentRows)
		ri := OpenRows(trie.BytesSource(rdb), "", dt.version)
		sort.Slice(rowsPositions, func(i, j int) bool { return rowsPositions[i] < rowsPositions[j] })
		buf.Reset()
		out = trie.NewOutput(&buf, 0)
		rt := trie.NewWriter[rowPayload](out, rowCodec{layout: dt.version.DeletionTimeLayout()})
		for _, pos := range rowsPositions {
			e, err := ri.Entry(pos)
			if err != nil {
				t.Fatal(err)
			}
			blocks, end, err := ri.Blocks(e)
			if err != nil {
				t.Fatal(err)
			}
			rt.Reset()
			for _, b := range append(blocks, end) {
				if err := rt.Add(b.Separator, rowPayload{offset: b.Offset, open: b.OpenDeletion}); err != nil {
					t.Fatal(err)
				}
			}
			root, err := rt.Complete()
			if err != nil {
				t.Fatal(err)
			}
			if out.Pos() != pos {
				t.Fatalf("%s: entry rewritten at %d, Cassandra's at %d", dataPath, out.Pos(), pos)
			}
			b := append(binary.BigEndian.AppendUint16(nil, uint16(len(e.Key))), e.Key...)
			base := pos + int64(len(b))
			b = vint.AppendUnsigned(b, uint64(e.DataPos))
			b = vint.AppendSigned(b, root-base)
			b = vint.AppendUnsigned(b, uint64(e.BlockCount))
			b, _ = deletiontime.Compact.Append(b, e.Deletion)
			out.Write(b)
		}
		out.Flush()
		if !bytes.Equal(buf.Bytes(), rdb) {
			t.Errorf("%s: Rows.db rewritten from its entries differs at byte %d", dataPath, firstDiff(buf.Bytes(), rdb))
		}
	}
}
