package rows_test

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// decodeAll clones every unfiltered of the table at path.
func decodeAll(t *testing.T, path string, slow bool) []*rows.Unfiltered {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out []*rows.Unfiltered
	err = s.EachPartition(func(h *rows.PartitionHeader, d *rows.Decoder) error {
		if slow {
			rows.SlowOnly(d)
		}
		for {
			u, err := d.Next(false)
			if err != nil || u == nil {
				return err
			}
			out = append(out, u.Clone())
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The row body fast path must decode every real Cassandra table exactly as
// the general path does.
func TestFastRowBodyMatchesSlowOnRealTables(t *testing.T) {
	files := fixtures.DataFiles(t)
	cells := 0
	for _, f := range files {
		fast := decodeAll(t, f, false)
		slow := decodeAll(t, f, true)
		if len(fast) != len(slow) {
			t.Fatalf("%s: %d unfiltereds on the fast path, %d on the slow", f, len(fast), len(slow))
		}
		for i := range fast {
			// DeepEqual first: cmp walks byte slices element by element.
			if !reflect.DeepEqual(slow[i], fast[i]) {
				diff := cmp.Diff(slow[i], fast[i])
				t.Fatalf("%s: unfiltered %d differs (-slow +fast):\n%s", f, i, diff)
			}
		}
		for _, u := range fast {
			cells += len(u.Cells)
		}
	}
	if cells == 0 {
		t.Fatalf("no cells decoded from %d tables", len(files))
	}
	t.Logf("%d tables, %d cells", len(files), cells)
}
