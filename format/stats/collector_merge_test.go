package stats_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// TestCollectorMerge: collecting a table's partitions in parts and merging
// the parts in order gives what one collector gives, for both kinds of
// collector, cut anywhere.
func TestCollectorMerge(t *testing.T) {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 50
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "demo"), generate.Options{Version: format.MustVersion("oa")})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kinds := map[string]func() *stats.Collector{
		"full":   func() *stats.Collector { return stats.NewCollector(s.ClusteringTypes()) },
		"bounds": func() *stats.Collector { return stats.NewBoundsCollector(s.ClusteringTypes()) },
	}
	for name, mk := range kinds {
		for _, every := range []int{1, 3, 17, 1000} {
			one, part, merged := mk(), mk(), mk()
			n := 0
			err := s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
				one.PartitionDeletion(h.Deletion)
				part.PartitionDeletion(h.Deletion)
				var cells int64
				for {
					u, err := dec.Next(false)
					if err != nil {
						return err
					}
					if u == nil {
						break
					}
					switch u.Kind {
					case rows.KindStaticRow:
						cells += one.Static(u)
						part.Static(u)
					case rows.KindMarker:
						one.Marker(u)
						part.Marker(u)
					default:
						cells += one.Row(u)
						part.Row(u)
					}
				}
				size := dec.Pos() - h.Offset
				one.EndPartition(size, cells)
				part.EndPartition(size, cells)
				if n++; n%every == 0 {
					merged.Merge(part)
					part.Reset()
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			merged.Merge(part)
			var want, got stats.Stats
			one.Fill(&want)
			merged.Fill(&got)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s, merged every %d partitions: differs from one collector (-want +got):\n%s", name, every, d)
			}
		}
	}
}
