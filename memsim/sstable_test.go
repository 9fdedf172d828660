package memsim

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/export"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/workload"
)

// memsimFixtures names the big-format fixtures memsim's tests replay
// (nb, nc, oa and the collections of me-collections); other groups under
// the shared testdata (BTI, real-world dumps) are for other packages.
func memsimFixtures(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, g := range []string{"nb", "nc", "oa", "me-collections"} {
		m, err := filepath.Glob(filepath.Join(fixtures.Dir(t), "cassandra", g, "*", "*-Data.db"))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Skip("no nb/nc/oa/me-collections fixtures")
	}
	return out
}

// dumpCounts runs the dump command's exporter over one sstable and counts
// what it shows: partitions, rows (static included), cells, and complex
// column deletions (which sstabledump lists among the cells, without a
// path).
func dumpCounts(t *testing.T, path string) (partitions, rowCount, cells, complexDels int) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var buf bytes.Buffer
	d := export.NewDumper(&buf, s, export.Options{})
	d.Begin()
	if err := s.EachPartition(d.Partition); err != nil {
		t.Fatal(err)
	}
	if err := d.End(); err != nil {
		t.Fatal(err)
	}
	var doc []struct {
		Rows []struct {
			Type  string                   `json:"type"`
			Cells []map[string]interface{} `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%s: dump output is not JSON: %v", path, err)
	}
	for _, p := range doc {
		partitions++
		for _, r := range p.Rows {
			if r.Type != "row" && r.Type != "static_block" {
				continue
			}
			rowCount++
			for _, c := range r.Cells {
				_, hasPath := c["path"]
				di, _ := c["deletion_info"].(map[string]interface{})
				if _, complexDel := di["marked_deleted"]; complexDel && !hasPath {
					complexDels++
					continue
				}
				cells++
			}
		}
	}
	return
}

func TestFromSSTableReplaysWhatDumpShows(t *testing.T) {
	totalComplex := 0
	for _, f := range memsimFixtures(t) {
		partitions, rowCount, cells, complexDels := dumpCounts(t, f)
		totalComplex += complexDels
		open, part, err := SSTableSource([]string{f})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, k := range Kinds {
			src, _, _ := open()
			m, err := NewMemtable(Config{Kind: k, Partitioner: part, Shards: 2}, src.Schema())
			if err != nil {
				t.Fatal(err)
			}
			var op workload.Op
			writes := 0
			for {
				ok, err := src.Next(&op)
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !ok {
					break
				}
				if op.Deletion == workload.DelNone || op.Deletion == workload.DelRow {
					writes++
				}
				if err := m.Apply(&op); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
			}
			if int(m.Partitions()) != partitions || writes != rowCount || int(m.Account().Cells) != cells ||
				int(m.st.complexDeletions) != complexDels {
				t.Errorf("%s %s: replayed %d partitions, %d rows, %d cells, %d complex deletions; dump shows %d, %d, %d, %d",
					f, k, m.Partitions(), writes, m.Account().Cells, m.st.complexDeletions, partitions, rowCount, cells, complexDels)
			}
			if cells > 0 && m.Account().On[HeapBuffers] <= 0 {
				t.Errorf("%s: nothing accounted", f)
			}
		}
	}
	if totalComplex == 0 {
		t.Error("no fixture holds a complex deletion: the test checks nothing about them")
	}
}

// Every partition of a real sstable costs KeyCacheKey 32 + byte[n] +
// RowIndexEntry 24 on heap, and 64 + 16 + 2 + 4 + n + vint(position) + 1
// off heap; the test recounts the first fixture by hand.
func TestKeyCacheFootprint(t *testing.T) {
	files := memsimFixtures(t)
	kc, err := KeyCacheFootprint(files[:1], 11, "4.1")
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(files[0], sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var on, off, n int64
	dec := s.Decoder(0)
	var h rows.PartitionHeader
	for dec.ReadPartitionHeader(&h) == nil {
		k := int64(len(h.Key))
		on += 32 + (16+k+7)/8*8 + 24
		pos := int64(1)
		if h.Offset >= 128 {
			pos = 2
		}
		if h.Offset >= 1<<14 {
			t.Skip("fixture larger than this hand count handles")
		}
		off += 64 + 16 + 2 + 4 + k + pos + 1
		n++
		if err := dec.SkipRest(); err != nil {
			t.Fatal(err)
		}
	}
	if n == 0 || kc.Entries != n || kc.OnHeap != on || kc.OffHeap != off {
		t.Fatalf("%s: got %+v, want %d entries, %d on heap, %d off heap", files[0], kc, n, on, off)
	}
	if _, err := KeyCacheFootprint([]string{"/nonexistent/nb-1-big-Data.db"}, 11, "4.1"); err == nil {
		t.Error("missing sstable: no error")
	}
}

// breakAfter passes n ops of an sstable source through, then a bad one.
type breakAfter struct {
	*sstableSource
	n int
}

func (b *breakAfter) Next(op *workload.Op) (bool, error) {
	ok, err := b.sstableSource.Next(op)
	if b.n--; b.n < 0 {
		op.Key = op.Key[:0]
	}
	return ok, err
}

// A replay that stops on a bad op closes the sstable it was reading.
func TestReplayClosesSSTableOnError(t *testing.T) {
	f := fixtures.Table(t, "nc", "legacy_nc_clust") + "/nc-1-big-Data.db"
	open, part, err := SSTableSource([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	var inner *sstableSource
	_, err = Replay(func() (workload.Source, int64, error) {
		src, n, err := open()
		inner = src.(*sstableSource)
		return &breakAfter{sstableSource: inner, n: 3}, n, err
	}, Options{Kinds: []Kind{SkipList}, Partitioner: part})
	if err == nil || !strings.Contains(err.Error(), "empty partition key") {
		t.Fatalf("err %v, want the bad op reported", err)
	}
	if inner.s != nil {
		t.Fatal("the sstable being replayed is still open")
	}
}
