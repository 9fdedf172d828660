package oa

import (
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

func TestFlags(t *testing.T) {
	v := Version
	if !v.HasUIntDeletionTime || !v.HasTokenSpaceCoverage || v.HasLegacyMinMax || !v.HasImprovedMinMax {
		t.Errorf("oa flags: %+v", v)
	}
	if v.DeletionTimeLayout() != DeletionTime {
		t.Errorf("layout %v", v.DeletionTimeLayout())
	}
}

// In legacy_oa_simple every partition header is 2 + 1 + 1 = 4 bytes.
func TestPartitionHeaderOnDisk(t *testing.T) {
	dir := fixtures.Table(t, "oa", "legacy_oa_simple")
	s, err := sstable.Open(filepath.Join(dir, "oa-1-big-Data.db"), sstable.Options{})
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
	if h.Size != 4 || PartitionHeaderSize(len(h.Key), h.Deletion) != 4 || u.PrevSize != 4 || LiveSaving != 11 {
		t.Fatalf("header %d bytes, first row prev size %d; want 4", h.Size, u.PrevSize)
	}
}
