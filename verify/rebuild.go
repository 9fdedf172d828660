package verify

import (
	"fmt"
	"io"
	"slices"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/format/filter"
)

// The checks here rebuild, from what Data.db and Index.db hold, what the
// other components derive from them, the way Cassandra's writer derives
// it, and compare: a derived component whose bytes were damaged but still
// decode is caught where reading alone would take it as it is. For
// Statistics.db before na (mc, md, me: no checksum) this is the only check
// of its values.

// statsCheck rebuilds the parts of Statistics.db's stats component that a
// scan of Data.db determines exactly on every real sstable: the partition
// size histogram (its total is the partition count), and every bound and
// count reads and compactions rely on (stats.CompareCollected: the
// timestamps, local deletion times, TTLs, covered clusterings, the row and
// column counts, the partition-level deletion marker), gathered as
// MetadataCollector gathers them (stats.Collector). A bound or count that
// covers less than the rows is a problem (a read could skip live data); one
// that covers more, as ScyllaDB writes some, is a warning. The
// cells-per-partition histogram is not compared: Cassandra's own 3.x test
// sstable (negative-local-expiration, whose cells histogram counts each of
// its 2 partitions twice) and ScyllaDB's writer disagree with a scan on
// it. It is only held to no negative count and a total of at most twice
// the partitions.
type statsCheck struct {
	r     *Report
	path  string
	st    *stats.Stats
	sizes stats.EstimatedHistogram // with Statistics.db's own offsets
	col   *stats.Collector         // nil when rows are skimmed, not decoded
	cells int64                    // of the partition being walked
	// types and version say how to compare what col gathered.
	types   []*cqltype.Type
	version format.Version
}

func newStatsCheck(s *sstable.SSTable, r *Report, skimRows bool) *statsCheck {
	st := s.Stats().Stats
	if st == nil {
		return nil
	}
	c := &statsCheck{r: r, path: s.Path(format.ComponentStatistics), st: st}
	offs := st.PartitionSizes.Offsets
	if want := stats.NewOffsets(len(offs), false); !slices.Equal(offs, want) {
		i := 0
		for i < len(offs) && offs[i] == want[i] {
			i++
		}
		c.problem("partition size histogram offset %d is %d, EstimatedHistogram's offset %d is %d", i, offs[i], i, want[i])
	} else {
		c.sizes = stats.EstimatedHistogram{Offsets: offs, Buckets: make([]int64, len(offs)+1)}
	}
	for i, n := range st.PartitionSizes.Buckets {
		if n < 0 {
			c.problem("partition size histogram bucket %d holds %d partitions (a count below zero)", i, n)
		}
	}
	if offs := st.CellsPerPartition.Offsets; !slices.Equal(offs, stats.NewOffsets(len(offs), false)) {
		c.problem("cells per partition histogram offsets are not EstimatedHistogram's %d offsets", len(offs))
	}
	for i, n := range st.CellsPerPartition.Buckets {
		if n < 0 {
			c.problem("cells per partition histogram bucket %d holds %d partitions (a count below zero)", i, n)
		}
	}
	if !skimRows {
		c.types = s.ClusteringTypes()
		c.version = s.Version()
		c.col = stats.NewBoundsCollector(c.types)
	}
	r.Checks = append(r.Checks, "Statistics.db partition sizes, bounds and counts against Data.db")
	return c
}

// fork returns an empty statsCheck collecting like c, for one segment of
// a walk on several goroutines (merge puts it back).
func (c *statsCheck) fork() *statsCheck {
	if c == nil {
		return nil
	}
	f := &statsCheck{r: c.r, path: c.path, st: c.st, types: c.types, version: c.version}
	if c.sizes.Buckets != nil {
		f.sizes = stats.EstimatedHistogram{Offsets: c.sizes.Offsets, Buckets: make([]int64, len(c.sizes.Buckets))}
	}
	if c.col != nil {
		f.col = stats.NewBoundsCollector(c.types)
	}
	return f
}

// reset empties a fork for the next segment.
func (c *statsCheck) reset() {
	if c == nil {
		return
	}
	clear(c.sizes.Buckets)
	if c.col != nil {
		c.col.Reset()
	}
}

