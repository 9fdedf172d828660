package nc

import (
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// The flags of nc as BigFormat.java had them before CASSANDRA-19010.
func TestFlags(t *testing.T) {
	v := Version
	if !v.HasImprovedMinMax || !v.HasPartitionLevelDeletions || !v.HasKeyRange || !v.HasLegacyMinMax {
		t.Errorf("nc has improved min/max, presence marker, key range and still legacy min/max: %+v", v)
	}
	if v.HasUIntDeletionTime || v.HasTokenSpaceCoverage {
		t.Errorf("nc has neither uint deletion times nor token space coverage: %+v", v)
	}
	if v.DeletionTimeLayout() != DeletionTime {
		t.Errorf("layout %v", v.DeletionTimeLayout())
	}
}

// In legacy_nc_simple every partition header is 2 + 1 + 12 = 15 bytes and
// the first row's previous-size field says so.
func TestPartitionHeaderOnDisk(t *testing.T) {
	dir := fixtures.Table(t, "nc", "legacy_nc_simple")
	s, err := sstable.Open(filepath.Join(dir, "nc-1-big-Data.db"), sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dec := s.Decoder(0)
	var h rows.PartitionHeader
	if err := dec.ReadPartitionHeader(&h); err != nil {
		t.Fatal(err)
	}
	u, err := dec.Next(false)
	if err != nil {
		t.Fatal(err)
	}
	if h.Size != 15 || PartitionHeaderSize(len(h.Key)) != 15 || u.PrevSize != 15 {
		t.Fatalf("header %d bytes, first row prev size %d; want 15", h.Size, u.PrevSize)
	}
}
