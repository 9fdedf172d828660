// Package rows decodes and encodes the partitions of Data.db: the partition
// header (key and partition-level DeletionTime), the optional static row,
// rows and range tombstone markers ("unfiltereds") and their cells, as
// db/rows/UnfilteredSerializer.java, db/rows/Cell.java (Cell.Serializer),
// db/Columns.java (subset encoding) and db/SerializationHeader.java (vint
// deltas against the header's EncodingStats) define them.
//
// The decoder streams: it reuses one Unfiltered and slices of the input, so
// a full scan allocates nothing per row or cell. Anything a caller keeps
// beyond the next call must be copied (see Unfiltered.Clone).
package rows

import (
	"math"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
)

// Column is one static or regular column of the serialization header.
type Column struct {
	Name    string
	Type    string // AbstractType class string as stored in the header
	Fixed   int    // fixed value length, -1 when variable
	Complex bool   // multi-cell (non-frozen collection or UDT): cells carry a path
	Counter bool
}

// Schema is what the decoder needs from Statistics.db's serialization
// header: clustering value widths, the static and regular columns in
// Cassandra's Columns order, and the EncodingStats minima that every
// timestamp, local deletion time and TTL in Data.db is a delta against.
type Schema struct {
	Version              format.Version
	ClusteringFixed      []int
	Static               []Column
	Regular              []Column
	MinTimestamp         int64
	MinLocalDeletionTime int64
	MinTTL               int64
}

// Flags of an unfiltered (UnfilteredSerializer).
const (
	FlagEndOfPartition   = 0x01
	FlagIsMarker         = 0x02
	FlagHasTimestamp     = 0x04
	FlagHasTTL           = 0x08
	FlagHasDeletion      = 0x10
	FlagHasAllColumns    = 0x20
	FlagHasComplexDelete = 0x40
	FlagExtension        = 0x80
	ExtFlagIsStatic      = 0x01
	ExtFlagShadowableDel = 0x02
	// ExtFlagScyllaShadowable is ScyllaDB's own extension of Cassandra's
	// m* formats: a second, shadowable row deletion follows the regular one
	// (Scylla can hold both; Cassandra's 0x02 marks the one deletion
	// shadowable). Cassandra does not know the bit.
	ExtFlagScyllaShadowable = 0x80
	CellFlagDeleted         = 0x01
	CellFlagExpiring        = 0x02
	CellFlagEmptyValue      = 0x04
	CellFlagUseRowTS        = 0x08
	CellFlagUseRowTTL       = 0x10
	noTTL                   = 0
	noDeletionTimeLegacy    = math.MaxInt32
	noDeletionTime          = math.MaxInt64
)

// PartitionHeader is the start of a partition in Data.db.
type PartitionHeader struct {
	Offset   int64 // position of the partition in uncompressed Data.db
	Key      []byte
	Deletion deletiontime.DeletionTime
	// Size is the header's width: 2 + len(Key) + the DeletionTime's width.
	Size int
}

// Kind says what an Unfiltered is.
type Kind uint8

const (
	KindRow Kind = iota
	KindStaticRow
	KindMarker
)

func (k Kind) String() string {
	switch k {
	case KindStaticRow:
		return "static_row"
	case KindMarker:
		return "range_tombstone_bound"
	}
	return "row"
}

// Liveness is a row's primary key liveness info.
type Liveness struct {
	HasTimestamp bool
	Timestamp    int64
	TTL          int64 // 0 when not expiring
	// LocalExpirationTime is seconds since the epoch when the row expires.
	LocalExpirationTime int64
}

// Expiring reports whether the liveness carries a TTL.
func (l Liveness) Expiring() bool { return l.TTL != noTTL }

// Cell is one simple cell or one element of a complex (multi-cell) column.
type Cell struct {
	Column            int // index into Schema.Static or Schema.Regular
	Flags             byte
	Timestamp         int64
	LocalDeletionTime int64 // for tombstones and expiring cells
	TTL               int64
	Path              []byte // element path of a complex column, nil otherwise
	Value             []byte
}

// IsTombstone reports whether the cell is a deletion.
func (c *Cell) IsTombstone() bool { return c.Flags&CellFlagDeleted != 0 }

// IsExpiring reports whether the cell has a TTL.
func (c *Cell) IsExpiring() bool { return c.Flags&CellFlagExpiring != 0 }

