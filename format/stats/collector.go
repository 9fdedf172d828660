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
// written (io/sstable/metadata/MetadataCollector.java and
// db/rows/Rows.collectStats, Cassandra 5.0): the writer builds the
// component with it, convert, upgrade and scrub take the bounds and
// counts of what they write from it, and verify rebuilds it from Data.db
// to compare with what Statistics.db stores. Call PartitionDeletion at each
// partition's start, Unfiltered (or Static, Row, Marker) for each
// unfiltered, EndPartition at its end, then Fill.
type Collector struct {
	sizes, cellsPer    EstimatedHistogram
	minTS, maxTS       int64
	minLDT, maxLDT     int64
	minTTL, maxTTL     int64 // each minimum above its maximum until a value is seen (clearBounds)
	columnsSet, rows   int64
	partitionDeletions bool
	drop               map[int64]int64 // rounded local deletion time -> count
	types              []*cqltype.Type
	// minClust is a clustering or a start bound, maxClust a clustering or
	// an end bound (MetadataCollector's minClustering and maxClustering);
	// their values are copied into minBuf and maxBuf, reused.
	minClust, maxClust clustering.Prefix
	seenMin, seenMax   bool
	minBuf, maxBuf     []byte
	// partMin and partMax are the partition's candidates (candidate),
	// folded in at its end.
	partMin, partMax       heldPrefix
	hasPartMin, hasPartMax bool
	partVals               [][]byte
	// boundsOnly leaves out the tombstone drop-time histogram
	// (NewBoundsCollector).
	boundsOnly bool
}

// NewBoundsCollector returns a Collector for a checker: it gathers
// everything Fill reports but the tombstone drop-time histogram (a map
// update per deletion time, and an estimate no read relies on): the two
// histograms, the bounds (timestamps, local deletion times, TTLs,
// clusterings), the row and column counts and whether any partition is
// deleted.
func NewBoundsCollector(clusteringTypes []*cqltype.Type) *Collector {
	c := NewCollector(clusteringTypes)
	c.boundsOnly = true
	return c
}

// NewCollector returns a Collector for a table whose clustering columns
// have these types (nil entries compare as bytes).
func NewCollector(clusteringTypes []*cqltype.Type) *Collector {
	c := &Collector{
		sizes:    NewEstimatedHistogram(PartitionSizeBuckets),
		cellsPer: NewEstimatedHistogram(CellsPerPartitionBuckets),
		drop:     map[int64]int64{},
		types:    clusteringTypes,
	}
	c.clearBounds()
	return c
}

// clearBounds sets each minimum above its maximum: the bounds then need
// no flag for "none seen yet" (a min and a max per value, no branch; seen
// is minimum ≤ maximum).
func (c *Collector) clearBounds() {
	c.minTS, c.maxTS = math.MaxInt64, math.MinInt64
	c.minLDT, c.maxLDT = math.MaxInt64, math.MinInt64
	c.minTTL, c.maxTTL = math.MaxInt64, math.MinInt64
}

func (c *Collector) seenTS() bool  { return c.minTS <= c.maxTS }
func (c *Collector) seenLDT() bool { return c.minLDT <= c.maxLDT }
func (c *Collector) seenTTL() bool { return c.minTTL <= c.maxTTL }

func (c *Collector) ts(v int64) {
	c.minTS, c.maxTS = min(c.minTS, v), max(c.maxTS, v)
}

func (c *Collector) ldt(v int64) {
	c.minLDT, c.maxLDT = min(c.minLDT, v), max(c.maxLDT, v)
	if v != NoDeletionTime && !c.boundsOnly {
		// StreamingTombstoneHistogramBuilder rounds up to 60 seconds.
		c.drop[(v+59)/60*60]++
	}
}

