package writer

import (
	"bytes"
	"sort"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// collector gathers Statistics.db's stats component as MetadataCollector
// does while an sstable is written.
type collector struct {
	sizes, cellsPer    stats.EstimatedHistogram
	minTS, maxTS       int64
	minLDT, maxLDT     int64
	minTTL, maxTTL     int64
	seenTS, seenLDT    bool
	seenTTL            bool
	columnsSet, rows   int64
	partitionDeletions bool
	drop               map[int64]int64 // rounded local deletion time -> count
	types              []*cqltype.Type
	minClust, maxClust clustering.Prefix
	seenClust          bool
}

func (c *collector) init() {
	c.sizes = stats.NewEstimatedHistogram(stats.PartitionSizeBuckets)
	c.cellsPer = stats.NewEstimatedHistogram(stats.CellsPerPartitionBuckets)
	c.drop = map[int64]int64{}
}

func (c *collector) ts(v int64) {
	if !c.seenTS || v < c.minTS {
		c.minTS = v
	}
	if !c.seenTS || v > c.maxTS {
		c.maxTS = v
	}
	c.seenTS = true
}

func (c *collector) ldt(v int64) {
	if !c.seenLDT || v < c.minLDT {
		c.minLDT = v
	}
	if !c.seenLDT || v > c.maxLDT {
		c.maxLDT = v
	}
	c.seenLDT = true
	if v != stats.NoDeletionTime {
		// StreamingTombstoneHistogramBuilder rounds up to 60 seconds.
		c.drop[(v+59)/60*60]++
	}
}

func (c *collector) ttl(v int64) {
	if !c.seenTTL || v < c.minTTL {
		c.minTTL = v
	}
	if !c.seenTTL || v > c.maxTTL {
		c.maxTTL = v
	}
	c.seenTTL = true
}

func (c *collector) deletion(d deletiontime.DeletionTime) {
	if !d.IsLive() {
		c.ts(d.MarkedForDeleteAt)
		c.ldt(d.LocalDeletionTime)
	}
}

func (c *collector) partitionDeletion(d deletiontime.DeletionTime) {
	if !d.IsLive() {
		c.partitionDeletions = true
	}
	c.deletion(d)
}

func (c *collector) row(u *rows.Unfiltered, cells *int64) {
	if u.Liveness.HasTimestamp {
		c.ts(u.Liveness.Timestamp)
		c.ttl(u.Liveness.TTL)
		if u.Liveness.Expiring() {
			c.ldt(u.Liveness.LocalExpirationTime)
		} else {
			c.ldt(stats.NoDeletionTime)
		}
	}
	if u.HasDeletion() || (!u.Deletion.IsLive() && u.Deletion != (deletiontime.DeletionTime{})) {
		c.deletion(u.Deletion)
	}
	for _, cd := range u.ComplexDeletions {
		c.deletion(cd.Deletion)
	}
	cols := 0
	last := -1
	for i := range u.Cells {
		cell := &u.Cells[i]
		*cells++
		c.ts(cell.Timestamp)
		ttl, ldt := int64(0), int64(stats.NoDeletionTime)
		if cell.IsExpiring() {
			ttl, ldt = cell.TTL, cell.LocalDeletionTime
		} else if cell.IsTombstone() {
			ldt = cell.LocalDeletionTime
		}
		c.ttl(ttl)
		c.ldt(ldt)
		if cell.Column != last {
			cols++
			last = cell.Column
		}
	}
	c.columnsSet += int64(cols)
	c.rows++
	if u.Kind == rows.KindRow {
		c.clust(clustering.Prefix{Kind: clustering.Clustering, Values: u.Clustering})
	}
}

func (c *collector) marker(u *rows.Unfiltered) {
	if u.Bound.Kind.IsBoundary() {
		c.deletion(u.EndDeletion)
		c.deletion(u.StartDeletion)
	} else {
		c.deletion(u.Deletion)
	}
	c.clust(u.Bound)
}

func (c *collector) endPartition(size, cells int64) {
	c.sizes.Add(size)
	c.cellsPer.Add(cells)
}

// clust widens the covered slice with one clustering or bound.
func (c *collector) clust(p clustering.Prefix) {
	if !c.seenClust {
		c.minClust, c.maxClust, c.seenClust = clonePrefix(p), clonePrefix(p), true
		return
	}
	if c.compare(p, c.minClust, true) < 0 {
		c.minClust = clonePrefix(p)
	}
	if c.compare(p, c.maxClust, false) > 0 {
		c.maxClust = clonePrefix(p)
	}
}

// compare orders two prefixes by their values with the clustering types
// (a shorter prefix sorts by its kind: starts before, ends after).
func (c *collector) compare(a, b clustering.Prefix, forMin bool) int {
	n := min(len(a.Values), len(b.Values))
	for i := 0; i < n; i++ {
		var r int
		if i < len(c.types) && c.types[i] != nil {
			r = c.types[i].Compare(a.Values[i], b.Values[i])
		} else {
			r = bytes.Compare(a.Values[i], b.Values[i])
		}
		if r != 0 {
			return r
		}
	}
	rank := func(p clustering.Prefix) int {
		if len(p.Values) > n {
			return 0
		}
		switch {
		case p.Kind == clustering.Clustering:
			return 0
		case p.Kind.IsStart() && !p.Kind.IsBoundary():
			if p.Kind.IsInclusive() {
				return -1
			}
			return 1
		default:
			if p.Kind.IsInclusive() {
				return 1
			}
			return -1
		}
	}
	return rank(a) - rank(b)
}

// covered is the slice of clusterings the sstable holds, with inclusive
// bounds around the smallest and largest clustering (StatsMetadata's
// coveredClustering); ALL when there are none.
func (c *collector) covered() stats.Slice {
	if !c.seenClust {
		return stats.AllClusterings
	}
	start := clustering.Prefix{Kind: clustering.InclStartBound, Values: c.minClust.Values}
	end := clustering.Prefix{Kind: clustering.InclEndBound, Values: c.maxClust.Values}
	if c.minClust.Kind != clustering.Clustering {
		start.Kind = c.minClust.Kind
	}
	if c.maxClust.Kind != clustering.Clustering {
		end.Kind = c.maxClust.Kind
	}
	return stats.Slice{Start: start, End: end}
}

// tombstoneHistogram keeps at most 100 bins (Cassandra's default), merging
// the closest neighbours as StreamingTombstoneHistogramBuilder does when
// it overflows (the merged point is the count-weighted mean).
func (c *collector) tombstoneHistogram() stats.TombstoneHistogram {
	type bin struct {
		t float64
		n int64
	}
	bins := make([]bin, 0, len(c.drop))
	for t, n := range c.drop {
		bins = append(bins, bin{float64(t), n})
	}
	sort.Slice(bins, func(i, j int) bool { return bins[i].t < bins[j].t })
	for len(bins) > 100 {
		best := 0
		for i := 1; i+1 < len(bins); i++ {
			if bins[i+1].t-bins[i].t < bins[best+1].t-bins[best].t {
				best = i
			}
		}
		a, b := bins[best], bins[best+1]
		n := a.n + b.n
		bins[best] = bin{(a.t*float64(a.n) + b.t*float64(b.n)) / float64(n), n}
		bins = append(bins[:best+1], bins[best+2:]...)
	}
	h := stats.TombstoneHistogram{MaxBinSize: int32(len(bins))}
	for _, b := range bins {
		h.Bins = append(h.Bins, stats.TombstoneBin{DeletionTime: int64(b.t), Count: b.n})
	}
	return h
}