// ComplexDeletion is the deletion of a whole complex column within a row.
type ComplexDeletion struct {
	Column   int
	Deletion deletiontime.DeletionTime
}

// Unfiltered is a row, static row or range tombstone marker. The decoder
// reuses it; its slices alias decoder buffers.
type Unfiltered struct {
	Kind     Kind
	Offset   int64 // position in uncompressed Data.db
	Size     int64 // whole serialized width, flags to last cell
	Flags    byte
	ExtFlags byte
	PrevSize uint64 // size of the previous unfiltered (or partition header)

	Clustering [][]byte          // rows: one value per clustering column
	Bound      clustering.Prefix // markers

	Liveness   Liveness
	Deletion   deletiontime.DeletionTime // row deletion, or a bound marker's deletion
	Shadowable bool
	// ScyllaShadowable is the shadowable row deletion ScyllaDB writes under
	// ExtFlagScyllaShadowable; the zero value when there is none.
	ScyllaShadowable deletiontime.DeletionTime

	// Boundary markers close one deletion and open another.
	EndDeletion, StartDeletion deletiontime.DeletionTime

	Cells            []Cell
	ComplexDeletions []ComplexDeletion
	// ColumnsPresent counts the columns the row carries.
	ColumnsPresent int
}

// reset clears u for the next decode, keeping its slices' capacity. It
// assigns field by field: building a whole new Unfiltered and copying it
// cost a third of a partition scan (pointer write barriers on every row).
func (u *Unfiltered) reset() {
	u.Kind, u.Offset, u.Size, u.Flags, u.ExtFlags, u.PrevSize = 0, 0, 0, 0, 0, 0
	if len(u.Clustering) > 0 {
		u.Clustering = u.Clustering[:0]
	}
	u.Bound.Kind = 0
	if len(u.Bound.Values) > 0 {
		u.Bound.Values = u.Bound.Values[:0]
	}
	u.Liveness = Liveness{}
	u.Deletion, u.EndDeletion, u.StartDeletion = deletiontime.DeletionTime{}, deletiontime.DeletionTime{}, deletiontime.DeletionTime{}
	u.Shadowable = false
	u.ScyllaShadowable = deletiontime.DeletionTime{}
	if len(u.Cells) > 0 {
		u.Cells = u.Cells[:0]
	}
	if len(u.ComplexDeletions) > 0 {
		u.ComplexDeletions = u.ComplexDeletions[:0]
	}
	u.ColumnsPresent = 0
}

// IsBoundary reports whether a marker closes one range and opens another.
func (u *Unfiltered) IsBoundary() bool { return u.Kind == KindMarker && u.Bound.Kind.IsBoundary() }

// IsEmpty reports whether a row carries nothing at all: no cells, no
// complex deletion, no liveness and no deletion (sstabledump skips such a
// static row).
func (u *Unfiltered) IsEmpty() bool {
	return len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion()
}

// HasDeletion reports whether a row carries a row-level deletion.
func (u *Unfiltered) HasDeletion() bool { return u.Flags&FlagHasDeletion != 0 }

// Tombstones counts the deletions an unfiltered carries: a marker, a row
// deletion, complex column deletions and tombstone cells.
func (u *Unfiltered) Tombstones() int {
	if u.Kind == KindMarker {
		return 1
	}
	n := len(u.ComplexDeletions)
	if u.HasDeletion() {
		n++
	}
	for i := range u.Cells {
		if u.Cells[i].IsTombstone() {
			n++
		}
	}
	return n
}

// Clone returns a deep copy that stays valid after the decoder moves on.
func (u *Unfiltered) Clone() *Unfiltered {
	c := *u
	c.Clustering = cloneValues(u.Clustering)
	c.Bound.Values = cloneValues(u.Bound.Values)
	c.Cells = make([]Cell, len(u.Cells))
	for i, cell := range u.Cells {
		cell.Path = cloneBytes(cell.Path)
		cell.Value = cloneBytes(cell.Value)
		c.Cells[i] = cell
	}
	c.ComplexDeletions = append([]ComplexDeletion(nil), u.ComplexDeletions...)
	return &c
}

func cloneValues(vs [][]byte) [][]byte {
	if vs == nil {
		return nil
	}
	out := make([][]byte, len(vs))
	for i, v := range vs {
		out[i] = cloneBytes(v)
	}
	return out
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append(make([]byte, 0, len(b)), b...)
}
