package merge

import (
	"github.com/sstabletool/sstabletool/format/rows"
)

// DropColumns tells the table when its dropped columns were dropped:
// times maps a column's name to its drop time in microseconds
// (system_schema.dropped_columns' dropped_time, as the node reads it
// back, or DROP ... USING TIMESTAMP). Every read of the table then leaves
// out a dropped column's cells written at or before its drop, and its
// collection deletions made at or before it, as Cassandra's deserializer
// does before any merge (DeserializationHelper.isDropped and
// isDroppedComplexDeletion, called by UnfilteredSerializer's
// readSimpleColumn and readComplexColumn on every branch from 3.0, where
// it is SerializationHelper, to 5.0). A column added again after its drop
// keeps the cells written after it. Explanations give such a version the
// verdict DroppedColumn. A column the sstables do not hold is ignored;
// nil forgets the drops.
func (t *Table) DropColumns(times map[string]int64) {
	t.hasDropped = false
	for _, cols := range [][]column{t.static, t.regular} {
		for i := range cols {
			at, ok := times[cols[i].Name]
			cols[i].dropped, cols[i].droppedAt = ok, at
			t.hasDropped = t.hasDropped || ok
		}
	}
}

// dropCells takes out of a version, in place, the cells and collection
// deletions a drop left behind, recording each as lost to it. It reports
// whether anything is left of the version (a row with only such cells
// and no liveness or deletion is no row: Row.Merger.merge writes none).
func (m *rowMerger) dropCells(v *version) bool {
	u := v.u
	dropped := func(c int, ts int64) bool {
		return c < len(m.cols) && m.cols[c].dropped && ts <= m.cols[c].droppedAt
	}
	cells, cds := u.Cells[:0], u.ComplexDeletions[:0]
	changed := false
	for _, c := range u.Cells {
		col := v.col(c.Column)
		if !dropped(col, c.Timestamp) {
			cells = append(cells, c)
			continue
		}
		changed = true
		if m.rec != nil {
			lost := c
			lost.Column = col
			m.rec.add(m.cellVersion(v.src, &lost, DroppedColumn, nil))
		}
	}
	for _, cd := range u.ComplexDeletions {
		col := v.col(cd.Column)
		if !dropped(col, cd.Deletion.MarkedForDeleteAt) {
			cds = append(cds, cd)
			continue
		}
		changed = true
		if m.rec != nil {
			m.rec.add(Version{SSTable: v.src, What: WhatComplexDeletion, Column: col, Static: m.static, Deletion: cd.Deletion, Verdict: DroppedColumn})
		}
	}
	if !changed {
		return true
	}
	u.Cells, u.ComplexDeletions = cells, cds
	// The row no longer holds every column, nor perhaps a collection
	// deletion: its flags say what is left.
	u.Flags &^= rows.FlagHasAllColumns
	if len(cds) == 0 {
		u.Flags &^= rows.FlagHasComplexDelete
	}
	u.ColumnsPresent = countColumns(u)
	return !u.IsEmpty()
}

// dropVersions applies dropCells to each version, keeping those that are
// left with something.
func (m *rowMerger) dropVersions(vs []version) []version {
	if m.t == nil || !m.t.hasDropped {
		return vs
	}
	keep := vs[:0]
	for i := range vs {
		if m.dropCells(&vs[i]) {
			keep = append(keep, vs[i])
		}
	}
	return keep
}
