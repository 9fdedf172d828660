package sstable

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/sstabletool/sstabletool/format/rows"
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
			if end != s.data.Length() {
				t.Errorf("%s: scan ended at %d of %d", name, end, s.data.Length())
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

// Every clustering of the legacy clustered tables is the row number
// followed by a fixed string; values that straddle chunk boundaries must
// come out intact (they once aliased a reused buffer).
func TestClusteringValuesSurviveChunkBoundaries(t *testing.T) {
	for _, v := range []string{"nb", "nc", "oa"} {
		for _, access := range []reader.Access{reader.Mmap, reader.Buffered} {
			dir := fixtures.Table(t, v, "legacy_"+v+"_clust")
			s, err := Open(filepath.Join(dir, v+"-1-big-Data.db"), Options{Access: access})
			if err != nil {
				t.Fatal(err)
			}
			dec := s.Decoder(0)
			var h rows.PartitionHeader
			for p := 0; p < 5; p++ {
				if err := dec.ReadPartitionHeader(&h); err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for {
					u, err := dec.Next(false)
					if err != nil {
						t.Fatalf("%s: %v", v, err)
					}
					if u == nil {
						break
					}
					ck := string(u.Clustering[0])
					if !strings.HasSuffix(ck, "0123456789") || !utf8.ValidString(ck) {
						t.Fatalf("%s partition %q row at %d: clustering %.40q... is damaged", v, h.Key, u.Offset, ck)
					}
					seen[ck] = true
				}
				if len(seen) != 50 {
					t.Fatalf("%s partition %q: %d distinct clusterings, want 50", v, h.Key, len(seen))
				}
			}
			s.Close()
		}
	}
}
