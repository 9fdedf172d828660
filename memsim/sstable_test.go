package memsim

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/dump"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	idx "github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/generate"
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
	d := dump.NewDumper(&buf, s, dump.Options{})
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

// The key cache holds each partition's RowIndexEntry as read from
// Index.db. legacy_nc_clust's five partitions all have a promoted index
// larger than column_index_cache_size (2 KiB), so each is a
// ShallowIndexedEntry: KeyCacheKey 32 + byte[key] + 64 on heap (JDK 11, 4.1
// and 5.0 alike). Off heap each is OHC's 64-byte header, the key layout
// (16 + 2 + 4 + key) and the Index.db entry after its key.
func TestKeyCacheShallowIndexed(t *testing.T) {
	f := fixtures.Table(t, "nc", "legacy_nc_clust") + "/nc-1-big-Data.db"
	s, err := sstable.Open(f, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var on, off, n int64
	sc := idx.NewScanner(s.Index(), s.IndexCodec(), 0, false)
	for sc.Next() {
		e := sc.Entry()
		k := int64(len(e.Key))
		if e.PromotedSize <= 2048 {
			t.Fatalf("%x: promoted index of %d bytes; the test expects shallow entries", e.Key, e.PromotedSize)
		}
		on += 32 + (16+k+7)/8*8 + 64
		off += 64 + 16 + 2 + 4 + k + (sc.Pos() - sc.EntryPos() - 2 - k)
		n++
	}
	if sc.Err() != nil {
		t.Fatal(sc.Err())
	}
	for _, ver := range []string{"4.1", "5.0"} {
		kc, err := KeyCacheFootprint([]string{f}, 11, ver)
		if err != nil {
			t.Fatal(err)
		}
		if n != 5 || kc.Entries != n || kc.Indexed != 5 || kc.IndexedOnHeap != 0 || kc.OnHeap != on || kc.OffHeap != off {
			t.Fatalf("%s: got %+v, want 5 shallow indexed entries, %d on heap, %d off heap", ver, kc, on, off)
		}
	}
	if _, err := KeyCacheFootprint([]string{"/nonexistent/nb-1-big-Data.db"}, 11, "4.1"); err == nil {
		t.Error("missing sstable: no error")
	}
}

// Partitions whose promoted index fits column_index_cache_size are held
// with their IndexInfos: IndexedEntry (48 bytes in 4.1, 56 with 5.0's
// Version reference) + IndexInfo[] + per IndexInfo 40 + its first and last
// name (ArrayClustering 24 + byte[][] + each byte[]) + 24 per end-open
// marker. The sstable is generated with 512-byte index blocks so that its
// partitions get 2 to 10 blocks.
func TestKeyCacheIndexedEntries(t *testing.T) {
	p, _ := workload.Builtin("wide-partitions")
	p.Partitions = 20
	p.Ops = 600
	res, err := generate.Generate(p, t.TempDir(), generate.Options{ColumnIndexSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	byteArray := func(n int) int64 { return (16 + int64(n) + 7) / 8 * 8 }
	refArray := func(n int) int64 { return (16 + 4*int64(n) + 7) / 8 * 8 }
	for _, ver := range []string{"4.1", "5.0"} {
		indexedEntry := int64(48)
		if ver == "5.0" {
			indexedEntry = 56
		}
		var on, withInfos int64
		sc := idx.NewScanner(s.Index(), s.IndexCodec(), 0, true)
		for sc.Next() {
			e := sc.Entry()
			on += 32 + byteArray(len(e.Key))
			switch {
			case !e.Indexed():
				on += 24
			case e.PromotedSize > 2048:
				on += 64
			default:
				withInfos++
				on += indexedEntry + refArray(len(e.Blocks))
				for _, b := range e.Blocks {
					on += 40
					for _, name := range []clustering.Prefix{b.FirstName, b.LastName} {
						if name.Kind != clustering.Clustering {
							t.Fatalf("block name of kind %v: rows only here", name.Kind)
						}
						on += 24 + refArray(len(name.Values))
						for _, v := range name.Values {
							on += byteArray(len(v))
						}
					}
					if b.EndOpenMarker != nil {
						on += 24
					}
				}
			}
		}
		if sc.Err() != nil {
			t.Fatal(sc.Err())
		}
		kc, err := KeyCacheFootprint([]string{res.DataPath}, 11, ver)
		if err != nil {
			t.Fatal(err)
		}
		if withInfos == 0 || kc.IndexedOnHeap != withInfos || kc.OnHeap != on {
			t.Errorf("%s: got %+v; want %d entries held with their IndexInfos, %d bytes on heap", ver, kc, withInfos, on)
		}
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
