package bti

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/reader"
)

// TestFixturesBuiltFromBigIndex builds the da fixtures' Partitions.db and
// Rows.db from the oa fixtures holding the same data in big format: keys,
// positions and promoted index blocks from oa's Index.db alone (the oa and
// da Data.db lay partitions and rows out at the same offsets, and both
// were written with 4 KiB blocks). The result must be the da bytes.
func TestFixturesBuiltFromBigIndex(t *testing.T) {
	for _, name := range []string{"simple", "clust"} {
		oaDir := fixtures.Table(t, "oa", "legacy_oa_"+name)
		daData := filepath.Join(fixtures.Table(t, "da", "legacy_da_"+name), "da-1-bti-Data.db")
		da := readDataTable(t, daData) // for the schema and partitioner only
		oaVersion := format.MustVersion("oa")
		f, err := reader.Open(filepath.Join(oaDir, "oa-1-big-Index.db"), reader.Buffered)
		if err != nil {
			t.Fatal(err)
		}
		var fixed []int
		for _, ty := range da.clustering {
			fixed = append(fixed, ty.FixedLength())
		}
		sc := index.NewScanner(f, &index.Codec{Version: oaVersion, ClusteringFixed: fixed}, 0, true)
		data, err := reader.OpenData(filepath.Join(oaDir, "oa-1-big-Data.db"), reader.Buffered, reader.DataOptions{
			CompressionInfoPath: filepath.Join(oaDir, "oa-1-big-CompressionInfo.db"), HasMaxCompressedLength: true})
		if err != nil {
			t.Fatal(err)
		}
		dataLen := data.Length()
		data.Close()
		// The scanner reuses its buffers: convert each entry's blocks as it
		// comes.
		type entry struct {
			index.Entry
			blocks []IndexBlock
		}
		var entries []entry
		for sc.Next() {
			e := entry{Entry: *sc.Entry()}
			e.Key = append([]byte{}, e.Key...)
			if e.blocks, err = BlocksFromIndexInfo(da.clustering, e.Blocks); err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
		}
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		var parts, rowsOut bytes.Buffer
		pw := NewPartitionsWriter(&parts, da.partitioner)
		rw := NewRowsWriter(&rowsOut, da.version)
		n := 0
		for i, e := range entries {
			n++
			next := dataLen
			if i+1 < len(entries) {
				next = entries[i+1].Position
			}
			if len(e.Blocks) < 2 {
				if err := pw.AddData(e.Key, e.Position); err != nil {
					t.Fatal(err)
				}
				continue
			}
			pos, err := rw.AddPartition(e.Key, e.Position, e.Deletion, e.blocks, next-e.Position-1)
			if err != nil {
				t.Fatal(err)
			}
			if err := pw.AddRowIndex(e.Key, pos); err != nil {
				t.Fatal(err)
			}
		}
		f.Close()
		if n != len(da.partitions) {
			t.Fatalf("%s: %d Index.db entries, %d partitions", name, n, len(da.partitions))
		}
		if _, err := pw.Finish(); err != nil {
			t.Fatal(err)
		}
		rw.Flush()
		for _, c := range []struct {
			component string
			got       []byte
		}{{format.ComponentPartitions, parts.Bytes()}, {format.ComponentRows, rowsOut.Bytes()}} {
			want := readFile(t, strings.TrimSuffix(daData, format.ComponentData)+c.component)
			if !bytes.Equal(c.got, want) {
				t.Errorf("%s %s from oa Index.db: %d bytes, Cassandra's %d, first difference at %d", name, c.component, len(c.got), len(want), firstDiff(c.got, want))
			}
		}
	}
}
