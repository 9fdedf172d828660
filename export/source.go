package export

import (
	"strings"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
)

// Source is what the partitions and cells datasets are read from: the
// partitions of one sstable (SSTableSource), in Data.db order, or of a
// table's merged view (a MergedSource, which `export --merge` makes of
// the merge engine's scan), in token order.
type Source interface {
	// Name is part of the file name (part-<node>-<name>.parquet) and the
	// sstable column's value: an sstable's `nc-1-big`, a merged view's
	// `merged`.
	Name() string
	// Version is the version column's value.
	Version() string
	// The table's schema, as the decoder and sstabledump use it.
	Schema() *rows.Schema
	KeyType() *cqltype.Type
	ClusteringTypes() []*cqltype.Type
	StaticTypes() []*cqltype.Type
	RegularTypes() []*cqltype.Type
	Partitioner() token.Partitioner
	// Length is the work EachPartition does, in the unit of PartitionRows.Pos,
	// for progress (0 when unknown).
	Length() int64
	// EachPartition calls fn with each partition's header and its rows,
	// which fn reads to the end (Next returns nil).
	EachPartition(fn func(h *rows.PartitionHeader, r PartitionRows) error) error
}

// PartitionRows is the rest of one partition: its static row, rows and
// range tombstone markers. *rows.Decoder is one.
type PartitionRows interface {
	// Next returns the next unfiltered (reused by the next call), or nil
	// at the end of the partition.
	Next(skipCells bool) (*rows.Unfiltered, error)
	// Pos is the position reached in uncompressed Data.db: once Next has
	// returned nil, the partition's size is Pos() minus its header's
	// offset. A source without positions (a merged view) returns -1, and
	// its partitions have no offset and size.
	Pos() int64
}

// MergedSource is a Source whose partitions are merged from several
// sstables: its PartitionRows are MergedRows, and the cells dataset's
// sstable column names, for each record, the sstable it came from.
type MergedSource interface {
	Source
	// SSTables names the sstables merged (as an sstable's Name), in the
	// order Origin's indexes refer to.
	SSTables() []string
	// Reached is how far the scan has read, in Length's unit, for
	// progress.
	Reached() int64
}

// MergedRows are the rows of a merged partition, each part with the
// sstable it came from.
type MergedRows interface {
	PartitionRows
	// Origin is where the parts of the unfiltered Next returned last came
	// from (valid until the next call).
	Origin() *Origin
}

// Origin says which sstable (an index into MergedSource.SSTables) each
// part of a merged unfiltered came from. An index outside them (the merge
// engine's -2 for a counter whose shards it combined from several) stands
// for no one sstable: the sstable column then says `merged`.
type Origin struct {
	// Liveness and Deletion are a row's primary key liveness and row
	// deletion; for a range tombstone bound, Deletion is the bound's.
	Liveness, Deletion int
	// End and Start are a range tombstone boundary's closing and opening
	// deletions.
	End, Start int
	// Cells and ComplexDeletions are aligned with the unfiltered's.
	Cells, ComplexDeletions []int
}

// sstableSource is an sstable as a Source.
type sstableSource struct{ *sstable.SSTable }

// SSTableSource is s as a Source.
func SSTableSource(s *sstable.SSTable) Source { return sstableSource{s} }

func (s sstableSource) Name() string    { return strings.TrimSuffix(s.Desc().Prefix(), "-") }
func (s sstableSource) Version() string { return s.SSTable.Version().Name }
func (s sstableSource) Length() int64   { return s.Data().Length() }

func (s sstableSource) EachPartition(fn func(h *rows.PartitionHeader, r PartitionRows) error) error {
	return s.SSTable.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error { return fn(h, dec) })
}
