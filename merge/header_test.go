package merge_test

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/merge"
)

// The merged output's encoding minima are SerializationHeader.make's: the
// sstables' Statistics.db minima (which are exact), not their headers'
// (which a flush computes from the memtable and may differ), with "no
// timestamp" and "no deletion time" replaced by the epochs as the
// EncodingStats constructor does. Checked on every real sstable with a
// Statistics.db, alone and in pairs of the same table; the test insists
// that some of them have a header that differs from their statistics, so
// that it tells the two sources apart.
func TestHeaderMinimaFollowStatistics(t *testing.T) {
	byDir := map[string][]*sstable.SSTable{}
	for _, sub := range []string{"cassandra", "realworld"} {
		filepath.Walk(filepath.Join(fixtures.Dir(t), sub), func(p string, info os.FileInfo, err error) error {
			if err != nil || info.IsDir() || !strings.HasSuffix(p, "-Data.db") {
				return nil
			}
			s, err := sstable.Open(p, sstable.Options{})
			if err != nil {
				return nil
			}
			if s.Stats().Stats == nil {
				s.Close()
				return nil
			}
			t.Cleanup(func() { s.Close() })
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], s)
			return nil
		})
	}
	want := func(ss []*sstable.SSTable) stats.Header {
		var h stats.Header
		h.MinTimestamp, h.MinLocalDeletionTime, h.MinTTL = math.MaxInt64, math.MaxInt64, math.MaxInt64
		for _, s := range ss {
			st := s.Stats().Stats
			h.MinTimestamp = min(h.MinTimestamp, st.MinTimestamp)
			h.MinLocalDeletionTime = min(h.MinLocalDeletionTime, st.MinLocalDeletionTime)
			h.MinTTL = min(h.MinTTL, int64(st.MinTTL))
		}
		if h.MinTimestamp == math.MinInt64 {
			h.MinTimestamp = stats.TimestampEpoch
		}
		if h.MinLocalDeletionTime == stats.NoDeletionTime {
			h.MinLocalDeletionTime = stats.DeletionTimeEpoch
		}
		return h
	}
	checked, differing := 0, 0
	check := func(ss []*sstable.SSTable) {
		tbl, err := merge.New(ss)
		if err != nil {
			return // tables merge refuses (damaged on purpose, mixed schemas) are not this test's
		}
		got, w := tbl.Header(), want(ss)
		if got.MinTimestamp != w.MinTimestamp || got.MinLocalDeletionTime != w.MinLocalDeletionTime || got.MinTTL != w.MinTTL {
			t.Errorf("%s: merged header minima (timestamp %d, deletion time %d, TTL %d), Statistics.db's (%d, %d, %d)",
				ss[0].Path("Data.db"), got.MinTimestamp, got.MinLocalDeletionTime, got.MinTTL, w.MinTimestamp, w.MinLocalDeletionTime, w.MinTTL)
		}
		checked++
		for _, s := range ss {
			if h := s.Stats().Header; h.MinTimestamp != w.MinTimestamp || h.MinLocalDeletionTime != w.MinLocalDeletionTime || h.MinTTL != w.MinTTL {
				differing++
				break
			}
		}
	}
	for _, ss := range byDir {
		for _, s := range ss {
			check([]*sstable.SSTable{s})
		}
		if len(ss) >= 2 {
			check(ss[:2])
		}
	}
	if checked == 0 || differing == 0 {
		t.Fatalf("checked %d merges, %d with a header that differs from Statistics.db: the test tells nothing apart", checked, differing)
	}
	t.Logf("checked %d merges, %d with a header that differs from Statistics.db", checked, differing)
}
