package inspect

import (
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
)

// PartitionCounts is what sstablepartitions (tools/SSTablePartitions.java)
// counts in one partition. Rows and cells leave out the static row, as its
// scan does; tombstones are row deletions, range tombstone markers (a
// boundary once), complex column deletions, tombstone cells, and rows and
// cells whose TTL has expired at the time given; the partition deletion is
// Live, not a tombstone.
type PartitionCounts struct {
	Key    []byte // valid until the next partition
	Offset int64  // in uncompressed Data.db
	Size   int64  // header to end-of-partition byte, inclusive
	Live   bool   // no partition-level deletion

	// With PartitionsOnly the counts below are not taken (all zero) but
	// Rows, which a scan over row sizes finds anyway.
	Rows, Cells       int64
	RowTombstones     int64
	RangeTombstones   int64
	ComplexTombstones int64
	CellTombstones    int64
	RowTTLExpired     int64
	CellTTLExpired    int64
}

// Tombstones is sstablepartitions' tombstone count: every kind, TTLs
// expired included.
func (p *PartitionCounts) Tombstones() int64 {
	return p.RowTombstones + p.RangeTombstones + p.ComplexTombstones + p.CellTombstones + p.RowTTLExpired + p.CellTTLExpired
}

// CountOptions says how a partition is counted.
type CountOptions struct {
	// Now is the time in seconds since the epoch at which TTLs are expired
	// (sstablepartitions -u, default the current time).
	Now int64
	// PartitionsOnly steps over rows by their sizes (sstablepartitions -y):
	// the size and the row count only.
	PartitionsOnly bool
}

// CountPartition reads the rest of a partition whose header dec has just
// read and fills p.
func CountPartition(h *rows.PartitionHeader, dec *rows.Decoder, o CountOptions, p *PartitionCounts) error {
	p.Begin(h)
	if o.PartitionsOnly {
		sk, err := dec.SkimRest()
		if err != nil {
			return err
		}
		p.Rows = sk.Rows
		if sk.HasStatic {
			p.Rows--
		}
		p.Size = dec.Pos() - h.Offset
		return nil
	}
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		p.Add(u, o.Now)
	}
	p.Size = dec.Pos() - h.Offset
	return nil
}

// Begin starts counting the partition whose header is h (Size is left
// for the caller, who knows where the partition ends).
func (p *PartitionCounts) Begin(h *rows.PartitionHeader) {
	*p = PartitionCounts{Key: h.Key, Offset: h.Offset, Live: h.Deletion.IsLive()}
}

// Add counts one unfiltered of the partition, with TTLs expired as of now
// (seconds since the epoch): what CountPartition does for each, for a
// caller that reads the unfiltereds itself (the Parquet export counts
// while it writes the cells).
func (p *PartitionCounts) Add(u *rows.Unfiltered, now int64) {
	switch u.Kind {
	case rows.KindStaticRow:
		return // the scan's rows do not include the static row
	case rows.KindMarker:
		p.RangeTombstones++
		return
	}
	p.Rows++
	if u.HasDeletion() {
		p.RowTombstones++
	}
	live := u.Liveness
	// LivenessInfo.isExpiring && localExpirationTime < now.
	if live.HasTimestamp && live.Expiring() && live.LocalExpirationTime < now {
		p.RowTTLExpired++
	}
	for _, cd := range u.ComplexDeletions {
		if !cd.Deletion.IsLive() {
			p.ComplexTombstones++
		}
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		p.Cells++
		if c.IsTombstone() {
			p.CellTombstones++
		}
		// A cell expired on its own: not the row's TTL, and
		// !Cell.isLive(now), which for an expiring cell is
		// now >= its local deletion time.
		if c.IsExpiring() && (!live.HasTimestamp || c.TTL != live.TTL) && now >= c.LocalDeletionTime {
			p.CellTTLExpired++
		}
	}
}

// PartitionStats is sstablepartitions' summary of one sstable (its
// SSTableStats): histograms of partition size and of row, cell and
// tombstone counts, and exact minima and maxima. The minima copy its
// quirk: a zero is replaced by the next value, so they are the smallest
// nonzero count unless every partition has zero.
type PartitionStats struct {
	Size, Rows, Cells, Tombstones stats.EstimatedHistogram
	MinSize, MaxSize              int64
	MinRows, MaxRows              int64
	MinCells, MaxCells            int64
	MinTombstones, MaxTombstones  int64
}

// NewPartitionStats returns empty statistics with sstablepartitions'
// histogram sizes: 155 buckets for sizes (up to 3.5 TB), 118 for counts
// (over 4 billion), both with a bucket for zero.
func NewPartitionStats() *PartitionStats {
	h := func(n int) stats.EstimatedHistogram {
		offs := stats.NewOffsets(n, true)
		return stats.EstimatedHistogram{Offsets: offs, Buckets: make([]int64, len(offs)+1)}
	}
	return &PartitionStats{Size: h(155), Rows: h(118), Cells: h(118), Tombstones: h(118)}
}

// Add counts one partition.
func (s *PartitionStats) Add(p *PartitionCounts) {
	t := p.Tombstones()
	s.Size.Add(p.Size)
	s.Rows.Add(p.Rows)
	s.Cells.Add(p.Cells)
	s.Tombstones.Add(t)
	minMax(&s.MinSize, &s.MaxSize, p.Size)
	minMax(&s.MinRows, &s.MaxRows, p.Rows)
	minMax(&s.MinCells, &s.MaxCells, p.Cells)
	minMax(&s.MinTombstones, &s.MaxTombstones, t)
}

func minMax(lo, hi *int64, v int64) {
	if *lo == 0 || v < *lo {
		*lo = v
	}
	if v > *hi {
		*hi = v
	}
}

// Count is the number of partitions added.
func (s *PartitionStats) Count() int64 { return s.Size.Count() }
