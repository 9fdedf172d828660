package sstable

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/reader"
)

func TestScanEveryFixture(t *testing.T) {
	for _, path := range fixtures.DataFiles(t) {
		for _, access := range []reader.Access{reader.Mmap, reader.Buffered} {
			name := filepath.Base(filepath.Dir(path))
			s, err := Open(path, Options{Access: access})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			var n, rowsTotal, cells int64
			var end int64
			err = s.ScanPartitions(ScanOptions{}, func(p *PartitionSummary) error {
				if p.Offset != end {
					t.Errorf("%s: partition at %d, previous ended at %d", name, p.Offset, end)
				}
				end = p.Offset + p.Size
				n++
				rowsTotal += p.Rows
				cells += p.Cells
				return nil
			})
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if end != s.Data.Length() {
				t.Errorf("%s: scan ended at %d of %d", name, end, s.Data.Length())
			}
			if strings.HasPrefix(name, "legacy_") {
				if n != 5 {
					t.Errorf("%s: %d partitions, want 5", name, n)
				}
				wantRows := int64(5)
				if strings.Contains(name, "clust") {
					wantRows = 250
				}
				if rowsTotal != wantRows || cells != wantRows {
					t.Errorf("%s: %d rows %d cells, want %d each", name, rowsTotal, cells, wantRows)
				}
			}
			s.Close()
		}
	}
}