// merge adds what a fork collected, in Data.db order.
func (c *statsCheck) merge(f *statsCheck) {
	if c == nil {
		return
	}
	for i, n := range f.sizes.Buckets {
		c.sizes.Buckets[i] += n
	}
	if c.col != nil {
		c.col.Merge(f.col)
	}
}

func (c *statsCheck) problem(format string, args ...any) {
	c.r.add(Problem{File: c.path, Component: "Statistics.db", Offset: -1, Message: fmt.Sprintf(format, args...)})
}

func (c *statsCheck) startPartition(h *rows.PartitionHeader) {
	if c != nil && c.col != nil {
		c.col.PartitionDeletion(h.Deletion)
		c.cells = 0
	}
}

func (c *statsCheck) unfiltered(u *rows.Unfiltered) {
	if c == nil || c.col == nil {
		return
	}
	c.cells += c.col.Unfiltered(u)
}

func (c *statsCheck) endPartition(size int64) {
	if c == nil {
		return
	}
	if c.sizes.Buckets != nil {
		c.sizes.Add(size)
	}
	if c.col != nil {
		c.col.EndPartition(size, c.cells)
	}
}

// finish compares, once Data.db was read whole (a decoding error that
// stopped the walk leaves nothing to compare with).
func (c *statsCheck) finish() {
	if c == nil {
		return
	}
	if c.sizes.Buckets != nil {
		if want, got := c.sizes, c.st.PartitionSizes; !slices.Equal(want.Buckets, got.Buckets) {
			i := 0
			for want.Buckets[i] == got.Buckets[i] {
				i++
			}
			c.problem("partition size histogram: %d partitions in %s, Data.db has %d (of %d in all, the histogram counts %d)",
				got.Buckets[i], bucketName(got, i), want.Buckets[i], want.Count(), got.Count())
		}
	}
	if n, parts := c.st.CellsPerPartition.Count(), c.sizes.Count(); c.sizes.Buckets != nil && (n < 0 || n > 2*parts) {
		c.problem("cells per partition histogram counts %d partitions, Data.db has %d", n, parts)
	}
	if c.col == nil {
		return
	}
	var scanned stats.Stats
	c.col.Fill(&scanned)
	for _, m := range stats.CompareCollected(c.st, &scanned, c.version, c.types) {
		if m.Narrower {
			c.problem("%s: %s", m, m.Consequence())
			continue
		}
		c.r.Warnings = append(c.r.Warnings, Problem{File: c.path, Component: "Statistics.db", Offset: -1,
			Message: m.String() + " (a read or compaction only looks at more than it needs; convert, upgrade and scrub write the rows' own)"})
	}
}

// bucketName describes bucket i of h: the sizes it holds.
func bucketName(h stats.EstimatedHistogram, i int) string {
	switch {
	case i >= len(h.Offsets):
		return fmt.Sprintf("the overflow bucket (above %d bytes)", h.Offsets[len(h.Offsets)-1])
	case i == 0:
		return fmt.Sprintf("the bucket up to %d bytes", h.Offsets[0])
	}
	return fmt.Sprintf("the bucket of %d..%d bytes", h.Offsets[i-1]+1, h.Offsets[i])
}

// filterCheck rebuilds Filter.db from the keys: with the file's own hash
// count and capacity, every key's bits are where Cassandra's filter puts
// them, so the rebuilt bitset must equal the stored one. A bit set that no
// key sets is damage a lookup would never notice (the filter still says
// "present" for every key). The hash count must also be the one
// FilterFactory chooses for Statistics.db's bloom_filter_fp_chance. The
// capacity cannot be checked: it comes from the key count the writer
// expected, an estimate after a compaction.
//
// The writer of the sstable may hand over the filter of the keys it wrote
// (SSTableWritten): of Filter.db's hash count and capacity, it is the
// filter rebuilt from the keys once the writer's own comparison has shown
// them to be Data.db's, and the check compares with it as it is.
type filterCheck struct {
	r       *Report
	path    string
	old     bool
	file    *filter.BloomFilter
	rebuilt *filter.BloomFilter
	given   bool // rebuilt is the writer's: the keys are not added
}

