package export

import (
	"strings"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/token"
)

// Source is what the partitions and cells datasets are read from: the
// partitions of one sstable (SSTableSource), in Data.db order. It is an
// interface so that a table's merged view (the merge engine, for a coming
// `export --merge`) can be exported the same way: it yields its merged
// partitions and reports no Data.db positions.
type Source interface {
	// Name is the sstable column's value and part of the file name
	// (part-<node>-<name>.parquet): an sstable's `nc-1-big`.
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
