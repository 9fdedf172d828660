package writer

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// IndexWriter fed the rows of Cassandra's own tables at the granularity
// Cassandra wrote them with (4 KiB, its test configuration) writes their
// index byte for byte: the oa fixtures' Index.db and Summary.db, and, from
// the same rows, the da fixtures' Partitions.db and Rows.db (the oa and
// da tables hold the same partitions at the same positions).
func TestIndexWriterReproducesCassandra(t *testing.T) {
	da, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"simple", "clust"} {
		oaDir := fixtures.Table(t, "oa", "legacy_oa_"+name)
		daDir := fixtures.Table(t, "da", "legacy_da_"+name)
		src, err := sstable.Open(filepath.Join(oaDir, "oa-1-big-Data.db"), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		for _, c := range []struct {
			v    format.Version
			dir  string
			want []string
		}{
			{src.Version(), oaDir, []string{format.ComponentIndex, format.ComponentSummary}},
			{da, daDir, []string{format.ComponentPartitions, format.ComponentRows}},
		} {
			var primary, rowsOut bytes.Buffer
			iw, err := NewIndexWriter(IndexConfig{Version: c.v, Partitioner: src.Partitioner(), ClusteringTypes: src.ClusteringTypes(),
				ClusteringFixed: src.Schema().ClusteringFixed, ColumnIndexSize: 4 << 10, ExpectedKeys: 5}, &primary, &rowsOut)
			if err != nil {
				t.Fatal(err)
			}
			feed(t, src, iw)
			extra, err := iw.Finish()
			if err != nil {
				t.Fatal(err)
			}
			got := map[string][]byte{c.want[0]: primary.Bytes()}
			if c.v.IsBTI() {
				got[c.want[1]] = rowsOut.Bytes()
			} else {
				if len(extra) != 1 || extra[0].Name != format.ComponentSummary {
					t.Fatalf("extra components %v", extra)
				}
				got[extra[0].Name] = extra[0].Bytes
			}
			d := format.Descriptor{Dir: c.dir, Version: c.v, Generation: "1"}
			for _, comp := range c.want {
				want, err := os.ReadFile(d.Path(comp))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got[comp], want) {
					t.Errorf("%s %s: %d bytes, Cassandra's %d", name, comp, len(got[comp]), len(want))
				}
			}
		}
	}
}

// feed reports every partition and unfiltered of src to iw.
func feed(t *testing.T, src *sstable.SSTable, iw *IndexWriter) {
	t.Helper()
	dec := src.Decoder(0)
	var h rows.PartitionHeader
	for {
		err := dec.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		iw.StartPartition(h.Key, h.Offset, h.Deletion)
		headerLen := int64(-1)
		for {
			u, err := dec.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			if u.Kind == rows.KindStaticRow {
				continue
			}
			if headerLen < 0 {
				headerLen = u.Offset - h.Offset
			}
			if err := iw.Add(u, u.Offset-h.Offset, u.Offset+u.Size-h.Offset); err != nil {
				t.Fatal(err)
			}
		}
		size := dec.Pos() - h.Offset
		if headerLen < 0 {
			headerLen = size - 1
		}
		if err := iw.EndPartition(headerLen, size); err != nil {
			t.Fatal(err)
		}
	}
}
