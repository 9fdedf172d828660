package realworld_test

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/scrub"
	"github.com/sstabletool/sstabletool/verify"
)

// Statistics wider than the rows, as ScyllaDB's writer leaves them: the
// shapes of the held-out real files (timestamps from Long.MIN_VALUE to
// Long.MAX_VALUE, a row count that counts an empty static row) and of
// complex_column_zero_subcolumns here (a column count with complex columns
// that hold no cell), made on copies of real sstables whose rows are
// otherwise sound. verify warns and passes; convert, and scrub, write the
// rows' own statistics, which verify then finds exact.

// exactStats fails unless the sstable's Statistics.db holds exactly what
// its rows give.
func exactStats(t *testing.T, data string) {
	t.Helper()
	s, err := sstable.Open(data, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.CollectStats(sstable.SegmentOptions{}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := stats.CompareCollected(s.Stats().Stats, got, s.Version(), s.ClusteringTypes()); len(m) > 0 {
		t.Errorf("%s: statistics are not the rows': %v", data, m)
	}
	rep := verify.SSTable(data, sstable.Options{}, nil)
	if !rep.OK() || len(rep.Warnings) > 0 {
		t.Errorf("%s: verify problems %v, warnings %v", data, rep.Problems, rep.Warnings)
	}
}

func TestWiderStatisticsWarnAndRewritesCollectTheRows(t *testing.T) {
	const (
		scyllaWritten = "realworld/scylla/3.x/uncompressed/legacy_udt_in_collection" // mc, Scylla.db: ScyllaDB's own writer
		staticRows    = "realworld/scylla/3.x/uncompressed/static_row"
		ncClust       = "cassandra/nc/legacy_nc_clust"
	)
	cases := []struct {
		name, dir string
		edit      func(st *stats.Stats)
		want      []string // one substring per warning, in order
	}{
		{"timestamps Long.MIN_VALUE..Long.MAX_VALUE", scyllaWritten,
			func(st *stats.Stats) { st.MinTimestamp, st.MaxTimestamp = math.MinInt64, math.MaxInt64 },
			[]string{"timestamps Long.MIN_VALUE..Long.MAX_VALUE cover more than Data.db's 1525385507816568..1525385507816568"}},
		{"a row count with an empty static row", staticRows,
			func(st *stats.Stats) { st.TotalRows++ },
			[]string{"totalRows 11 is above Data.db's 10"}},
		{"deletion times, TTLs and columns", scyllaWritten,
			func(st *stats.Stats) {
				st.MinLocalDeletionTime, st.MinTTL, st.MaxTTL = 1, 0, 86400
				st.TotalColumnsSet += 3
			},
			[]string{"local deletion times 1..none cover more than Data.db's none..none", "TTLs 0..86400 cover more than Data.db's 0..0",
				"totalColumnsSet 11 is above Data.db's 8"}},
		{"clustering bounds and the partition deletion marker", ncClust,
			func(st *stats.Stats) {
				st.CoveredClustering = stats.AllClusterings
				st.HasPartitionLevelDeletions = true
			},
			[]string{"covered clusterings INCL_START_BOUND()..INCL_END_BOUND() cover more than Data.db's INCL_START_BOUND(0",
				"hasPartitionLevelDeletions is true, but Data.db holds no partition deletion"}},
	}
	oa := format.MustVersion("oa")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := fixtures.CopyTable(t, filepath.Join(fixtures.Dir(t), c.dir))
			data := dataOf(dir)
			rewriteStats(t, data, func(st *stats.Statistics, _ []byte) []byte {
				c.edit(st.Stats)
				out, err := st.Encode(st.Version)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})
			rep := verify.SSTable(data, sstable.Options{}, nil)
			if !rep.OK() {
				t.Fatalf("verify: problems %v", rep.Problems)
			}
			if len(rep.Warnings) != len(c.want) {
				t.Fatalf("verify: warnings %v, want %d", rep.Warnings, len(c.want))
			}
			for i, w := range c.want {
				if !strings.Contains(rep.Warnings[i].Message, w) || rep.Warnings[i].Component != "Statistics.db" {
					t.Errorf("warning %q, want one containing %q", rep.Warnings[i], w)
				}
			}

			res, err := convert.Convert(data, t.TempDir(), convert.Options{To: oa, Verify: true})
			if err != nil || !res.Verified {
				t.Fatalf("convert: %v", err)
			}
			if len(res.StatisticsRecollected) != len(c.want) {
				t.Errorf("convert: recollected %v, want %d", res.StatisticsRecollected, len(c.want))
			}
			exactStats(t, res.Output)

			// scrub keeps Data.db and rebuilds Statistics.db alone.
			out := t.TempDir()
			srep, err := scrub.Scrub(data, out, scrub.Options{})
			if err != nil {
				t.Fatalf("scrub: %v", err)
			}
			for _, comp := range srep.Components {
				switch comp.Name {
				case format.ComponentData:
					if comp.How != "kept" {
						t.Errorf("scrub: Data.db %s (%s), want kept", comp.How, comp.Why)
					}
				case format.ComponentStatistics:
					if comp.How != "rebuilt" || !strings.Contains(comp.Why, c.want[0]) {
						t.Errorf("scrub: Statistics.db %s (%s), want rebuilt for %q", comp.How, comp.Why, c.want[0])
					}
				}
			}
			scrubbed := dataOf(out)
			exactStats(t, scrubbed)
			a, _ := os.ReadFile(data)
			b, _ := os.ReadFile(scrubbed)
			if !bytes.Equal(a, b) {
				t.Error("scrub: Data.db changed")
			}
		})
	}
}

// On every real sstable, Cassandra's or another writer's, the rows'
// statistics that convert writes are exactly what verify then finds:
// nothing the converted sstable says is wider or narrower than its rows.
func TestRealWorldConvertedStatisticsAreTheRows(t *testing.T) {
	oa := format.MustVersion("oa")
	for _, p := range realworldTables(t) {
		name := rel(t, p)
		if expected[name].refuse != "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			res, err := convert.Convert(p, t.TempDir(), convert.Options{To: oa, Verify: true})
			if err != nil {
				t.Fatal(err)
			}
			exactStats(t, res.Output)
		})
	}
	// Cassandra's own: its statistics are its rows', so nothing is
	// recollected differently and nothing warns.
	for _, p := range fixtures.DataFiles(t) {
		rep := verify.SSTable(p, sstable.Options{}, nil)
		if len(rep.Warnings) > 0 {
			t.Errorf("%s: warnings %v", p, rep.Warnings)
		}
		if strings.Contains(p, "-bti-") {
			continue
		}
		res, err := convert.Estimate(p, convert.Options{To: oa})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.StatisticsRecollected) > 0 {
			t.Errorf("%s: recollected %v", p, res.StatisticsRecollected)
		}
	}
}