func newFilterCheck(s *sstable.SSTable, r *Report, bf, written *filter.BloomFilter) *filterCheck {
	if bf == nil || bf.IsAlwaysPresent() {
		return nil
	}
	c := &filterCheck{r: r, path: s.Path(format.ComponentFilter), old: s.Version().HasOldBloomFilterFormat, file: bf, rebuilt: bf.Empty()}
	if written != nil && !written.IsAlwaysPresent() && written.HashCount() == bf.HashCount() && written.Capacity() == bf.Capacity() {
		c.rebuilt, c.given = written, true
		r.Checks = append(r.Checks, "Filter.db against the filter of the keys written")
		return c
	}
	r.Checks = append(r.Checks, "Filter.db rebuilt from the keys")
	return c
}

func (c *filterCheck) key(k []byte) {
	if c != nil && !c.given {
		c.rebuilt.Add(k)
	}
}

// keysMissing reports the keys read whose bits Filter.db lacks, which a
// lookup of the key would wrongly find absent. Probing the file's filter key
// by key costs a cache miss a probe on a large bitset, so the keys are
// checked together: the rebuilt filter holds every bit of every key read, and
// a linear sweep finds whether any of them is clear in the file. Only then
// does a second pass over Data.db's partition headers (Partitions.db keeps
// only key prefixes, and Data.db gives the partition's position) probe the
// file for each key to name those it lacks, up to the keys the walk read.
func (c *filterCheck) keysMissing(s *sstable.SSTable) {
	if c == nil {
		return
	}
	n, first, bits := c.rebuilt.Extra(c.file)
	if n == 0 {
		return
	}
	if c.given {
		// The writer's filter may hold a key Data.db does not (its own
		// comparison says so too): bits no key read names are a problem.
		before := len(c.r.Problems)
		defer func() {
			if len(c.r.Problems) == before {
				c.r.add(Problem{File: c.path, Component: "Filter.db", Offset: filter.FileOffset(first, c.old),
					Message: fmt.Sprintf("bits %08b of the filter of the keys written are clear (%d bytes of the bitset lack such bits)", bits, n)})
			}
		}()
	}
	left := c.r.Partitions
	s.EachPartition(func(h *rows.PartitionHeader, _ *rows.Decoder) error {
		if left <= 0 {
			return io.EOF
		}
		left--
		if !c.file.MightContain(h.Key) {
			c.r.add(Problem{File: c.path, Component: "Filter.db", Offset: -1,
				Message: fmt.Sprintf("bloom filter does not contain key %x (partition at Data.db byte %d)", h.Key, h.Offset)})
		}
		return nil
	})
}

// finish compares once Data.db was read whole.
func (c *filterCheck) finish(s *sstable.SSTable, partitions int64) {
	if c == nil {
		return
	}
	if v := s.Stats().Validation; v != nil {
		if want, err := filter.HashCountFor(partitions, v.BloomFilterFPChance); err == nil && want != 0 && want != c.file.HashCount() {
			c.r.add(Problem{File: c.path, Component: "Filter.db", Offset: 0,
				Message: fmt.Sprintf("%d hash functions, where bloom_filter_fp_chance %v (Statistics.db) gives %d", c.file.HashCount(), v.BloomFilterFPChance, want)})
		}
	}
	// A key whose bits are clear is reported with the key; here the bits
	// no key sets.
	n, first, bits := c.file.Extra(c.rebuilt)
	if n == 0 {
		return
	}
	c.r.add(Problem{File: c.path, Component: "Filter.db", Offset: filter.FileOffset(first, c.old),
		Message: fmt.Sprintf("bits %08b set that none of the %d keys sets (%d bytes of the bitset hold such bits)", bits, partitions, n)})
}

// checkHeaderTypes flags type classes in the serialization header that are
// not Cassandra's. A damaged class name still parses (as a custom type,
// whose values read as bytes), and before na nothing else checks the
// header; Cassandra loads each class by name and refuses the sstable when
// it cannot.
func checkHeaderTypes(s *sstable.SSTable, r *Report) {
	for _, f := range s.ForeignTypes() {
		r.add(Problem{File: s.Path(format.ComponentStatistics), Component: "Statistics.db", Offset: -1,
			Message: fmt.Sprintf("serialization header: %s has type class %q, which is not one of Cassandra's (Cassandra refuses an sstable whose type class it cannot load; its values read here as bytes)", f.Column, f.Class)})
	}
}
