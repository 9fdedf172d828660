// Package workload defines the write/read operations that memsim replays and
// the workload profile format shared with `sstabletool generate`: a schema
// shape, partition and row counts, value sizes, a write/overwrite/delete mix,
// TTLs, reads and a seed, in YAML or JSON (gopkg.in/yaml.v3 reads both).
//
// A profile becomes a Source: a deterministic generator that fills one
// reusable Op per call, so replaying millions of operations allocates nothing
// per operation. Other sources (for example the cells of real sstables) only
// need to fill the same Op.
package workload

// OpKind says whether an Op writes or reads.
type OpKind uint8

const (
	// OpWrite applies Key/Clustering/Cells/Deletion as one partition update.
	OpWrite OpKind = iota
	// OpRead looks up the partition Key and reads all of its rows.
	OpRead
)

// Deletion is the kind of tombstone an Op writes, if any.
type Deletion uint8

const (
	DelNone      Deletion = iota
	DelPartition          // partition-level deletion of Key
	DelRow                // row deletion of Key/Clustering
	DelRange              // range tombstone from Clustering to RangeEnd, both inclusive
)

// ReadPattern is how a read picks its key, after Cassandra's
// ReadSmallPartitionsBench: a fixed key, random keys inside the written range,
// random keys partly outside it (range + 1/6), and keys outside it.
type ReadPattern uint8

const (
	ReadFixed ReadPattern = iota
	ReadInside
	ReadPartlyOutside
	ReadOutside
)

var readPatternNames = [...]string{"fixed", "inside", "partly_outside", "outside"}

func (p ReadPattern) String() string {
	if int(p) < len(readPatternNames) {
		return readPatternNames[p]
	}
	return "unknown"
}

// ReadPatterns lists every pattern in a stable order.
var ReadPatterns = []ReadPattern{ReadFixed, ReadInside, ReadPartlyOutside, ReadOutside}

// NoTTL and NoDeletionTime are the values of live, non-expiring data.
const (
	NoTTL          = 0
	NoDeletionTime = int64(1<<63 - 1)
)

// Cell is one cell of a row. A tombstone has no value.
type Cell struct {
	Column    int    // index into Schema.Columns
	Path      []byte // element path of a multi-cell column, nil for simple cells
	Value     []byte
	Timestamp int64
	TTL       int32 // seconds, NoTTL when not expiring
	// LocalDeletionTime is when an expiring cell expires or when a tombstone
	// was written (seconds since the epoch); NoDeletionTime for live cells.
	LocalDeletionTime int64
	Tombstone         bool
}

// Op is one operation. Sources reuse one Op and its slices between calls:
// a consumer that keeps bytes beyond the next call must copy them.
type Op struct {
	Kind OpKind
	Read ReadPattern // for OpRead

	Key        []byte   // serialized partition key
	Clustering [][]byte // one value per clustering column; empty for tables without clustering
	Static     bool     // the row is the static row

	// Primary key liveness (the row marker an INSERT writes).
	HasLiveness         bool
	Timestamp           int64
	TTL                 int32
	LocalExpirationTime int64

	Deletion          Deletion
	DeletedAt         int64 // markedForDeleteAt of the tombstone
	LocalDeletionTime int64 // when the tombstone was written, seconds
	RangeEnd          [][]byte

	Cells []Cell
	// ComplexDeletions delete whole complex (collection) columns of the
	// row, as overwriting a collection does; sstables hold them.
	ComplexDeletions []ComplexDeletion
}

// ComplexDeletion is the deletion of one complex column of a row.
type ComplexDeletion struct {
	Column            int // index into Schema.Columns
	DeletedAt         int64
	LocalDeletionTime int64
}

// Reset clears the Op but keeps its buffers.
func (o *Op) Reset() {
	o.Kind = OpWrite
	o.Read = 0
	o.Key = o.Key[:0]
	o.Clustering = o.Clustering[:0]
	o.Static = false
	o.HasLiveness = false
	o.Timestamp, o.TTL, o.LocalExpirationTime = 0, 0, NoDeletionTime
	o.Deletion, o.DeletedAt, o.LocalDeletionTime = DelNone, 0, NoDeletionTime
	o.RangeEnd = o.RangeEnd[:0]
	o.Cells = o.Cells[:0]
	o.ComplexDeletions = o.ComplexDeletions[:0]
}

// AddCell appends a cell, reusing the slot's buffers.
func (o *Op) AddCell() *Cell {
	if len(o.Cells) < cap(o.Cells) {
		o.Cells = o.Cells[:len(o.Cells)+1]
	} else {
		o.Cells = append(o.Cells, Cell{})
	}
	c := &o.Cells[len(o.Cells)-1]
	c.Column, c.Path, c.Value = 0, c.Path[:0], c.Value[:0]
	c.Timestamp, c.TTL, c.LocalDeletionTime, c.Tombstone = 0, NoTTL, NoDeletionTime, false
	return c
}

// AddValue appends an emptied value buffer to vals, reusing spare capacity,
// and returns the slice and the new buffer's index.
func AddValue(vals [][]byte) ([][]byte, int) {
	if len(vals) < cap(vals) {
		vals = vals[:len(vals)+1]
		vals[len(vals)-1] = vals[len(vals)-1][:0]
	} else {
		vals = append(vals, nil)
	}
	return vals, len(vals) - 1
}

// Column describes one column of the schema a Source writes.
type Column struct {
	Name    string
	Static  bool
	Complex bool // multi-cell: cells carry a path
}

// Schema is the table shape a Source writes: the regular and static
// columns its cells index, and the number of clustering columns.
type Schema struct {
	PartitionKey []string
	Clustering   []string
	Columns      []Column
}

// Source yields operations. Next fills op (reusing its buffers) and reports
// false at the end of the stream.
type Source interface {
	Schema() *Schema
	Next(op *Op) (bool, error)
}
