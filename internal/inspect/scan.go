package inspect

import (
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
)

// ScanInfo is what `sstablemetadata --scan` learns from reading every
// partition (SSTableMetadataViewer.printScannedOverview), with histograms
// of the per-partition figures besides its top fives.
//
// Its counts are sstablemetadata's: rows include a non-empty static row;
// cells and tombstones are those of the other rows (a static row's cells
// are not counted); tombstones are partition deletions, tombstone cells
// and range tombstone markers (not row or collection deletions). The
// Largest Partitions are by data size, the sum of Row.dataSize as
// Cassandra 5.0 computes it in memory (clustering values, 8-byte
// timestamps, TTLs and deletion times, values and cell paths), not bytes
// on disk; the PartitionSize histogram is bytes of Data.db, the measure
// of Statistics.db's own partition size histogram.
type ScanInfo struct {
	Size       int64 `json:"size"` // uncompressed Data.db length
	Partitions int64 `json:"partitions"`
	Rows       int64 `json:"rows"`
	Tombstones int64 `json:"tombstones"`
	Cells      int64 `json:"cells"`
	// The five largest values; ties keep Data.db order.
	Widest           []KeyValue `json:"widest_partitions"`  // rows
	Largest          []KeyValue `json:"largest_partitions"` // data size
	TombstoneLeaders []KeyValue `json:"tombstone_leaders"`  // tombstones, when not zero

	PartitionSize          Histogram `json:"partition_size"` // bytes of Data.db
	RowsPerPartition       Histogram `json:"rows_per_partition"`
	CellsPerPartition      Histogram `json:"cells_per_partition"`
	TombstonesPerPartition Histogram `json:"tombstones_per_partition"`
}

// KeyValue is a partition key and a figure of that partition.
type KeyValue struct {
	Key   string `json:"key"`
	Value int64  `json:"value"`
}

// topN keeps the n largest values seen, largest first; among equal
// values the first seen stays ahead.
type topN struct {
	n     int
	items []KeyValue
}

func (t *topN) add(value int64, key func() string) {
	if len(t.items) == t.n && value <= t.items[len(t.items)-1].Value {
		return
	}
	i := len(t.items)
	for i > 0 && t.items[i-1].Value < value {
		i--
	}
	if len(t.items) < t.n {
		t.items = append(t.items, KeyValue{})
	}
	copy(t.items[i+1:], t.items[i:])
	t.items[i] = KeyValue{Key: key(), Value: value}
}

// Sizes that Row.dataSize counts for each part of a row in Cassandra 5.0
// (TypeSizes.sizeof of the fields): a timestamp is a long, a TTL an int,
// and since 5.0 a local deletion or expiration time a long; a
// DeletionTime is 12 bytes, a row deletion 13 (its shadowable flag).
const (
	livenessSize         = 8
	expiringLivenessSize = 8 + 4 + 8
	rowDeletionSize      = 12 + 1
	cellFixedSize        = 8 + 4 + 8
	complexDeletionSize  = 12
)

// rowDataSize is Row.dataSize (BTreeRow.dataSize) of a decoded row.
func rowDataSize(u *rows.Unfiltered, complexCols []bool) int64 {
	n := int64(rowDeletionSize)
	if u.Liveness.HasTimestamp && u.Liveness.Expiring() {
		n += expiringLivenessSize
	} else {
		n += livenessSize
	}
	for _, v := range u.Clustering {
		n += int64(len(v))
	}
	last := -1
	cd := 0
	for i := range u.Cells {
		c := &u.Cells[i]
		n += cellFixedSize + int64(len(c.Value)) + int64(len(c.Path))
		if c.Column < len(complexCols) && complexCols[c.Column] && c.Column != last {
			// A complex column counts its deletion's 12 bytes, live or not.
			n += complexDeletionSize
			last = c.Column
		}
	}
	// Complex columns with a deletion and no cells.
	for ; cd < len(u.ComplexDeletions); cd++ {
		col := u.ComplexDeletions[cd].Column
		has := false
		for i := range u.Cells {
			if u.Cells[i].Column == col {
				has = true
				break
			}
		}
		if !has {
			n += complexDeletionSize
		}
	}
	return n
}

// Scan reads every partition of s. progress, when not nil, is called with
// the Data.db offset reached.
func Scan(s *sstable.SSTable, progress func(off int64)) (*ScanInfo, error) {
	info := &ScanInfo{Size: s.Data().Length()}
	newHist := func(n int) stats.EstimatedHistogram {
		offs := stats.NewOffsets(n, true)
		return stats.EstimatedHistogram{Offsets: offs, Buckets: make([]int64, len(offs)+1)}
	}
	sizes, rowsH, cellsH, tombH := newHist(stats.PartitionSizeBuckets), newHist(stats.CellsPerPartitionBuckets),
		newHist(stats.CellsPerPartitionBuckets), newHist(stats.CellsPerPartitionBuckets)
	widest, largest, leaders := &topN{n: 5}, &topN{n: 5}, &topN{n: 5}
	var lo, hi [4]int64 // exact minima and maxima: size, rows, cells, tombstones
	staticComplex := complexColumns(s.Schema().Static)
	regularComplex := complexColumns(s.Schema().Regular)
	err := s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		if progress != nil {
			progress(h.Offset)
		}
		var prows, psize, pcells, ptomb int64
		if !h.Deletion.IsLive() {
			ptomb++
		}
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
				if len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion() {
					continue // an empty static row
				}
				prows++
				psize += rowDataSize(u, staticComplex)
			case rows.KindMarker:
				ptomb++
			default:
				prows++
				psize += rowDataSize(u, regularComplex)
				for i := range u.Cells {
					pcells++
					if u.Cells[i].IsTombstone() {
						ptomb++
					}
				}
			}
		}
		info.Partitions++
		info.Rows += prows
		info.Cells += pcells
		info.Tombstones += ptomb
		size := dec.Pos() - h.Offset
		for i, v := range [4]int64{size, prows, pcells, ptomb} {
			if info.Partitions == 1 || v < lo[i] {
				lo[i] = v
			}
			hi[i] = max(hi[i], v)
		}
		sizes.Add(size)
		rowsH.Add(prows)
		cellsH.Add(pcells)
		tombH.Add(ptomb)
		key := func() string { return FormatKey(s.KeyType(), h.Key) }
		widest.add(prows, key)
		largest.add(psize, key)
		if ptomb > 0 {
			leaders.add(ptomb, key)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	info.Widest, info.Largest, info.TombstoneLeaders = nonNil(widest.items), nonNil(largest.items), nonNil(leaders.items)
	info.PartitionSize = histogram(sizes)
	info.RowsPerPartition = histogram(rowsH)
	info.CellsPerPartition = histogram(cellsH)
	info.TombstonesPerPartition = histogram(tombH)
	// The histograms' min and max are bucket bounds; the scan knows them exactly.
	for i, h := range []*Histogram{&info.PartitionSize, &info.RowsPerPartition, &info.CellsPerPartition, &info.TombstonesPerPartition} {
		h.Min, h.Max = lo[i], hi[i]
	}
	return info, nil
}

func nonNil(kv []KeyValue) []KeyValue {
	if kv == nil {
		return []KeyValue{}
	}
	return kv
}

func complexColumns(cols []rows.Column) []bool {
	out := make([]bool, len(cols))
	for i, c := range cols {
		out[i] = c.Complex
	}
	return out
}