func (c *Collector) ttl(v int64) {
	c.minTTL, c.maxTTL = min(c.minTTL, v), max(c.maxTTL, v)
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

// Unfiltered records a static row, a row or a marker, whichever u is, and
// returns its cells, which the caller adds up for the partition's
// EndPartition (a marker has none).
func (c *Collector) Unfiltered(u *rows.Unfiltered) (cells int64) {
	switch u.Kind {
	case rows.KindStaticRow:
		return c.Static(u)
	case rows.KindMarker:
		c.Marker(u)
		return 0
	}
	return c.Row(u)
}

// Static records the static row, unless it is empty (Cassandra collects
// the stats of a static row only when it has something:
// SSTableWriter's StatsCollector.applyToStatic), and returns its cells.
func (c *Collector) Static(u *rows.Unfiltered) int64 {
	if len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion() && !hasScyllaShadowable(u) {
		return 0
	}
	return c.Row(u)
}

// hasScyllaShadowable reports whether u carries ScyllaDB's shadowable row
// deletion (extended flag 0x80), which convert writes as Cassandra's
// shadowable row deletion: Cassandra collects it as the row's deletion.
func hasScyllaShadowable(u *rows.Unfiltered) bool {
	return !u.ScyllaShadowable.IsLive() && u.ScyllaShadowable != (deletiontime.DeletionTime{})
}

// Row records a row (Rows.collectStats: the primary key liveness, the
// row deletion, each cell and complex deletion, the columns that have a
// cell) and returns its cells, which the caller adds up for the
// partition's EndPartition.
func (c *Collector) Row(u *rows.Unfiltered) (cells int64) {
	if u.Liveness.HasTimestamp {
		c.ts(u.Liveness.Timestamp)
		if u.Liveness.Expiring() {
			c.ttl(u.Liveness.TTL)
			c.ldt(u.Liveness.LocalExpirationTime)
		} else {
			c.ttlRange(0, 0)
			c.ldtRange(NoDeletionTime, NoDeletionTime)
		}
	}
	if u.HasDeletion() || (!u.Deletion.IsLive() && u.Deletion != (deletiontime.DeletionTime{})) {
		c.deletion(u.Deletion)
	}
	if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 && hasScyllaShadowable(u) {
		c.deletion(u.ScyllaShadowable)
	}
	for i := range u.ComplexDeletions {
		c.deletion(u.ComplexDeletions[i].Deletion)
	}
	if len(u.Cells) > 0 {
		c.cells(u.Cells)
	}
	c.rows++
	if u.Kind == rows.KindRow {
		c.candidate(clustering.Prefix{Kind: clustering.Clustering, Values: u.Clustering})
	}
	return int64(len(u.Cells))
}

// cells records a row's cells: the bounds are taken in local variables
// and folded in once (a live cell without a TTL has TTL 0 and no local
// deletion time), the drop times cell by cell; a column counts once
// however many cells it has (a complex column without a cell, only its
// deletion, does not count).
func (c *Collector) cells(cs []rows.Cell) {
	// One pass for what every cell has; the cells with a TTL or a
	// deletion time (rarer) are walked again.
	lo, hi := cs[0].Timestamp, cs[0].Timestamp
	cols, last := 0, -1
	specials := 0 // cells with a TTL or a deletion time
	for i := range cs {
		cell := &cs[i]
		lo, hi = min(lo, cell.Timestamp), max(hi, cell.Timestamp)
		if cell.Column != last {
			cols++
			last = cell.Column
		}
		// 1 for a cell with a TTL or a deletion time, without a branch
		// (the two kinds mix in rows: a branch mispredicts).
		f := int(cell.Flags & (rows.CellFlagDeleted | rows.CellFlagExpiring))
		specials += (f | -f) >> 63 & 1
	}
	plain, special := specials < len(cs), specials > 0
	c.minTS, c.maxTS = min(c.minTS, lo), max(c.maxTS, hi)
	c.columnsSet += int64(cols)
	if plain {
		// A live cell without a TTL: TTL 0, no local deletion time.
		c.ttlRange(0, 0)
		c.ldtRange(NoDeletionTime, NoDeletionTime)
	}
	if !special {
		return
	}
	first := true
	var minTTL, maxTTL, minLDT, maxLDT int64
	for i := range cs {
		cell := &cs[i]
		if cell.Flags&(rows.CellFlagDeleted|rows.CellFlagExpiring) == 0 {
			continue
		}
		var ttl int64
		ldt := cell.LocalDeletionTime
		if cell.IsExpiring() {
			ttl = cell.TTL
		}
		if first {
			minTTL, maxTTL, minLDT, maxLDT, first = ttl, ttl, ldt, ldt, false
		} else {
			minTTL, maxTTL = min(minTTL, ttl), max(maxTTL, ttl)
			minLDT, maxLDT = min(minLDT, ldt), max(maxLDT, ldt)
		}
		if !c.boundsOnly && ldt != NoDeletionTime {
			// StreamingTombstoneHistogramBuilder rounds up to 60 seconds.
			c.drop[(ldt+59)/60*60]++
		}
	}
	c.ttlRange(minTTL, maxTTL)
	c.ldtRange(minLDT, maxLDT)
}

// ttlRange and ldtRange widen the bounds without touching the drop times.
func (c *Collector) ttlRange(lo, hi int64) {
	c.minTTL, c.maxTTL = min(c.minTTL, lo), max(c.maxTTL, hi)
}

func (c *Collector) ldtRange(lo, hi int64) {
	c.minLDT, c.maxLDT = min(c.minLDT, lo), max(c.maxLDT, hi)
}

// Marker records a range tombstone bound or boundary.
func (c *Collector) Marker(u *rows.Unfiltered) {
	if u.Bound.Kind.IsBoundary() {
		c.deletion(u.EndDeletion)
		c.deletion(u.StartDeletion)
	} else {
		c.deletion(u.Deletion)
	}
	c.candidate(u.Bound)
}

// EndPartition records a partition's size in bytes (header to end of
// partition byte) and its cells.
func (c *Collector) EndPartition(size, cells int64) {
	c.sizes.Add(size)
	c.cellsPer.Add(cells)
	if c.hasPartMin {
		c.partVals = c.partMin.values(c.partVals)
		c.clust(clustering.Prefix{Kind: c.partMin.kind, Values: c.partVals})
	}
	if c.hasPartMax {
		c.partVals = c.partMax.values(c.partVals)
		c.clust(clustering.Prefix{Kind: c.partMax.kind, Values: c.partVals})
	}
	c.hasPartMin, c.hasPartMax = false, false
}

// candidate notes a row's clustering or a marker's bound for the
// partition's smallest and largest: Data.db holds a partition's rows and
// markers in clustering order, so its first clustering or start bound is
// its minimum and its last clustering or end bound its maximum, and
// EndPartition compares just those two with the sstable's (clust), where
// MetadataCollector compares every row; the result is the same. A
// boundary is never either (a start before it and an end after it are).
func (c *Collector) candidate(p clustering.Prefix) {
	switch {
	case p.Kind == clustering.Clustering:
		if !c.hasPartMin {
			c.partMin.set(p)
			c.hasPartMin = true
		}
		c.partMax.set(p)
		c.hasPartMax = true
	case p.Kind.IsBoundary():
	case p.Kind.IsStart():
		if !c.hasPartMin {
			c.partMin.set(p)
			c.hasPartMin = true
		}
	default:
		c.partMax.set(p)
		c.hasPartMax = true
	}
}

// heldPrefix is a copy of a clustering prefix kept from one row to the
// next: its kind, its values' bytes one after the other and their lengths
// (-1 for a null), in buffers reused, so that keeping a row's clustering
// costs a copy and no allocation.
type heldPrefix struct {
	kind  clustering.Kind
	bytes []byte
	lens  []int
}

func (h *heldPrefix) set(p clustering.Prefix) {
	h.kind = p.Kind
	h.bytes, h.lens = h.bytes[:0], h.lens[:0]
	for _, v := range p.Values {
		if v == nil {
			h.lens = append(h.lens, -1)
			continue
		}
		h.bytes = append(h.bytes, v...)
		h.lens = append(h.lens, len(v))
	}
}

// values returns the values, in vals (reused), aliasing h's bytes.
func (h *heldPrefix) values(vals [][]byte) [][]byte {
	vals = vals[:0]
	off := 0
	for _, n := range h.lens {
		if n < 0 {
			vals = append(vals, nil)
			continue
		}
		vals = append(vals, h.bytes[off:off+n:off+n])
		off += n
	}
	return vals
}

// clust widens the covered clusterings with a row's clustering or a
// marker's bound, as MetadataCollector.updateClusteringValues and
// updateClusteringValuesByBoundOrBoundary do: a value above the maximum
// is compared with nothing else (in a sorted stream one comparison a row);
// a boundary is never the minimum or the maximum (a start before it and
// an end after it are), so it is skipped; a start bound only ever becomes
// the minimum and an end bound the maximum.
func (c *Collector) clust(p clustering.Prefix) {
	if p.Kind.IsBoundary() {
		return
	}
	isStart := p.Kind.IsStart()
	isEnd := p.Kind != clustering.Clustering && !isStart
	if !c.seenMax || c.compare(p, c.maxClust) > 0 {
		switch {
		case !isStart:
			c.maxClust = keepPrefix(p, &c.maxBuf, c.maxClust.Values)
			c.seenMax = true
			if !c.seenMin && !isEnd {
				c.minClust = keepPrefix(p, &c.minBuf, c.minClust.Values)
				c.seenMin = true
			}
		case !c.seenMin:
			c.minClust = keepPrefix(p, &c.minBuf, c.minClust.Values)
			c.seenMin = true
		}
		return
	}
	if !c.seenMin || c.compare(p, c.minClust) < 0 {
		switch {
		case !isEnd:
			c.minClust = keepPrefix(p, &c.minBuf, c.minClust.Values)
			c.seenMin = true
		case !c.seenMax:
			c.maxClust = keepPrefix(p, &c.maxBuf, c.maxClust.Values)
			c.seenMax = true
		}
	}
}

// keepPrefix copies p's values into *buf (and the value slices into vals),
// both reused: the minimum and maximum change on most rows of a sorted
// stream, and a copy per row would allocate per row.
func keepPrefix(p clustering.Prefix, buf *[]byte, vals [][]byte) clustering.Prefix {
	n := 0
	for _, v := range p.Values {
		n += len(v)
	}
	b := (*buf)[:0]
	if cap(b) < n {
		b = make([]byte, 0, n)
	}
	vals = vals[:0]
	for _, v := range p.Values {
		if v == nil {
			vals = append(vals, nil)
			continue
		}
		off := len(b)
		b = append(b, v...)
		vals = append(vals, b[off:len(b):len(b)])
	}
	*buf = b
	return clustering.Prefix{Kind: p.Kind, Values: vals}
}

// compare orders two prefixes as ClusteringComparator.compare does: by
// their values with the clustering types, then, when one is a prefix of
// the other, the shorter by its kind's place against a clustering, and two
// of the same length by their kinds.
func (c *Collector) compare(a, b clustering.Prefix) int {
	return comparePrefixes(c.types, a, b)
}

// comparePrefixes is Collector.compare for any clustering types (nil
// entries compare as bytes).
func comparePrefixes(types []*cqltype.Type, a, b clustering.Prefix) int {
	n := min(len(a.Values), len(b.Values))
	for i := 0; i < n; i++ {
		var r int
		if i < len(types) && types[i] != nil {
			r = types[i].Compare(a.Values[i], b.Values[i])
		} else {
			r = bytes.Compare(a.Values[i], b.Values[i])
		}
		if r != 0 {
			return r
		}
	}
	switch {
	case len(a.Values) < len(b.Values):
		return comparedToClustering(a.Kind)
	case len(a.Values) > len(b.Values):
		return -comparedToClustering(b.Kind)
	}
	return kindOrder(a.Kind) - kindOrder(b.Kind)
}

// comparedToClustering is ClusteringPrefix.Kind's comparedToClustering:
// where a prefix of this kind sorts against a clustering that extends it.
func comparedToClustering(k clustering.Kind) int {
	switch k {
	case clustering.ExclEndBound, clustering.InclStartBound, clustering.ExclEndInclStartBoundary:
		return -1
	case clustering.StaticClustering:
		return -2
	case clustering.Clustering:
		return 0
	}
	return 1
}

// kindOrder is ClusteringPrefix.Kind's comparison: how two prefixes of
// the same values and length sort by their kinds.
func kindOrder(k clustering.Kind) int {
	switch k {
	case clustering.ExclEndBound, clustering.InclStartBound, clustering.ExclEndInclStartBoundary:
		return 0
	case clustering.StaticClustering:
		return 1
	case clustering.Clustering:
		return 2
	}
	return 3
}

// Fill sets the fields of s the Collector computes: the two histograms,
// the minimum and maximum timestamp, local deletion time and TTL (with
// Cassandra's values for "none"), the tombstone drop times, the covered
// clusterings, the row and column counts and whether any partition is
// deleted.
func (c *Collector) Fill(s *Stats) {
	s.PartitionSizes, s.CellsPerPartition = c.sizes, c.cellsPer
	s.MinTimestamp, s.MaxTimestamp = c.minTS, c.maxTS
	if !c.seenTS() {
		// MinMaxLongTracker's defaults.
		s.MinTimestamp, s.MaxTimestamp = math.MinInt64, math.MaxInt64
	}
	s.MinLocalDeletionTime, s.MaxLocalDeletionTime = c.minLDT, c.maxLDT
	if !c.seenLDT() {
		s.MinLocalDeletionTime, s.MaxLocalDeletionTime = NoDeletionTime, NoDeletionTime
	}
	s.MinTTL, s.MaxTTL = int32(c.minTTL), int32(c.maxTTL)
	if !c.seenTTL() {
		s.MinTTL, s.MaxTTL = 0, 0
	}
	s.TombstoneDropTimes = c.tombstoneHistogram()
	s.CoveredClustering = c.covered()
	s.TotalColumnsSet, s.TotalRows = c.columnsSet, c.rows
	s.HasPartitionLevelDeletions = c.partitionDeletions
}

// covered is the slice of clusterings the sstable holds (StatsMetadata's
// coveredClustering: Slice.make(minClustering.asStartBound(),
// maxClustering.asEndBound())): inclusive bounds around the smallest and
// largest clustering, or the range tombstone bounds that reach further.
// With no clustering at all it is MetadataCollector's initial MAX_START
// to MIN_END, an empty slice (exclusive bounds with no values), which
// only hasPartitionLevelDeletions makes a read look at.
func (c *Collector) covered() Slice {
	out := Slice{Start: clustering.Prefix{Kind: clustering.ExclStartBound}, End: clustering.Prefix{Kind: clustering.ExclEndBound}}
	if c.seenMin {
		out.Start = clustering.Prefix{Kind: clustering.InclStartBound, Values: c.minClust.Clone().Values}
		if c.minClust.Kind != clustering.Clustering {
			out.Start.Kind = c.minClust.Kind
		}
	}
	if c.seenMax {
		out.End = clustering.Prefix{Kind: clustering.InclEndBound, Values: c.maxClust.Clone().Values}
		if c.maxClust.Kind != clustering.Clustering {
			out.End.Kind = c.maxClust.Kind
		}
	}
	return out
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

// Merge adds what o collected to c, as if c had been given o's partitions
// after its own: o must have been made the same way (the same kind, the
// same clustering types). It lets a scan on several goroutines collect
// each part on its own and put the parts together in order.
func (c *Collector) Merge(o *Collector) {
	for i, n := range o.sizes.Buckets {
		c.sizes.Buckets[i] += n
	}
	for i, n := range o.cellsPer.Buckets {
		c.cellsPer.Buckets[i] += n
	}
	// A bound o has not seen is its minimum above its maximum, which
	// leaves c's as they are; ldt would count the values again in the
	// drop times, which are taken below.
	c.minTS, c.maxTS = min(c.minTS, o.minTS), max(c.maxTS, o.maxTS)
	c.ldtRange(o.minLDT, o.maxLDT)
	c.ttlRange(o.minTTL, o.maxTTL)
	for t, n := range o.drop {
		c.drop[t] += n
	}
	// The first one seen stays on ties, as in one pass: c's came first.
	if o.seenMin {
		c.clust(o.minClust)
	}
	if o.seenMax {
		c.clust(o.maxClust)
	}
	c.columnsSet += o.columnsSet
	c.rows += o.rows
	c.partitionDeletions = c.partitionDeletions || o.partitionDeletions
}

// Reset empties c for reuse, keeping its kind and clustering types.
func (c *Collector) Reset() {
	clear(c.sizes.Buckets)
	clear(c.cellsPer.Buckets)
	clear(c.drop)
	c.clearBounds()
	c.columnsSet, c.rows, c.partitionDeletions = 0, 0, false
	c.minClust.Values, c.maxClust.Values = c.minClust.Values[:0], c.maxClust.Values[:0]
	c.seenMin, c.seenMax, c.hasPartMin, c.hasPartMax = false, false, false, false
}
