package generate

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
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/verify"
	"github.com/sstabletool/sstabletool/workload"
)

func scan(t *testing.T, path string) (parts, rowsN, markers, tombstones, expiring int64) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	d := s.Decoder(0)
	var h rows.PartitionHeader
	for {
		err := d.ReadPartitionHeader(&h)
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		parts++
		if !h.Deletion.IsLive() {
			tombstones++
		}
		for {
			u, err := d.Next(false)
			if err != nil {
				t.Fatal(err)
			}
			if u == nil {
				break
			}
			switch u.Kind {
			case rows.KindMarker:
				markers++
			case rows.KindRow:
				rowsN++
			}
			tombstones += int64(u.Tombstones())
			if u.Liveness.Expiring() {
				expiring++
			}
		}
	}
}

func TestDemoVerifiesAndIsDeterministic(t *testing.T) {
	a, err := Demo(filepath.Join(t.TempDir(), "a"))
	if err != nil {
		t.Fatal(err)
	}
	rep := verify.SSTable(a, sstable.Options{}, nil)
	if !rep.OK() {
		t.Fatalf("demo does not verify: %v", rep.Problems)
	}
	parts, rowsN, markers, tombs, exp := scan(t, a)
	fi, _ := os.Stat(a)
	t.Logf("demo: %d partitions, %d rows, %d markers, %d tombstones, %d expiring rows, Data.db %d bytes", parts, rowsN, markers, tombs, exp, fi.Size())
	if parts != 1500 || markers == 0 || tombs == 0 || exp == 0 {
		t.Errorf("demo lacks variety: %d partitions, %d markers, %d tombstones, %d expiring", parts, markers, tombs, exp)
	}
	if fi.Size() < 1<<20 || fi.Size() > 16<<20 {
		t.Errorf("demo Data.db is %d bytes; want a few MB", fi.Size())
	}
	// Some partitions are indexed (big), most are not.
	s, _ := sstable.Open(a, sstable.Options{})
	defer s.Close()
	big := 0
	s.ScanPartitions(sstable.ScanOptions{SkipCells: true}, func(p *sstable.PartitionSummary) error {
		if p.Size > 64<<10 {
			big++
		}
		return nil
	})
	if big < 2 {
		t.Errorf("%d partitions above 64 KiB; want a couple", big)
	}
	b, err := Demo(filepath.Join(t.TempDir(), "b"))
	if err != nil {
		t.Fatal(err)
	}
	da, _, _ := format.ParseDescriptor(a)
	db, _, _ := format.ParseDescriptor(b)
	for _, c := range []string{format.ComponentData, format.ComponentIndex, format.ComponentStatistics, format.ComponentSummary, format.ComponentFilter} {
		x, _ := os.ReadFile(da.Path(c))
		y, _ := os.ReadFile(db.Path(c))
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs with the same seed", c)
		}
	}
}

// Every legacy and oa format, compressed or not, from the built-in
// profiles, verifies.
func TestGenerateFormats(t *testing.T) {
	for _, name := range []string{"deletes", "wide-partitions", "time-series-ttl", "small-partitions"} {
		for _, v := range []string{"nb", "nc", "oa"} {
			p, _ := workload.Builtin(name)
			p.Partitions = 200
			if name == "wide-partitions" {
				p.Partitions = 10
			}
			res, err := Generate(p, filepath.Join(t.TempDir(), v), Options{Version: format.MustVersion(v), Uncompressed: v == "nb", Seed: 7})
			if err != nil {
				t.Fatalf("%s %s: %v", name, v, err)
			}
			if rep := verify.SSTable(res.DataPath, sstable.Options{}, nil); !rep.OK() {
				t.Fatalf("%s %s: %v", name, v, rep.Problems)
			}
			parts, rowsN, _, _, _ := scan(t, res.DataPath)
			if parts != res.Partitions || rowsN != res.Rows {
				t.Errorf("%s %s: wrote %d/%d, read %d/%d", name, v, res.Partitions, res.Rows, parts, rowsN)
			}
			if s, err := sstable.Open(res.DataPath, sstable.Options{}); err != nil {
				t.Fatal(err)
			} else {
				if n := s.Data().Length(); n != res.DataBytes || n == 0 {
					t.Errorf("%s %s: Result.DataBytes %d, Data.db is %d bytes uncompressed", name, v, res.DataBytes, n)
				}
				s.Close()
			}
		}
	}
}

