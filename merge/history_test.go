package merge_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
	"github.com/sstabletool/sstabletool/workload"
)

// history writes a generated flush history and returns its Data.db paths
// and now.
func history(t testing.TB, profile string, n int, seed uint64, partitions int64) ([]string, int64) {
	t.Helper()
	p, err := workload.ParseProfile([]byte(profile), "test")
	if err != nil {
		t.Fatal(err)
	}
	if partitions > 0 {
		p.Partitions = partitions
	}
	p.Seed = seed
	return historyOf(t, p, n)
}

func historyOf(t testing.TB, p *workload.Profile, n int) ([]string, int64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ks", "history-0123456789abcdef0123456789abcdef")
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{SSTables: n})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPaths, res.Now
}

// The merge agrees with the reconciliation of the sstables' own dumps on
// generated histories, at several times (before, around and long after
// the TTLs run out), with and without purging.
func TestMergeMatchesReconciledDumpsOnHistories(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		paths, now := history(t, generate.HistoryProfile, 4, seed, 120)
		for _, o := range []merge.Options{
			{Now: now - 4*86400, GCGraceSeconds: merge.DefaultGCGraceSeconds},
			{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds},
			{Now: now, Purge: true, GCGraceSeconds: 2 * 86400},
			{Now: now + 30*86400, Purge: true, GCGraceSeconds: merge.DefaultGCGraceSeconds},
			{Now: now + 100*86400, Purge: true, GCGraceSeconds: 0},
		} {
			n := checkAgainstReference(t, paths, o, nil)
			t.Logf("seed %d, now %d, purge %v gc %d: %d partitions", seed, o.Now, o.Purge, o.GCGraceSeconds, n)
		}
	}
}

// Two clustering columns: range tombstones on a prefix of the clustering
// (WHERE ck1 = x), and to the partition's end.
func TestMergeMatchesReconciledDumpsOnPrefixRanges(t *testing.T) {
	profile := strings.Replace(generate.HistoryProfile, "clustering: [{name: seq, type: int}]",
		"clustering: [{name: seq, type: int}, {name: tag, type: text}]", 1)
	profile = strings.Replace(profile, "delete_range: 0.03", "delete_range: 0.1", 1)
	paths, now := history(t, profile, 3, 6, 100)
	for _, o := range []merge.Options{{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}, {Now: now, Purge: true, GCGraceSeconds: 86400}} {
		checkAgainstReference(t, paths, o, nil)
	}
	var prefixes, ends int
	for _, d := range dumpEach(t, paths, now) {
		for _, p := range d {
			for _, r := range p.Rows {
				for _, b := range []*jBound{r.Start, r.End} {
					switch {
					case b == nil:
					case len(b.Clustering) == 0 || string(b.Clustering[0]) == `"*"`:
						ends++
					case string(b.Clustering[len(b.Clustering)-1]) == `"*"`:
						prefixes++
					}
				}
			}
		}
	}
	if prefixes == 0 || ends == 0 {
		t.Errorf("the history should hold prefix bounds (%d) and bounds to the end (%d)", prefixes, ends)
	}
}

// The two sstables of a Cassandra 3.11 node's system_schema.types.
func TestMergeMatchesReconciledDumpsOnRealTable(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11", "system_schema", "types-5a8b1ca866023f77a0459273d308917a")
	paths, err := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	if err != nil || len(paths) != 2 {
		t.Fatalf("want the two sstables of %s, found %v (%v)", dir, paths, err)
	}
	for _, o := range []merge.Options{
		{Now: 1703358890, GCGraceSeconds: merge.DefaultGCGraceSeconds},
		{Now: 1800000000, Purge: true, GCGraceSeconds: merge.DefaultGCGraceSeconds},
	} {
		if n := checkAgainstReference(t, paths, o, nil); n == 0 {
			t.Error("nothing merged")
		}
	}
}
