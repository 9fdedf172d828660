package stats

import (
	"bytes"
	"math"
	"sort"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// Collector gathers Statistics.db's stats component from the partitions,
// rows and markers of an sstable as MetadataCollector does while it is
// written: the writer builds the component with it, and verify rebuilds
// it from Data.db to compare with what Statistics.db stores. Call
// PartitionDeletion at each partition's start, Static, Row or Marker for
// each unfiltered, EndPartition at its end, then Fill.
type Collector struct {
	sizes, cellsPer    EstimatedHistogram
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
	// timestampsOnly leaves out what a checker does not compare
	// (NewTimestampCollector).
	timestampsOnly bool
}

// NewTimestampCollector returns a Collector for a checker: it gathers the
// two histograms, the row and column counts and the minimum and maximum
// timestamp, and leaves out the clustering bounds, the local deletion
// times and TTLs and their drop-time histogram (Fill reports none), the
// most costly per row.
func NewTimestampCollector() *Collector {
	c := NewCollector(nil)
	c.timestampsOnly = true
	return c
}

// NewCollector returns a Collector for a table whose clustering columns
// have these types (nil entries compare as bytes).
func NewCollector(clusteringTypes []*cqltype.Type) *Collector {
	return &Collector{
		sizes:    NewEstimatedHistogram(PartitionSizeBuckets),
		cellsPer: NewEstimatedHistogram(CellsPerPartitionBuckets),
		drop:     map[int64]int64{},
		types:    clusteringTypes,
	}
}

func (c *Collector) ts(v int64) {
	if !c.seenTS || v < c.minTS {
		c.minTS = v
	}
	if !c.seenTS || v > c.maxTS {
		c.maxTS = v
	}
	c.seenTS = true
}

func (c *Collector) ldt(v int64) {
	if c.timestampsOnly {
		return
	}
	if !c.seenLDT || v < c.minLDT {
		c.minLDT = v
	}
	if !c.seenLDT || v > c.maxLDT {
		c.maxLDT = v
	}
	c.seenLDT = true
	if v != NoDeletionTime {
		// StreamingTombstoneHistogramBuilder rounds up to 60 seconds.
		c.drop[(v+59)/60*60]++
	}
}

func (c *Collector) ttl(v int64) {
	if c.timestampsOnly {
		return
	}
	if !c.seenTTL || v < c.minTTL {
		c.minTTL = v
	}
	if !c.seenTTL || v > c.maxTTL {
		c.maxTTL = v
	}
	c.seenTTL = true
}

func (c *Collector) deletion(d deletiontime.DeletionTime) {
	if !d.IsLive() {
		c.ts(d.MarkedForDeleteAt)
		c.ldt(d.LocalDeletionTime)
	}
}

// PartitionDeletion records a partition's deletion, at its start.
func (c *Collector) PartitionDeletion(d deletiontime.DeletionTime) {
	if !d.IsLive() {
		c.partitionDeletions = true
	}
	c.deletion(d)
}

// Static records the static row, unless it is empty (Cassandra collects
// the stats of a static row only when it has something), and returns its
// cells.
func (c *Collector) Static(u *rows.Unfiltered) int64 {
	if len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion() {
		return 0
	}
	return c.Row(u)
}

// Row records a row (Rows.collectStats) and returns its cells, which the
// caller adds up for the partition's EndPartition.
func (c *Collector) Row(u *rows.Unfiltered) (cells int64) {
	if c.timestampsOnly {
		return c.rowTimestamps(u)
	}
	if u.Liveness.HasTimestamp {
		c.ts(u.Liveness.Timestamp)
		c.ttl(u.Liveness.TTL)
		if u.Liveness.Expiring() {
			c.ldt(u.Liveness.LocalExpirationTime)
		} else {
			c.ldt(NoDeletionTime)
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
		cells++
		c.ts(cell.Timestamp)
		ttl, ldt := int64(0), int64(NoDeletionTime)
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
	return cells
}

// rowTimestamps is Row for NewTimestampCollector: the same timestamps,
// cells and columns, in one pass with nothing else per cell.
func (c *Collector) rowTimestamps(u *rows.Unfiltered) (cells int64) {
	if u.Liveness.HasTimestamp {
		c.ts(u.Liveness.Timestamp)
	}
	if u.HasDeletion() || (!u.Deletion.IsLive() && u.Deletion != (deletiontime.DeletionTime{})) {
		c.deletion(u.Deletion)
	}
	for _, cd := range u.ComplexDeletions {
		c.deletion(cd.Deletion)
	}
	if len(u.Cells) > 0 {
		lo, hi := u.Cells[0].Timestamp, u.Cells[0].Timestamp
		cols, last := 0, -1
		for i := range u.Cells {
			cell := &u.Cells[i]
			lo, hi = min(lo, cell.Timestamp), max(hi, cell.Timestamp)
			if cell.Column != last {
				cols++
				last = cell.Column
			}
		}
		c.ts(lo)
		c.ts(hi)
		c.columnsSet += int64(cols)
	}
	c.rows++
	return int64(len(u.Cells))
}

// Marker records a range tombstone bound or boundary.
func (c *Collector) Marker(u *rows.Unfiltered) {
	if u.Bound.Kind.IsBoundary() {
		c.deletion(u.EndDeletion)
		c.deletion(u.StartDeletion)
	} else {
		c.deletion(u.Deletion)
	}
	c.clust(u.Bound)
}

// EndPartition records a partition's size in bytes (header to end of
// partition byte) and its cells.
func (c *Collector) EndPartition(size, cells int64) {
	c.sizes.Add(size)
	c.cellsPer.Add(cells)
}

// clust widens the covered slice with one clustering or bound.
func (c *Collector) clust(p clustering.Prefix) {
	if c.timestampsOnly {
		return
	}
	if !c.seenClust {
		c.minClust, c.maxClust, c.seenClust = p.Clone(), p.Clone(), true
		return
	}
	if c.compare(p, c.minClust, true) < 0 {
		c.minClust = p.Clone()
	}
	if c.compare(p, c.maxClust, false) > 0 {
		c.maxClust = p.Clone()
	}
}

// compare orders two prefixes by their values with the clustering types
// (a shorter prefix sorts by its kind: starts before, ends after).
func (c *Collector) compare(a, b clustering.Prefix, forMin bool) int {
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

// Fill sets the fields of s the Collector computes: the two histograms,
// the minimum and maximum timestamp, local deletion time and TTL (with
// Cassandra's values for "none"), the tombstone drop times, the covered
// clusterings, the row and column counts and whether any partition is
// deleted.
func (c *Collector) Fill(s *Stats) {
	s.PartitionSizes, s.CellsPerPartition = c.sizes, c.cellsPer
	s.MinTimestamp, s.MaxTimestamp = c.minTS, c.maxTS
	if !c.seenTS {
		s.MinTimestamp, s.MaxTimestamp = math.MaxInt64, math.MinInt64
	}
	s.MinLocalDeletionTime, s.MaxLocalDeletionTime = c.minLDT, c.maxLDT
	if !c.seenLDT {
		s.MinLocalDeletionTime, s.MaxLocalDeletionTime = NoDeletionTime, NoDeletionTime
	}
	s.MinTTL, s.MaxTTL = int32(c.minTTL), int32(c.maxTTL)
	if !c.seenTTL {
		s.MinTTL, s.MaxTTL = 0, 0
	}
	s.TombstoneDropTimes = c.tombstoneHistogram()
	s.CoveredClustering = c.covered()
	s.TotalColumnsSet, s.TotalRows = c.columnsSet, c.rows
	s.HasPartitionLevelDeletions = c.partitionDeletions
}

// covered is the slice of clusterings the sstable holds, with inclusive
// bounds around the smallest and largest clustering (StatsMetadata's
// coveredClustering); ALL when there are none.
func (c *Collector) covered() Slice {
	if !c.seenClust {
		return AllClusterings
	}
	start := clustering.Prefix{Kind: clustering.InclStartBound, Values: c.minClust.Values}
	end := clustering.Prefix{Kind: clustering.InclEndBound, Values: c.maxClust.Values}
	if c.minClust.Kind != clustering.Clustering {
		start.Kind = c.minClust.Kind
	}
	if c.maxClust.Kind != clustering.Clustering {
		end.Kind = c.maxClust.Kind
	}
	return Slice{Start: start, End: end}
}

// tombstoneHistogram keeps at most 100 bins (Cassandra's default), merging
// the closest neighbours as StreamingTombstoneHistogramBuilder does when
// it overflows (the merged point is the count-weighted mean).
func (c *Collector) tombstoneHistogram() TombstoneHistogram {
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
	h := TombstoneHistogram{MaxBinSize: int32(len(bins))}
	for _, b := range bins {
		h.Bins = append(h.Bins, TombstoneBin{DeletionTime: int64(b.t), Count: b.n})
	}
	return h
}
