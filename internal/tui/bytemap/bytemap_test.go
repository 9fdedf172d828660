package bytemap_test

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/tui/bytemap"
	"github.com/sstabletool/sstabletool/reader"
	"github.com/sstabletool/sstabletool/workload"
)

func open(t testing.TB, path string) *sstable.SSTable {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{Access: reader.Mmap})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func labeler(s *sstable.SSTable) *bytemap.Labeler {
	return &bytemap.Labeler{Schema: s.Schema(), KeyType: s.KeyType(), ClusteringTypes: s.ClusteringTypes(),
		StaticTypes: s.StaticTypes(), RegularTypes: s.RegularTypes(), File: s.Path("Data.db")}
}

func dataBytes(t testing.TB, s *sstable.SSTable) []byte {
	t.Helper()
	b := make([]byte, s.Data().Length())
	if _, err := s.Data().ReadAt(b, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return b
}

// Every byte of every fixture's Data.db belongs to exactly one span, in
// order, and the partition boundaries fall where ScanPartitions puts them.
func TestRegionTilesEveryFixture(t *testing.T) {
	for _, p := range fixtures.DataFiles(t) {
		s := open(t, p)
		b := dataBytes(t, s)
		spans, err := labeler(s).Region(b, 0)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var pos int64
		for i, sp := range spans {
			if sp.Off != pos || sp.Len <= 0 {
				t.Fatalf("%s: span %d %+v, expected it at %d", p, i, sp, pos)
			}
			if sp.Class == bytemap.Unlabelled {
				t.Fatalf("%s: unlabelled span %+v in a whole Data.db", p, sp)
			}
			pos = sp.End()
		}
		if pos != int64(len(b)) {
			t.Fatalf("%s: spans end at %d, Data.db is %d bytes", p, pos, len(b))
		}
		ends := 0
		for _, sp := range spans {
			if sp.Class == bytemap.EndOfPartition {
				ends++
				if b[sp.Off] != 0x01 {
					t.Fatalf("%s: end of partition at %d is 0x%02x", p, sp.Off, b[sp.Off])
				}
			}
		}
		var parts int
		s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(*sstable.PartitionSummary) error { parts++; return nil })
		if ends != parts {
			t.Fatalf("%s: %d end-of-partition spans, %d partitions", p, ends, parts)
		}
	}
}

// checkTiles asserts that spans cover b (at base) exactly, in order.
func checkTiles(t *testing.T, name string, spans []bytemap.Span, base int64, n int) map[bytemap.Class]int {
	t.Helper()
	classes := map[bytemap.Class]int{}
	pos := base
	for i, sp := range spans {
		if sp.Off != pos || sp.Len <= 0 || sp.Label == "" || sp.Short == "" {
			t.Fatalf("%s: span %d %+v, expected one at %d", name, i, sp, pos)
		}
		classes[sp.Class]++
		pos = sp.End()
	}
	if pos != base+int64(n) {
		t.Fatalf("%s: spans end at %d, expected %d", name, pos, base+int64(n))
	}
	return classes
}

// The generated demo table has what the fixtures lack: static rows, sets,
// TTLs, partition, row, cell and range deletions. Written by package
// generate in oa and in nc, every byte of it is labelled, in order.
func TestRegionTilesGeneratedDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("writes two demo sstables")
	}
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 300
	for _, v := range []string{"oa", "nc"} {
		res, err := generate.Generate(p, t.TempDir(), generate.Options{Version: format.MustVersion(v)})
		if err != nil {
			t.Fatal(err)
		}
		s := open(t, res.DataPath)
		b := dataBytes(t, s)
		spans, err := labeler(s).Region(b, 0)
		if err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		classes := checkTiles(t, v, spans, 0, len(b))
		for _, c := range []bytemap.Class{bytemap.Deletion, bytemap.Liveness, bytemap.CellPath, bytemap.Columns} {
			if classes[c] == 0 {
				t.Errorf("%s: no %s field in the demo table", v, c)
			}
		}
		var deleted, markers int
		for _, sp := range spans {
			if sp.Class == bytemap.PartitionDeletion && !strings.Contains(sp.Label, "LIVE") {
				deleted++
				if sp.Len != 12 {
					t.Fatalf("%s: a deleted partition's DeletionTime is %d bytes", v, sp.Len)
				}
			}
			if strings.HasPrefix(sp.Label, "marker flags") {
				markers++
			}
		}
		if deleted == 0 || markers == 0 {
			t.Errorf("%s: %d partition deletions, %d markers labelled", v, deleted, markers)
		}
	}
}