// da (BTI) tables of every built-in profile verify (verify rebuilds both
// tries from Data.db and compares them byte for byte); Data.db,
// Statistics.db and Filter.db are the oa table's of the same seed; the row
// index has blocks of 16 KiB by default, narrower with ColumnIndexSize.
func TestGenerateDA(t *testing.T) {
	da, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deletes", "wide-partitions", "time-series-ttl", "small-partitions"} {
		p, _ := workload.Builtin(name)
		p.Partitions = 200
		if name == "wide-partitions" {
			p.Partitions = 10
		}
		tmp := t.TempDir()
		res, err := Generate(p, filepath.Join(tmp, "da"), Options{Version: da, Seed: 7})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if rep := verify.SSTable(res.DataPath, sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("%s: %v", name, rep.Problems)
		}
		oa, err := Generate(p, filepath.Join(tmp, "oa"), Options{Version: format.MustVersion("oa"), Seed: 7})
		if err != nil {
			t.Fatal(err)
		}
		dd, _, _ := format.ParseDescriptor(res.DataPath)
		od, _, _ := format.ParseDescriptor(oa.DataPath)
		for _, c := range []string{format.ComponentData, format.ComponentStatistics, format.ComponentFilter, format.ComponentCompressionInfo} {
			x, _ := os.ReadFile(dd.Path(c))
			y, _ := os.ReadFile(od.Path(c))
			if !bytes.Equal(x, y) {
				t.Errorf("%s: da %s differs from oa's", name, c)
			}
		}
		for _, c := range []string{format.ComponentIndex, format.ComponentSummary} {
			if _, err := os.Stat(dd.Path(c)); err == nil {
				t.Errorf("%s: da table has %s", name, c)
			}
		}
		if name == "wide-partitions" {
			small, err := Generate(p, filepath.Join(tmp, "da4k"), Options{Version: da, Seed: 7, ColumnIndexSize: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			if rep := verify.SSTable(small.DataPath, sstable.Options{}, nil); !rep.OK() {
				t.Fatal(rep.Problems)
			}
			at16, at4 := rowIndexBlocks(t, res.DataPath), rowIndexBlocks(t, small.DataPath)
			if at16 == 0 || at4 < 3*at16 {
				t.Errorf("%d row index blocks at 16 KiB, %d at 4 KiB: expected about four times as many", at16, at4)
			}
		}
	}
}

// rowIndexBlocks sums the block counts of a da table's Rows.db entries.
func rowIndexBlocks(t *testing.T, dataPath string) int {
	s, err := sstable.Open(dataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	it := s.Partitions().Iter()
	for ok := it.First(); ok; ok = it.Next() {
		if e := it.Entry(); e.InRowIndex() {
			re, err := s.Rows().Entry(e.RowIndexPos())
			if err != nil {
				t.Fatal(err)
			}
			n += re.BlockCount
		}
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// A TWCS-like history: each window's sstable holds timestamps of its
// window only, every cell expiring TTL after it was written; the late
// sstable's rows carry window L's timestamps and never expire.
func TestWindowsHistory(t *testing.T) {
	p, err := workload.ParseProfile([]byte(HistoryProfile), "history")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 40
	dir := t.TempDir()
	const window, ttl = 3600, 7200
	res, err := GenerateHistory(p, dir, HistoryOptions{SSTables: 4, Window: window, TTL: ttl, LateWindow: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DataPaths) != 5 {
		t.Fatalf("%d sstables", len(res.DataPaths))
	}
	w0 := p.TimestampStart / 1_000_000
	if res.Now != w0+4*window {
		t.Fatalf("now %d, want %d", res.Now, w0+4*window)
	}
	for k, path := range res.DataPaths {
		if rep := verify.SSTable(path, sstable.Options{}, nil); !rep.OK() {
			t.Fatalf("%s does not verify: %+v", path, rep)
		}
		s, err := sstable.Open(path, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		st := s.Stats().Stats
		lo, hi := (w0+int64(k)*window)*1_000_000, (w0+int64(k+1)*window)*1_000_000
		wantTTL := int32(ttl)
		if k == 4 { // late: window 2's first microseconds, no TTL
			lo, hi, wantTTL = (w0+window)*1_000_000, (w0+window)*1_000_000+1000, 0
		}
		if st.MinTimestamp < lo || st.MaxTimestamp >= hi {
			t.Errorf("%s: timestamps %d..%d outside [%d, %d)", path, st.MinTimestamp, st.MaxTimestamp, lo, hi)
		}
		if st.MinTTL != wantTTL || st.MaxTTL != wantTTL {
			t.Errorf("%s: TTL %d..%d, want %d", path, st.MinTTL, st.MaxTTL, wantTTL)
		}
		switch {
		case k == 4 && st.MaxLocalDeletionTime != stats.NoDeletionTime:
			t.Errorf("late sstable: max local deletion time %d", st.MaxLocalDeletionTime)
		case k < 4 && st.MaxLocalDeletionTime != st.MaxTimestamp/1_000_000+ttl:
			t.Errorf("%s: max local deletion time %d, want its newest write + TTL %d", path, st.MaxLocalDeletionTime, st.MaxTimestamp/1_000_000+ttl)
		}
		s.Close()
	}
}
