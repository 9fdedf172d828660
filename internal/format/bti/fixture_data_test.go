package bti

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/bytecomparable"
	"github.com/sstabletool/sstabletool/reader"
)

// The fixtures' Data.db is read one level below format/sstable (which does
// not open BTI sstables yet): Statistics.db for the schema, reader.OpenData
// and the rows decoder, with the glue format/sstable uses.

type dataUnfiltered struct {
	bc         []byte // byte-comparable clustering
	start, end int64  // from the partition start
	marker     bool
	openAfter  deletiontime.DeletionTime
}

type dataPartition struct {
	key         []byte
	pos         int64
	deletion    deletiontime.DeletionTime
	unfiltereds []dataUnfiltered
	end         int64 // end of the last unfiltered, from the partition start
	// blocks as BlockCutter.AddUnfiltered cut them at 4 KiB straight from
	// the decoder's unfiltereds.
	blocks  []IndexBlock
	indexed bool
}

type dataTable struct {
	dir         string
	prefix      string // path up to the component name
	version     format.Version
	partitioner token.Partitioner
	clustering  []*cqltype.Type
	partitions  []dataPartition
}

func typeOf(t *testing.T, tn stats.TypeName) *cqltype.Type {
	t.Helper()
	if tn.Type != nil {
		return tn.Type
	}
	ty, err := cqltype.Parse(tn.Class)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// readDataTable reads every partition of the sstable whose Data.db is at
// dataPath, with each unfiltered's clustering and offsets.
func readDataTable(t *testing.T, dataPath string) *dataTable {
	t.Helper()
	desc, _, err := format.ParseDescriptor(dataPath)
	if err != nil {
		t.Fatal(err)
	}
	st, err := stats.ReadFile(desc.Path(format.ComponentStatistics), desc.Version)
	if err != nil {
		t.Fatal(err)
	}
	p, err := token.ForName(st.Validation.Partitioner)
	if err != nil {
		t.Fatal(err)
	}
	dt := &dataTable{dir: desc.Dir, prefix: desc.Path(""), version: desc.Version, partitioner: p}
	h := st.Header
	sch := &rows.Schema{Version: desc.Version, MinTimestamp: h.MinTimestamp, MinLocalDeletionTime: h.MinLocalDeletionTime, MinTTL: h.MinTTL}
	for _, tn := range h.ClusteringTypes {
		ty := typeOf(t, tn)
		dt.clustering = append(dt.clustering, ty)
		sch.ClusteringFixed = append(sch.ClusteringFixed, ty.FixedLength())
	}
	cols := func(in []stats.Column) []rows.Column {
		var out []rows.Column
		for _, c := range in {
			ty := typeOf(t, c.Type)
			out = append(out, rows.Column{Name: string(c.Name), Type: c.Type.Class, Fixed: ty.FixedLength(), Complex: ty.IsMultiCell(), Counter: ty.IsCounter()})
		}
		rows.SortColumns(out)
		return out
	}
	sch.Static, sch.Regular = cols(h.StaticColumns), cols(h.RegularColumns)
	opts := reader.DataOptions{HasMaxCompressedLength: true, Verify: true}
	if ci := desc.Path(format.ComponentCompressionInfo); fileExists(ci) {
		opts.CompressionInfoPath = ci
	}
	data, err := reader.OpenData(dataPath, reader.Buffered, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer data.Close()
	d := rows.NewDecoder(data.Cursor(0), sch)
	var ph rows.PartitionHeader
	cut := NewBlockCutter(4096)
	for {
		err := d.ReadPartitionHeader(&ph)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		part := dataPartition{key: append([]byte{}, ph.Key...), pos: ph.Offset, deletion: ph.Deletion, end: int64(ph.Size)}
		cut.Reset()
		var bcBuf []byte
		for {
			u, err := d.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			part.end = u.Offset + u.Size - ph.Offset
			if bcBuf, err = cut.AddUnfiltered(bcBuf, dt.clustering, ph.Offset, u); err != nil {
				t.Fatal(err)
			}
			if u.Kind == rows.KindStaticRow {
				continue // not indexed: blocks start after the static row
			}
			du := dataUnfiltered{start: u.Offset - ph.Offset, end: u.Offset + u.Size - ph.Offset, openAfter: deletiontime.Live}
			var kind clustering.Kind
			var vals [][]byte
			if u.Kind == rows.KindMarker {
				du.marker = true
				kind, vals = u.Bound.Kind, u.Bound.Values
				switch {
				case kind.IsBoundary():
					du.openAfter = u.StartDeletion
				case kind.IsStart():
					du.openAfter = u.Deletion
				}
			} else {
				kind, vals = clustering.Clustering, u.Clustering
			}
			if du.bc, err = bytecomparable.AppendClustering(nil, dt.clustering, kind, vals); err != nil {
				t.Fatal(err)
			}
			part.unfiltereds = append(part.unfiltereds, du)
		}
		blocks, indexed, err := cut.Finish(part.end)
		if err != nil {
			t.Fatal(err)
		}
		part.blocks, part.indexed = append([]IndexBlock(nil), blocks...), indexed
		dt.partitions = append(dt.partitions, part)
	}
	return dt
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func btiTables(t *testing.T) []string {
	t.Helper()
	paths := fixtures.BTIDataFiles(t)
	if len(paths) == 0 {
		t.Skip("no BTI (da) fixtures under " + filepath.Join(fixtures.Dir(t), "cassandra"))
	}
	return paths
}