// The partition DeletionTime is 12 bytes in nc and 1 byte (0x80) in oa.
func TestPartitionDeletionTimeWidth(t *testing.T) {
	for _, c := range []struct {
		group, table string
		width        int
		bytes        []byte
		label        string
	}{
		{"nc", "legacy_nc_clust", 12, []byte{0x7f, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0}, "12 bytes, legacy"},
		{"oa", "legacy_oa_clust", 1, []byte{0x80}, "1 byte, compact"},
	} {
		s := open(t, fixtures.Table(t, c.group, c.table)+"/"+c.group+"-1-big-Data.db")
		b := dataBytes(t, s)
		dec := s.Decoder(0)
		var h rows.PartitionHeader
		if err := dec.ReadPartitionHeader(&h); err != nil {
			t.Fatal(err)
		}
		spans, err := labeler(s).Header(b, 0, &h)
		if err != nil {
			t.Fatal(err)
		}
		if len(spans) != 3 {
			t.Fatalf("%s: %d header spans: %+v", c.table, len(spans), spans)
		}
		dt := spans[2]
		if dt.Class != bytemap.PartitionDeletion || dt.Len != c.width || dt.Off != 3 {
			t.Fatalf("%s: DeletionTime span %+v", c.table, dt)
		}
		if !bytes.Equal(b[dt.Off:dt.End()], c.bytes) {
			t.Fatalf("%s: DeletionTime bytes % x", c.table, b[dt.Off:dt.End()])
		}
		if !strings.Contains(dt.Label, c.label) || !strings.Contains(dt.Label, "LIVE") {
			t.Fatalf("%s: label %q", c.table, dt.Label)
		}
		if spans[1].Label != `partition key "0"` {
			t.Fatalf("key label %q", spans[1].Label)
		}
	}
}

// A row labelled on its own gives the same spans as within its partition.
func TestUnfilteredMatchesRegion(t *testing.T) {
	s := open(t, fixtures.Table(t, "me-collections", "table_with_list-90354c80a1c711eeae8c6d2c86545d91")+"/me-1-big-Data.db")
	b := dataBytes(t, s)
	l := labeler(s)
	all, err := l.Region(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	dec := s.Decoder(0)
	var h rows.PartitionHeader
	if err := dec.ReadPartitionHeader(&h); err != nil {
		t.Fatal(err)
	}
	u, err := dec.Next(false)
	if err != nil || u == nil {
		t.Fatal(u, err)
	}
	row := make([]byte, u.Size)
	if _, err := s.Data().ReadAt(row, u.Offset); err != nil {
		t.Fatal(err)
	}
	spans, err := l.Unfiltered(row, u.Offset, u)
	if err != nil {
		t.Fatal(err)
	}
	first := bytemap.Find(all, u.Offset)
	if first < 0 {
		t.Fatal("row not in region spans")
	}
	for i, sp := range spans {
		if all[first+i] != sp {
			t.Fatalf("span %d: %+v vs region %+v", i, sp, all[first+i])
		}
	}
	var paths, values int
	for _, sp := range spans {
		switch sp.Class {
		case bytemap.CellPath:
			paths++
		case bytemap.CellValue:
			values++
		}
	}
	// list<int> with three elements: three timeuuid paths and three values.
	if paths != 3 || values != 3 {
		t.Fatalf("paths %d values %d: %+v", paths, values, spans)
	}
}

// Cutting a region inside a partition marks the rest instead of failing.
func TestRegionCutShort(t *testing.T) {
	s := open(t, fixtures.Table(t, "nc", "legacy_nc_clust")+"/nc-1-big-Data.db")
	b := dataBytes(t, s)[:5000]
	spans, err := labeler(s).Region(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := spans[len(spans)-1]
	if last.Class != bytemap.Unlabelled || last.End() != 5000 {
		t.Fatalf("last span %+v", last)
	}
}

func FuzzRegion(f *testing.F) {
	root := fixtures.Root()
	if root == "" {
		f.Skip("fixtures absent")
	}
	s, err := sstable.Open(root+"/cassandra/nc/legacy_nc_clust/nc-1-big-Data.db", sstable.Options{Access: reader.Mmap})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	b := make([]byte, 3000)
	s.Data().ReadAt(b, 0)
	f.Add(b)
	f.Add(b[:20])
	l := labeler(s)
	f.Fuzz(func(t *testing.T, in []byte) {
		spans, _ := l.Region(in, 100)
		pos := int64(100)
		for _, sp := range spans {
			if sp.Off < pos || sp.Len <= 0 || sp.End() > 100+int64(len(in)) {
				t.Fatalf("span %+v outside the input or overlapping (at %d)", sp, pos)
			}
			pos = sp.End()
		}
	})
}

// ScyllaDB writes a shadowable row deletion after the regular one
// (extended flag 0x80), which Cassandra's format lacks. The labels come
// from the decoder's own parse, so the row is labelled whole, its
// shadowable deletion as two delta vints, instead of refused.
func TestScyllaShadowableDeletionLabelled(t *testing.T) {
	p := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "uncompressed", "write_shadowable_deletion", "mc-1-big-Data.db")
	s := open(t, p)
	b := dataBytes(t, s)
	spans, err := labeler(s).Region(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	checkTiles(t, p, spans, 0, len(b))
	var shadowable []bytemap.Span
	for _, sp := range spans {
		if strings.HasPrefix(sp.Label, "ScyllaDB shadowable row deletion") {
			shadowable = append(shadowable, sp)
		}
	}
	if len(shadowable) != 2 || shadowable[0].Class != bytemap.Deletion ||
		!strings.Contains(shadowable[0].Label, "markedForDeleteAt") || !strings.Contains(shadowable[1].Label, "localDeletionTime") {
		t.Fatalf("shadowable deletion spans %+v", shadowable)
	}
	ext := -1
	for i, sp := range spans {
		if strings.HasPrefix(sp.Label, "extended flags 0x80") {
			ext = i
		}
	}
	if ext < 1 || !strings.HasPrefix(spans[ext-1].Label, "row flags") || spans[ext].Class != bytemap.Flags {
		t.Fatalf("no row with extended flags 0x80: %+v", spans)
	}
}
