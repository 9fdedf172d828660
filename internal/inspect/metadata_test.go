package inspect

import (
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// The droppable-tombstone ratio divides by count × ceil(mean) of the
// cells-per-partition histogram, as StatsMetadata does, not by the exact
// weighted sum: table_with_boolean_set has partitions of 1 and 2 cells
// (mean 1.5, rounded up to 2, so 4 estimated cells) and 2 tombstones whose
// deletion time has long passed.
func TestEstimatedDroppableTombstones(t *testing.T) {
	cases := map[string]float64{
		"table_with_boolean_set-9009a8a0a1c711eeae8c6d2c86545d91":  0.5,
		"table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91":          1.0 / 3,
		"utf8_with_special_chars-910a4fc0a1c711eeae8c6d2c86545d91": 0,
	}
	for name, want := range cases {
		s, err := sstable.Open(filepath.Join(fixtures.Table(t, "me-collections", name), "me-1-big-Data.db"), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMetadata(s)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if m.EstimatedDroppable != want {
			t.Errorf("%s: estimated droppable %v, want %v", name, m.EstimatedDroppable, want)
		}
	}
}
