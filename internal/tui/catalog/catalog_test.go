package catalog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

func open(t testing.TB, path string) *Table {
	t.Helper()
	tb, err := Open(path, reader.Mmap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tb.Close() })
	return tb
}

func fixture(t testing.TB, group, name, version string) string {
	return filepath.Join(fixtures.Table(t, group, name), version+"-1-big-Data.db")
}

// copyTable copies the sstable directory src into a temporary directory,
// passing each file's bytes through edit (when not nil), and returns it.
func copyTable(t *testing.T, src string, edit func(name string, b []byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			b = edit(e.Name(), b)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// truth is what a full ScanPartitions says about every partition.
func truth(t testing.TB, tb *Table) []sstable.PartitionSummary {
	var out []sstable.PartitionSummary
	err := tb.S.ScanPartitions(sstable.ScanOptions{}, func(p *sstable.PartitionSummary) error {
		c := *p
		c.Key = slices.Clone(p.Key)
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The Index.db listing gives every partition's key, offset and size
// exactly as a Data.db scan finds them, for every fixture.
func TestListMatchesDataScan(t *testing.T) {
	for _, p := range fixtures.DataFiles(t) {
		tb := open(t, p)
		l, err := tb.ListPartitions()
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		source := "Index.db"
		if strings.Contains(p, "-bti-") {
			source = "Data.db"
		}
		if l.Source != source || l.Warning != nil {
			t.Fatalf("%s: listed from %s (%v)", p, l.Source, l.Warning)
		}
		want := truth(t, tb)
		if l.Len() != len(want) {
			t.Fatalf("%s: %d listed, %d in Data.db", p, l.Len(), len(want))
		}
		for i, w := range want {
			if !bytes.Equal(l.Keys[i], w.Key) || l.Offsets[i] != w.Offset || l.Sizes[i] != w.Size {
				t.Fatalf("%s partition %d: listed key %x off %d size %d, Data.db key %x off %d size %d",
					p, i, l.Keys[i], l.Offsets[i], l.Sizes[i], w.Key, w.Offset, w.Size)
			}
		}
	}
}

func scanAll(t testing.TB, tb *Table, l *List) []ScanBatch {
	ch := make(chan ScanBatch, 1)
	go func() { defer close(ch); tb.Scan(context.Background(), l, ch) }()
	var bs []ScanBatch
	for b := range ch {
		l.Apply(b)
		bs = append(bs, b)
	}
	return bs
}

// The background scan fills in the same counts ScanPartitions reports.
func TestScanCounts(t *testing.T) {
	for _, p := range fixtures.DataFiles(t) {
		tb := open(t, p)
		l, err := tb.ListPartitions()
		if err != nil {
			t.Fatal(err)
		}
		bs := scanAll(t, tb, l)
		if last := bs[len(bs)-1]; !last.Finished || last.Done != tb.S.Data().Length() {
			t.Fatalf("%s: last batch %+v", p, last)
		}
		if l.Scanned != l.Len() {
			t.Fatalf("%s: %d of %d scanned", p, l.Scanned, l.Len())
		}
		for i, w := range truth(t, tb) {
			c := l.Counts[i]
			if c.Rows != w.Rows || c.Cells != w.Cells || c.Tombstones != w.Tombstones || c.Deleted != 0 || c.Failed {
				t.Fatalf("%s partition %d: counts %+v, ScanPartitions %+v", p, i, c, w)
			}
		}
	}
}

// A corrupt partition is reported and skipped; the scan counts the rest.
func TestScanSurvivesCorruptPartition(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91"), nil)
	data := filepath.Join(dir, "me-1-big-Data.db")
	good := open(t, data)
	l, err := good.ListPartitions()
	if err != nil {
		t.Fatal(err)
	}
	// Make partition 2's row size vint claim far more bytes than exist:
	// the byte after the header (2 + 4-byte int key + 12) is the row flags,
	// the next is the size.
	b, _ := os.ReadFile(data)
	b[l.Offsets[2]+18+1] = 0xfe
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.ResealCRC(t, data)
	tb := open(t, data)
	l, err = tb.ListPartitions()
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, bt := range scanAll(t, tb, l) {
		if bt.Err != nil {
			errs = append(errs, bt.Err)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("errors %v", errs)
	}
	var ce *corrupt.Error
	if !errors.As(errs[0], &ce) || ce.File != data || ce.Component != "Data.db" || ce.Offset < l.Offsets[2] || ce.Offset >= l.Offsets[3] {
		t.Fatalf("error %#v does not name the file and an offset in partition 2 (%d..%d)", errs[0], l.Offsets[2], l.Offsets[3])
	}
	for i, c := range l.Counts {
		if (i == 2) != c.Failed {
			t.Fatalf("partition %d: %+v", i, c)
		}
		if i != 2 && c.Rows != 1 {
			t.Fatalf("partition %d not counted after the corrupt one: %+v", i, c)
		}
	}
}

// Without Index.db the list comes from Data.db and says so.
func TestListWithoutIndex(t *testing.T) {
	src := fixtures.Table(t, "nc", "legacy_nc_simple")
	dir := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), "Index.db") {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		if strings.HasSuffix(e.Name(), "TOC.txt") {
			// sstable.Open refuses a component the TOC lists but the
			// directory lacks, so the TOC must not list Index.db either.
			b = []byte(strings.Replace(string(b), "Index.db\n", "", 1))
		}
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	tb := open(t, filepath.Join(dir, "nc-1-big-Data.db"))
	l, err := tb.ListPartitions()
	if err != nil {
		t.Fatal(err)
	}
	if l.Source != "Data.db" || l.Warning == nil || !strings.Contains(l.Warning.Error(), "Index.db") {
		t.Fatalf("source %s warning %v", l.Source, l.Warning)
	}
	if l.Len() != 5 || l.Sizes[0] != 33 {
		t.Fatalf("%d partitions, first size %d", l.Len(), l.Sizes[0])
	}
}

func TestOrderFilterSeek(t *testing.T) {
	tb := open(t, fixture(t, "me-collections", "utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91", "me"))
	l, err := tb.ListPartitions()
	if err != nil {
		t.Fatal(err)
	}
	// Sizes from the real file: keys 5,1,0,2,4,6,3 (Murmur3 order).
	bySize := Order(l.Len(), l.Values(BySize))
	var keys []string
	for _, i := range bySize {
		keys = append(keys, tb.FormatKey(l.Keys[i]))
	}
	if got := strings.Join(keys, ","); got != "3,2,6,4,1,5,0" {
		t.Fatalf("by size: %s (sizes %v)", got, l.Sizes)
	}
	for i := 1; i < len(bySize); i++ {
		if l.Sizes[bySize[i-1]] < l.Sizes[bySize[i]] {
			t.Fatal("not descending")
		}
	}
	if tok := Order(l.Len(), l.Values(ByToken)); !slices.Equal(tok, []int32{0, 1, 2, 3, 4, 5, 6}) {
		t.Fatalf("token order %v", tok)
	}
	texts := tb.KeyTexts(l)
	if f := Filter(bySize, texts, "6"); len(f) != 1 || tb.FormatKey(l.Keys[f[0]]) != "6" {
		t.Fatalf("filter 6: %v", f)
	}
	// Every token seeks to its own partition; past the last there is none.
	for i, k := range l.Keys {
		if got := tb.SeekToken(l, tb.S.Partitioner().Token(k)); got != i {
			t.Fatalf("seek token of partition %d: %d", i, got)
		}
	}
	last, _ := tb.S.Partitioner().ParseToken("9223372036854775807")
	if got := tb.SeekToken(l, last); got != l.Len() {
		t.Fatalf("seek past the end: %d", got)
	}
}

func TestHistogram(t *testing.T) {
	h := Histogram([]int64{33, 35, 35, 67194, 70000})
	if len(h) != 12 || h[0].Lo != 32 || h[0].Count != 3 || h[11].Lo != 65536 || h[11].Count != 2 {
		t.Fatalf("%+v", h)
	}
	total := 0
	for _, b := range h {
		total += b.Count
	}
	if total != 5 {
		t.Fatal(total)
	}
}

// A partition read page by page yields all 50 rows of a legacy clust
// partition, in clustering order, and stops at the end-of-partition byte.
func TestPartitionPages(t *testing.T) {
	tb := open(t, fixture(t, "nc", "legacy_nc_clust", "nc"))
	l, _ := tb.ListPartitions()
	p, err := tb.OpenPartition(l, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Header.Size != 15 || string(p.Header.Key) != "0" {
		t.Fatalf("header %+v", p.Header)
	}
	n := 0
	for !p.Done && p.Err == nil {
		n += p.More(7)
	}
	if p.Err != nil || n != 50 || len(p.Items) != 50 || p.End != l.Offsets[1] {
		t.Fatalf("rows %d err %v end %d", n, p.Err, p.End)
	}
	for i := 1; i < 50; i++ {
		if bytes.Compare(p.Items[i-1].Clustering[0], p.Items[i].Clustering[0]) >= 0 {
			t.Fatalf("row %d out of order", i)
		}
	}
}

// Bytes reads what Data.ReadAt reads and refuses offsets past the end.
func TestBytes(t *testing.T) {
	tb := open(t, fixture(t, "oa", "legacy_oa_simple", "oa"))
	b, err := tb.Bytes(0, 4)
	if err != nil || !bytes.Equal(b, []byte{0, 1, '0', 0x80}) {
		t.Fatalf("% x %v", b, err)
	}
	if b, err := tb.Bytes(tb.S.Data().Length()-2, 100); err != nil || len(b) != 2 {
		t.Fatalf("tail: %d %v", len(b), err)
	}
	var ce *corrupt.Error
	if _, err := tb.Bytes(tb.S.Data().Length()+1, 1); !errors.As(err, &ce) {
		t.Fatalf("past the end: %v", err)
	}
}

// The oa estimate counts 11 saved bytes per LIVE DeletionTime: the README
// of the fixtures pins nc_clust's Index.db at 157,553 bytes and oa's at
// 157,498, five partitions of 11 bytes.
func TestEstimateOA(t *testing.T) {
	tb := open(t, fixture(t, "nc", "legacy_nc_clust", "nc"))
	if !tb.NeedsConversion() {
		t.Fatal("nc needs conversion")
	}
	s, err := tb.EstimateOA(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.LiveHeaders != 5 || s.LiveIndexEntries != 5 || s.IndexBefore != 157553 || s.IndexAfter != 157498 {
		t.Fatalf("%+v", s)
	}
	if oa := open(t, fixture(t, "oa", "legacy_oa_clust", "oa")); oa.NeedsConversion() {
		t.Fatal("oa does not need conversion")
	}
}

// Close waits for a background reader before unmapping the files, and
// background work started afterwards is refused.
func TestCloseWaitsForReaders(t *testing.T) {
	tb := open(t, fixture(t, "nc", "legacy_nc_simple", "nc"))
	if !tb.hold() {
		t.Fatal("hold on an open table failed")
	}
	closed := make(chan struct{})
	go func() { tb.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while a reader held the table")
	case <-time.After(50 * time.Millisecond):
	}
	tb.release()
	<-closed
	if _, err := tb.ListPartitions(); !errors.Is(err, ErrClosed) {
		t.Fatalf("listing after Close: %v", err)
	}
}

// A corrupt compressed chunk fails the partitions it covers (the chunk
// CRC catches it) and the scan goes on with the next partition.
func TestScanSurvivesCorruptChunk(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"), func(name string, b []byte) []byte {
		if strings.HasSuffix(name, "Data.db") {
			b[len(b)/2] ^= 0xff
		}
		return b
	})
	data := filepath.Join(dir, "nc-1-big-Data.db")
	tb := open(t, data)
	l, err := tb.ListPartitions()
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for _, bt := range scanAll(t, tb, l) {
		if bt.Err != nil {
			errs = append(errs, bt.Err)
		}
	}
	failed := 0
	for i, c := range l.Counts {
		switch {
		case c.Failed:
			failed++
		case c.Rows != 50:
			t.Fatalf("partition %d: %+v", i, c)
		}
	}
	var ce *corrupt.Error
	if failed != 1 || len(errs) != 1 || !errors.As(errs[0], &ce) || ce.File != data {
		t.Fatalf("%d failed, errors %v", failed, errs)
	}
}

// A damaged Summary.db claiming billions of partitions must not size the
// list: the hint it gives is bounded by what Index.db can hold.
func TestListIgnoresHugeSummaryEstimate(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "nc", "legacy_nc_clust"), func(name string, b []byte) []byte {
		if strings.HasSuffix(name, "Summary.db") {
			// min index interval and full-sampling size: both big ints.
			binary.BigEndian.PutUint32(b[0:], 1<<30)
			binary.BigEndian.PutUint32(b[20:], 1<<30)
		}
		return b
	})
	tb := open(t, filepath.Join(dir, "nc-1-big-Data.db"))
	sum, err := tb.S.Summary()
	if err != nil {
		t.Fatalf("the patched Summary.db should still decode: %v", err)
	}
	if sum.EstimatedKeyCount() < 1<<40 {
		t.Fatalf("estimate %d: patch did not take", sum.EstimatedKeyCount())
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l, err := tb.ListPartitions()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 16<<20 {
		t.Fatalf("listing %d partitions of a %d-byte Index.db allocated %d bytes", l.Len(), tb.S.Index().Size(), got)
	}
	if want := truth(t, tb); l.Len() != len(want) {
		t.Fatalf("%d listed, %d in Data.db", l.Len(), len(want))
	}
}

// The explanation of an oa estimate never contradicts its total: every
// component whose size changes is named with its change, and those
// changes add up to the difference of all components. Statistics.db grows
// from nb (oa stores the key range, clustering bounds, the partition
// deletion marker and token-space coverage) and shrinks from nc_clust
// (oa drops the 1,201-byte legacy min/max clustering values).
//
// The realworld sstables (mc and me from Cassandra 3.x and ScyllaDB) are
// held to the same; those no estimate is made of (a damaged chunk) are
// skipped.
func TestEstimateOAExplainsEveryChange(t *testing.T) {
	sign := regexp.MustCompile(`(\S+) ([+−±])([\d,]+) B`)
	for _, p := range append(fixtures.DataFiles(t), realworldDataFiles(t)...) {
		realworld := strings.Contains(p, "/realworld/")
		tb := open(t, p)
		if !tb.NeedsConversion() {
			continue
		}
		s, err := tb.EstimateOA(nil)
		if err != nil {
			if realworld {
				continue
			}
			t.Fatalf("%s: %v", p, err)
		}
		lines := s.Explain()
		sum := int64(0)
		named := map[string]bool{}
		for _, l := range lines {
			for _, m := range sign.FindAllStringSubmatch(l, -1) {
				if m[1] == "(" || strings.HasPrefix(m[0], "(") {
					continue // "(−55 B uncompressed)"
				}
				n, _ := strconv.ParseInt(strings.ReplaceAll(m[3], ",", ""), 10, 64)
				if m[2] == "−" {
					n = -n
				}
				sum += n
				named[m[1]] = true
			}
		}
		for _, c := range s.Components {
			if c.Before != c.After && !named[c.Name] {
				t.Errorf("%s: %s changes %d -> %d but is not explained: %q", p, c.Name, c.Before, c.After, lines)
			}
		}
		if sum != s.After-s.Before {
			t.Errorf("%s: explained changes add up to %d, the estimate to %d: %q", p, sum, s.After-s.Before, lines)
		}
		switch {
		case strings.Contains(p, "legacy_nb_clust/"):
			want := "Statistics.db +55 B: oa adds the first and last key, clustering bounds, the partition-deletion marker and token-space coverage, drops the legacy min/max clustering values"
			if !slices.Contains(lines, want) {
				t.Errorf("%s: %q lacks %q", p, lines, want)
			}
		case strings.Contains(p, "legacy_nc_clust/"):
			if !slices.Contains(lines, "Statistics.db −2,406 B: oa adds token-space coverage, drops the legacy min/max clustering values") {
				t.Errorf("%s: %q", p, lines)
			}
		case strings.Contains(p, "legacy_nc_simple/"):
			// No entry has a promoted index, so no DeletionTime of Index.db
			// shrinks: the last partition's position, 138, falls to 94 and
			// its vint from 2 bytes to 1.
			want := []string{
				"Data.db −9 B (−55 B uncompressed): DeletionTimes of 5 partition headers take 1 byte instead of 12",
				"Index.db −1 B: the Data.db positions it stores are smaller by the shorter partition headers, so their vints are shorter (−1 B)",
			}
			if !slices.Equal(lines, want) {
				t.Errorf("%s: %q, want %q", p, lines, want)
			}
		}
	}
}

// realworldDataFiles is every *-Data.db under the realworld fixtures.
func realworldDataFiles(t *testing.T) []string {
	var out []string
	err := filepath.WalkDir(filepath.Join(fixtures.Dir(t), "realworld"), func(p string, e os.DirEntry, err error) error {
		if err == nil && !e.IsDir() && strings.HasSuffix(p, "-Data.db") {
			out = append(out, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// CompressionInfo.db grows by 4 bytes from mc to oa because na and later
// store the max compressed length after the chunk length: the chunk count
// is 1 before and after, as the converted files themselves show. The
// explanation says so, and says the same of every mc sstable whose chunk
// count does not change; where the count does change (a ScyllaDB sstable
// that ends with an empty chunk, in CompressionInfo.db or CRC.db) it says
// why from the counts.
func TestEstimateOAExplainsChunkMetadata(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "deflate", "partition_key_with_values_of_different_types")
	src := filepath.Join(dir, "mc-1-big-Data.db")
	out := t.TempDir()
	if _, err := convert.Convert(src, out, convert.Options{To: oa.Version}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(dir, "mc-1-big-CompressionInfo.db"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(filepath.Join(out, "oa-1-big-CompressionInfo.db"))
	if err != nil {
		t.Fatal(err)
	}
	ciBefore, err := reader.DecodeCompressionInfo(before, false)
	if err != nil {
		t.Fatal(err)
	}
	ciAfter, err := reader.DecodeCompressionInfo(after, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ciBefore.ChunkOffsets) != 1 || len(ciAfter.ChunkOffsets) != 1 || len(after)-len(before) != 4 {
		t.Fatalf("fixture changed: %d -> %d chunks, %d -> %d bytes", len(ciBefore.ChunkOffsets), len(ciAfter.ChunkOffsets), len(before), len(after))
	}
	// The 4 bytes are the int after the chunk length; the rest is equal
	// but for Data.db's length, which is shorter by the DeletionTimes.
	at := 2 + len(ciBefore.Compressor) + 4 + 4
	if got := binary.BigEndian.Uint32(after[at:]); got != 1<<31-1 {
		t.Fatalf("max compressed length %d", got)
	}
	if !bytes.Equal(before[:at], after[:at]) {
		t.Fatalf("headers differ: % x / % x", before[:at], after[:at])
	}

	s, err := open(t, src).EstimateOA(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := "CompressionInfo.db +4 B: oa stores the max compressed length (a 4-byte int), which mc does not; Data.db keeps its 1 chunk"
	if lines := s.Explain(); !slices.Contains(lines, want) {
		t.Fatalf("%q lacks %q", lines, want)
	}

	for _, tc := range []struct{ table, want string }{
		{"summary_test", "CompressionInfo.db −4 B: oa stores the max compressed length (a 4-byte int), which mc does not; the source holds 2 offsets for 3,247 B of data, which fill 1 chunk; oa's holds 1, an 8-byte offset each"},
		{"wrong_counter_shard_order", "CRC.db −4 B: the source holds 2 checksums for 4,471 B of data, which fill 1 chunk; oa's holds 1, a 4-byte CRC32 each"},
	} {
		m, _ := filepath.Glob(filepath.Join(fixtures.Dir(t), "realworld", "scylla", tc.table, "mc-*-big-Data.db"))
		if len(m) != 1 {
			t.Fatalf("%s: %v", tc.table, m)
		}
		s, err := open(t, m[0]).EstimateOA(nil)
		if err != nil {
			t.Fatal(err)
		}
		if lines := s.Explain(); !slices.Contains(lines, tc.want) {
			t.Errorf("%s: %q lacks %q", tc.table, lines, tc.want)
		}
	}
	for _, p := range realworldDataFiles(t) {
		tb := open(t, p)
		s, err := tb.EstimateOA(nil)
		if err != nil {
			continue
		}
		for _, l := range s.Explain() {
			if strings.Contains(l, "more chunks") || strings.Contains(l, "fewer chunks") {
				t.Errorf("%s: %q", p, l)
			}
		}
	}
}

// A damaged Index.db key lists a partition under a key Data.db does not
// hold there (issue 17: dump -k printed another partition). The partition
// view refuses to show its rows under that key, naming Index.db, and the
// background scan marks it failed with the same error.
func TestListedKeyIsCheckedAgainstData(t *testing.T) {
	dir := copyTable(t, fixtures.Table(t, "me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"), func(name string, b []byte) []byte {
		if strings.HasSuffix(name, "Index.db") {
			b[5] = 2 // the first entry's key, int 1, now reads 2
		}
		return b
	})
	tb := open(t, filepath.Join(dir, "me-1-big-Data.db"))
	l, err := tb.ListPartitions()
	if err != nil || l.Source != "Index.db" || l.Len() != 2 {
		t.Fatalf("list from %s, %d partitions: %v", l.Source, l.Len(), err)
	}
	_, err = tb.OpenPartition(l, 0)
	var ce *corrupt.Error
	if !errors.As(err, &ce) || ce.Component != "Index.db" || !strings.Contains(err.Error(), "expected partition 2 at Data.db byte 0: Data.db holds partition 1 there") {
		t.Fatalf("opening the mislisted partition: %v", err)
	}
	if p, err := tb.OpenPartition(l, 1); err != nil || string(p.Header.Key) != string(l.Keys[1]) {
		t.Fatalf("opening the listed partition 0: %v", err)
	}
	var errs []error
	for _, b := range scanAll(t, tb, l) {
		if b.Err != nil {
			errs = append(errs, b.Err)
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "Data.db holds partition 1 there") || !l.Counts[0].Failed || l.Counts[1].Failed {
		t.Fatalf("scan errors %v, counts %+v", errs, l.Counts)
	}
}
