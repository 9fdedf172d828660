package index

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

// The legacy tables have text clustering (variable width) or none.
func codecFor(t *testing.T, version string, clustered bool) *Codec {
	c := &Codec{Version: format.MustVersion(version)}
	if clustered {
		c.ClusteringFixed = []int{-1}
	}
	return c
}

func TestLegacyIndexRoundTrip(t *testing.T) {
	for _, v := range []string{"nb", "nc", "oa"} {
		for _, table := range []string{"simple", "simple_counter", "clust", "clust_counter"} {
			for _, access := range []reader.Access{reader.Mmap, reader.Buffered} {
				dir := fixtures.Table(t, v, "legacy_"+v+"_"+table)
				path := filepath.Join(dir, v+"-1-big-Index.db")
				raw, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				f, err := reader.Open(path, access)
				if err != nil {
					t.Fatal(err)
				}
				codec := codecFor(t, v, table == "clust" || table == "clust_counter")
				s := NewScanner(f, codec, 0, true)
				var keys []string
				var out []byte
				for s.Next() {
					e := s.Entry()
					keys = append(keys, string(e.Key))
					if table == "clust" || table == "clust_counter" {
						if !e.Indexed() || len(e.Blocks) < 2 {
							t.Errorf("%s %s key %q: expected a promoted index with blocks, got %d", v, table, e.Key, len(e.Blocks))
						}
						if !e.Deletion.IsLive() {
							t.Errorf("%s: partition deletion %+v, want LIVE", v, e.Deletion)
						}
					}
					out, err = codec.Append(out, e)
					if err != nil {
						t.Fatal(err)
					}
				}
				if s.Err() != nil {
					t.Fatalf("%s %s: %v", v, table, s.Err())
				}
				f.Close()
				if got := len(keys); got != 5 {
					t.Fatalf("%s %s: %d entries, want 5", v, table, got)
				}
				for i, k := range keys {
					if k != string(rune('0'+i)) {
						t.Errorf("%s %s: key %d is %q", v, table, i, k)
					}
				}
				if !bytes.Equal(out, raw) {
					t.Errorf("%s %s (%v): re-encoded Index.db differs (%d vs %d bytes)", v, table, access, len(out), len(raw))
				}
			}
		}
	}
}

// The fixtures' README: nc clust Index.db is 157,553 bytes, oa 157,498; the
// difference is 11 bytes per partition (12-byte legacy LIVE vs 1 byte).
func TestDeletionTimeLayoutChangesEntrySize(t *testing.T) {
	dir := fixtures.Table(t, "nc", "legacy_nc_clust")
	f, err := reader.Open(filepath.Join(dir, "nc-1-big-Index.db"), reader.Mmap)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nc := codecFor(t, "nc", true)
	oa := codecFor(t, "oa", true)
	s := NewScanner(f, nc, 0, true)
	var total int
	for s.Next() {
		n, err := oa.EntrySize(s.Entry())
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if f.Size() != 157553 || total != 157498 {
		t.Fatalf("nc Index.db %d bytes, as oa %d; want 157553 and 157498", f.Size(), total)
	}
}

func TestTruncatedIndexNamesOffset(t *testing.T) {
	dir := fixtures.Table(t, "nc", "legacy_nc_clust")
	raw, err := os.ReadFile(filepath.Join(dir, "nc-1-big-Index.db"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "nc-1-big-Index.db")
	if err := os.WriteFile(p, raw[:len(raw)-100], 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := reader.Open(p, reader.Buffered)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := NewScanner(f, codecFor(t, "nc", true), 0, true)
	for s.Next() {
	}
	if s.Err() == nil {
		t.Fatal("a truncated Index.db must fail")
	}
	if !bytes.Contains([]byte(s.Err().Error()), []byte("Index.db")) {
		t.Fatalf("error should name the component: %v", s.Err())
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add([]byte{0, 1, '0', 0, 0}, true)
	f.Fuzz(func(t *testing.T, b []byte, legacy bool) {
		v := "oa"
		if legacy {
			v = "nc"
		}
		c := &Codec{Version: format.MustVersion(v), ClusteringFixed: []int{-1, 4}}
		var e Entry
		n, err := c.Decode(b, &e)
		if err != nil {
			return
		}
		if n > len(b) {
			t.Fatalf("consumed %d of %d", n, len(b))
		}
	})
}
