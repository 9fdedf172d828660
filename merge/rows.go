package merge

import (
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// Order is ClusteringComparator over the rows and range tombstone markers
// of one table: the order they must have within a partition. Scrub checks
// Data.db's with it, as Cassandra's OrderCheckerIterator does.
type Order struct{ c comparator }

// NewOrder orders by the table's clustering types.
func NewOrder(clusteringTypes []*cqltype.Type) Order {
	return Order{comparator{types: clusteringTypes}}
}

// Compare is negative when a sorts before b, 0 when they are at one place
// (two versions of a row, or bounds that merge into one boundary).
func (o Order) Compare(a, b *rows.Unfiltered) int { return o.c.unfiltereds(a, b) }

// RowMerger reconciles versions of one row of one table — two rows of
// one partition with the same clustering, the duplicates Cassandra's
// scrubber merges (RowMergingSSTableIterator calls Rows.merge) — with the
// engine's rules: liveness, row deletion and what it shadows, cells by
// timestamp then tombstone then value, complex columns by their deletion
// and then path, counters by shard.
type RowMerger struct {
	regular, static rowMerger
}

// NewRowMerger merges rows of columns regular and static (a decoder
// schema's, with their types aligned).
func NewRowMerger(regular, static []rows.Column, regularTypes, staticTypes []*cqltype.Type) *RowMerger {
	m := &RowMerger{}
	m.regular.cols, m.static.cols, m.static.static = united(regular, regularTypes), united(static, staticTypes), true
	return m
}

func united(cols []rows.Column, types []*cqltype.Type) []column {
	out := make([]column, len(cols))
	for i, c := range cols {
		out[i] = column{Column: c, first: 0}
		if i < len(types) {
			out[i].typ = types[i]
		}
	}
	return out
}

// Merge returns the versions (rows, or static rows, in the order they were
// read) reconciled into a new row, or nil when nothing of them survives.
// The versions are left as they are.
func (m *RowMerger) Merge(vs ...*rows.Unfiltered) (*rows.Unfiltered, error) {
	rm := &m.regular
	if len(vs) > 0 && vs[0].Kind == rows.KindStaticRow {
		rm = &m.static
	}
	versions := make([]version, len(vs))
	for i, u := range vs {
		versions[i] = version{src: i, u: u}
	}
	ok, err := rm.merge(versions, noDeletion)
	if err != nil || !ok {
		return nil, err
	}
	return rm.out.Clone(), nil
}
