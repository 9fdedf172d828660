package merge_test

// convert --merge (convert.Merge) held to the independent reconciliation:
// the sstable it writes, dumped on its own, is the reconciled table, and
// its Statistics.db says what the dump holds.

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/convert"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
)

func TestMergedSSTableMatchesReconciledDumps(t *testing.T) {
	da, err := format.ParseFormatVersion(format.BTI, "da")
	if err != nil {
		t.Fatal(err)
	}
	paths, now := history(t, generate.HistoryProfile, 4, 5, 100)
	for _, tc := range []struct {
		to format.Version
		o  merge.Options
	}{
		{format.MustVersion("oa"), merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}},
		{da, merge.Options{Now: now + 30*86400, GCGraceSeconds: merge.DefaultGCGraceSeconds}},
		{format.MustVersion("nb"), merge.Options{Now: now, Purge: true, GCGraceSeconds: 86400}},
		{format.MustVersion("oa"), merge.Options{Now: now + 100*86400, Purge: true}},
	} {
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := reconcile(t, tbl, paths, tc.o, nil)
		res, err := convert.Merge(tbl, t.TempDir(), convert.MergeOptions{To: tc.to, Merge: tc.o, Verify: true})
		tbl.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := dumpEach(t, []string{res.Output}, tc.o.Now)[0]
		if len(got) != len(want) {
			t.Errorf("%s: %d partitions written, the reconciliation has %d", tc.to.Name, len(got), len(want))
		}
		for i := range got {
			p := &got[i]
			w := want[strings.Join(p.Partition.Key, "\x00")]
			if w == nil {
				t.Errorf("%s: partition %v written, the reconciliation has none", tc.to.Name, p.Partition.Key)
				continue
			}
			if nw, np := normalize(w), normalize(p); key(nw) != key(np) {
				t.Errorf("%s: partition %v (-reconciled +written):\n%s", tc.to.Name, p.Partition.Key, cmp.Diff(nw, np))
			}
		}
		checkStatistics(t, res.Output, got)
	}
}

// checkStatistics holds the written Statistics.db to what its dump holds,
// counted as MetadataCollector counts: every timestamp (liveness, cells,
// deletions), every local deletion time (deletions, tombstones, and the
// expiration of what has a TTL; NO_DELETION_TIME for what has none), the
// TTLs (0 for what has none), the tombstone drop times rounded up to the
// minute, the partition count and whether one is deleted.
func checkStatistics(t *testing.T, path string, dump []jPartition) {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st := s.Stats().Stats
	minTS, maxTS := int64(math.MaxInt64), int64(math.MinInt64)
	minLDT, maxLDT := int64(math.MaxInt64), int64(math.MinInt64)
	minTTL, maxTTL := int64(math.MaxInt64), int64(math.MinInt64)
	drops := map[int64]int64{}
	ts := func(v string) {
		n := mustInt(t, v)
		minTS, maxTS = min(minTS, n), max(maxTS, n)
	}
	ldt := func(n int64) {
		minLDT, maxLDT = min(minLDT, n), max(maxLDT, n)
		if n != stats.NoDeletionTime {
			drops[(n+59)/60*60]++
		}
	}
	ttl := func(n int64) { minTTL, maxTTL = min(minTTL, n), max(maxTTL, n) }
	del := func(d *jDeletion) {
		if d != nil && d.MarkedDeleted != "" {
			ts(d.MarkedDeleted)
			ldt(mustInt(t, d.LocalDeleteTime))
		}
	}
	deleted := false
	ambiguous := int64(0)
	for _, p := range dump {
		if p.Partition.Deletion != nil {
			deleted = true
			del(p.Partition.Deletion)
		}
		for _, r := range p.Rows {
			if r.Start != nil {
				del(&r.Start.Deletion)
			}
			if r.End != nil {
				del(&r.End.Deletion)
			}
			del(r.Deletion)
			rowTS, rowTTL := "", int64(0)
			if l := r.Liveness; l != nil && l.Tstamp != "" {
				ts(l.Tstamp)
				rowTS = l.Tstamp
				if l.TTL != nil {
					rowTTL = *l.TTL
					ttl(*l.TTL)
					ldt(mustInt(t, *l.ExpiresAt))
				} else {
					ttl(0)
					ldt(stats.NoDeletionTime)
				}
			}
			for _, c := range r.Cells {
				if c.Deletion != nil && c.Deletion.MarkedDeleted != "" && c.Path == nil && c.Value == nil {
					del(c.Deletion) // a collection deletion
					continue
				}
				switch {
				case c.Tstamp != nil:
					ts(*c.Tstamp)
				case rowTS != "":
					ts(rowTS)
				}
				switch {
				case c.Deletion != nil:
					ttl(0)
					ldt(mustInt(t, c.Deletion.LocalDeleteTime))
				case c.TTL != nil:
					ttl(*c.TTL)
					ldt(mustInt(t, *c.ExpiresAt))
				case rowTTL != 0 && c.Tstamp == nil:
					ttl(rowTTL)
					ldt(mustInt(t, *r.Liveness.ExpiresAt))
				case rowTTL != 0:
					// Written at another time with the row's TTL, or with
					// none: the dump does not say (it prints a cell's TTL
					// only when it is not the row's), nor when it expires.
					ambiguous++
				default:
					ttl(0)
					ldt(stats.NoDeletionTime)
				}
			}
		}
	}
	if minTS != st.MinTimestamp || maxTS != st.MaxTimestamp {
		t.Errorf("%s: timestamps %d..%d, the dump holds %d..%d", path, st.MinTimestamp, st.MaxTimestamp, minTS, maxTS)
	}
	if minLDT != st.MinLocalDeletionTime || maxLDT != st.MaxLocalDeletionTime {
		t.Errorf("%s: local deletion times %d..%d, the dump holds %d..%d", path, st.MinLocalDeletionTime, st.MaxLocalDeletionTime, minLDT, maxLDT)
	}
	if int64(st.MinTTL) != minTTL || int64(st.MaxTTL) != maxTTL {
		t.Errorf("%s: TTLs %d..%d, the dump holds %d..%d", path, st.MinTTL, st.MaxTTL, minTTL, maxTTL)
	}
	if st.HasPartitionLevelDeletions != deleted {
		t.Errorf("%s: hasPartitionLevelDeletions %v, the dump %v", path, st.HasPartitionLevelDeletions, deleted)
	}
	var n int64
	for _, c := range st.PartitionSizes.Buckets {
		n += c
	}
	if n != int64(len(dump)) {
		t.Errorf("%s: the partition size histogram counts %d partitions, the dump holds %d", path, n, len(dump))
	}
	// Each bin holds at least the dump's drop times of that minute, and
	// the ambiguous cells at most make up the rest.
	var bins, want []string
	var extra int64
	for _, b := range st.TombstoneDropTimes.Bins {
		bins = append(bins, strconv.FormatInt(b.DeletionTime, 10)+":"+strconv.FormatInt(b.Count, 10))
		if b.Count < drops[b.DeletionTime] {
			extra = -1 << 62
		}
		extra += b.Count - drops[b.DeletionTime]
		delete(drops, b.DeletionTime)
	}
	for at, c := range drops {
		want = append(want, strconv.FormatInt(at, 10)+":"+strconv.FormatInt(c, 10))
	}
	slices.Sort(bins)
	if len(st.TombstoneDropTimes.Bins) < 100 && (len(want) > 0 || extra < 0 || extra > ambiguous) {
		t.Errorf("%s: tombstone drop times %v: the dump's are not all there (missing %v) or %d more than its %d ambiguous cells", path, bins, want, extra, ambiguous)
	}
}
