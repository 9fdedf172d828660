package sstable_test

import (
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
)

// A size-only scan (clustering values and bodies skipped by width, with
// the fixed-width clustering shortcut) must find the same partitions,
// sizes and rows as a full decode. The demo table clusters by timestamp
// (fixed 8 bytes) and has static rows, deletions and range tombstones.
func TestSkipScanMatchesFullDecode(t *testing.T) {
	path, err := generate.Demo(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	collect := func(skip bool) []sstable.PartitionSummary {
		var out []sstable.PartitionSummary
		err := s.ScanPartitions(sstable.ScanOptions{SkipCells: skip}, func(p *sstable.PartitionSummary) error {
			q := *p
			q.Key = append([]byte(nil), p.Key...)
			out = append(out, q)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	full, skim := collect(false), collect(true)
	if len(full) != len(skim) || len(full) < 100 {
		t.Fatalf("%d partitions fully decoded, %d skimmed", len(full), len(skim))
	}
	var markers int64
	for i := range full {
		f, k := full[i], skim[i]
		if string(f.Key) != string(k.Key) || f.Offset != k.Offset || f.Size != k.Size || f.Rows != k.Rows || f.Markers != k.Markers {
			t.Fatalf("partition %d: full %+v, skimmed %+v", i, f, k)
		}
		markers += f.Markers
	}
	if markers == 0 {
		t.Fatal("the demo should hold range tombstones")
	}
}
