package scrub

import (
	"bytes"
	"cmp"
	"errors"
	"math"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// This file is scrub's one reconciliation of two versions of a row: what
// Cassandra's scrubber does with a duplicate row (RowMergingSSTableIterator
// calls Rows.merge). It follows BTreeRow.merge (liveness, row deletion, the
// losing side's cells shadowed by the winning deletion), ColumnData's
// Reconciler (complex columns: the larger complex deletion, the cells it
// shadows dropped, cells merged by path) and Cells.reconcile's
// resolveRegular (timestamp, then tombstones and expiring cells, then the
// local deletion time, then the value). Counter shards are not merged
// (CounterContext.merge): a duplicate counter row makes the partition
// unreadable to scrub. The merge engine (package merge) reconciles whole
// sstables the same way; this covers the one case scrub needs.

// errCounterMerge is a duplicate row whose counter cells would need their
// contexts merged.
var errCounterMerge = errors.New("duplicate rows with counter cells: merging counter contexts is not done by scrub")

// noTimestamp is LivenessInfo.NO_TIMESTAMP, the timestamp of an empty
// liveness.
const noTimestamp = math.MinInt64

// noDeletionTime is Cell.NO_DELETION_TIME: the local deletion time of a
// live cell, and the expiration time of a liveness that does not expire.
const noDeletionTime = math.MaxInt64

// expiredLivenessTTL is LivenessInfo.EXPIRED_LIVENESS_TTL.
const expiredLivenessTTL = math.MaxInt32

// clusteringOrder compares unfiltereds as ClusteringComparator.compare
// does: value by value with the clustering types, then by prefix kind.
type clusteringOrder struct{ types []*cqltype.Type }

func prefixOf(u *rows.Unfiltered) (clustering.Kind, [][]byte) {
	switch u.Kind {
	case rows.KindMarker:
		return u.Bound.Kind, u.Bound.Values
	case rows.KindStaticRow:
		return clustering.StaticClustering, nil
	}
	return clustering.Clustering, u.Clustering
}

// kindComparison and comparedToClustering are ClusteringPrefix.Kind's two
// numbers.
func kindComparison(k clustering.Kind) int {
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

func comparedToClustering(k clustering.Kind) int {
	switch k {
	case clustering.Clustering:
		return 0
	case clustering.InclEndExclStartBoundary, clustering.InclEndBound, clustering.ExclStartBound:
		return 1
	}
	return -1
}

func (o clusteringOrder) compare(a, b *rows.Unfiltered) int {
	ka, va := prefixOf(a)
	kb, vb := prefixOf(b)
	n := min(len(va), len(vb))
	for i := 0; i < n; i++ {
		x, y := va[i], vb[i]
		switch {
		case x == nil && y == nil:
			continue
		case x == nil:
			return -1
		case y == nil:
			return 1
		}
		var c int
		if i < len(o.types) {
			c = o.types[i].Compare(x, y)
		} else {
			c = bytes.Compare(x, y)
		}
		if c != 0 {
			return c
		}
	}
	switch {
	case len(va) == len(vb):
		return cmp.Compare(kindComparison(ka), kindComparison(kb))
	case len(va) < len(vb):
		return comparedToClustering(ka)
	}
	return -comparedToClustering(kb)
}

// sameRow reports whether a and b are two versions of one row.
func (o clusteringOrder) sameRow(a, b *rows.Unfiltered) bool {
	return a.Kind == rows.KindRow && b.Kind == rows.KindRow && o.compare(a, b) == 0
}

// rowDeletion is a row's deletion, Live when it has none.
func rowDeletion(u *rows.Unfiltered) deletiontime.DeletionTime {
	if u.Deletion == (deletiontime.DeletionTime{}) {
		return deletiontime.Live
	}
	return u.Deletion
}

// supersedes is DeletionTime.supersedes.
func supersedes(a, b deletiontime.DeletionTime) bool {
	return a.MarkedForDeleteAt > b.MarkedForDeleteAt ||
		(a.MarkedForDeleteAt == b.MarkedForDeleteAt && a.LocalDeletionTime > b.LocalDeletionTime)
}

func livenessTimestamp(l *rows.Liveness) int64 {
	if !l.HasTimestamp {
		return noTimestamp
	}
	return l.Timestamp
}

func livenessExpiration(l *rows.Liveness) int64 {
	if !l.HasTimestamp || !l.Expiring() {
		return noDeletionTime
	}
	return l.LocalExpirationTime
}

// livenessSupersedes is LivenessInfo.supersedes.
func livenessSupersedes(a, b *rows.Liveness) bool {
	if ta, tb := livenessTimestamp(a), livenessTimestamp(b); ta != tb {
		return ta > tb
	}
	ea := a.HasTimestamp && a.TTL == expiredLivenessTTL
	eb := b.HasTimestamp && b.TTL == expiredLivenessTTL
	if ea != eb {
		return ea
	}
	xa, xb := a.HasTimestamp && a.Expiring(), b.HasTimestamp && b.Expiring()
	if xa == xb {
		return livenessExpiration(a) > livenessExpiration(b)
	}
	return xa
}

func cellDeletionTime(c *rows.Cell) int64 {
	if c.IsTombstone() || c.IsExpiring() {
		return c.LocalDeletionTime
	}
	return noDeletionTime
}

// reconcileCells is Cells.reconcile for regular cells: it returns the
// winner.
func reconcileCells(left, right *rows.Cell) *rows.Cell {
	if left.Timestamp != right.Timestamp {
		if left.Timestamp > right.Timestamp {
			return left
		}
		return right
	}
	ll, rl := cellDeletionTime(left), cellDeletionTime(right)
	lx, rx := ll != noDeletionTime, rl != noDeletionTime
	if lx || rx {
		if lx != rx {
			if lx {
				return left
			}
			return right
		}
		lt, rt := !left.IsExpiring(), !right.IsExpiring()
		if lt != rt {
			if lt {
				return left
			}
			return right
		}
		if ll != rl {
			if ll > rl {
				return left
			}
			return right
		}
	}
	if bytes.Compare(left.Value, right.Value) >= 0 {
		return left
	}
	return right
}

// rowMerger merges duplicate rows of one table.
type rowMerger struct {
	regular, static []rows.Column
	regTypes        []*cqltype.Type
	staticTypes     []*cqltype.Type
}

// merge returns existing and update merged into one row, as BTreeRow.merge
// does. Both must be versions of the same row (or both static rows).
func (m *rowMerger) merge(existing, update *rows.Unfiltered) (*rows.Unfiltered, error) {
	cols, types := m.regular, m.regTypes
	if existing.Kind == rows.KindStaticRow {
		cols, types = m.static, m.staticTypes
	}
	out := *existing
	out.Cells, out.ComplexDeletions = nil, nil
	out.Liveness = existing.Liveness
	if !livenessSupersedes(&existing.Liveness, &update.Liveness) {
		out.Liveness = update.Liveness
	}
	del, shadowable := rowDeletion(existing), existing.Shadowable
	existingWon := true
	if ud := rowDeletion(update); !supersedes(del, ud) {
		del, shadowable, existingWon = ud, update.Shadowable, false
	}
	switch {
	case livenessTimestamp(&out.Liveness) <= del.MarkedForDeleteAt:
		out.Liveness = rows.Liveness{}
	case shadowable && livenessTimestamp(&out.Liveness) > del.MarkedForDeleteAt:
		del, shadowable = deletiontime.Live, false
	}
	out.Deletion, out.Shadowable = del, shadowable
	if del.IsLive() {
		out.Deletion = deletiontime.Live
	}
	if supersedes(update.ScyllaShadowable, out.ScyllaShadowable) {
		out.ScyllaShadowable = update.ScyllaShadowable
	}
	// The side whose row deletion lost keeps only what the winning one
	// does not shadow (ColumnData.Reconciler.retain).
	ex, up := columnsOf(existing), columnsOf(update)
	if !del.IsLive() {
		if existingWon {
			up = retain(up, del)
		} else {
			ex = retain(ex, del)
		}
	}
	i, j := 0, 0
	for i < len(ex) || j < len(up) {
		switch {
		case j == len(up) || (i < len(ex) && ex[i].col < up[j].col):
			appendColumn(&out, ex[i])
			i++
		case i == len(ex) || up[j].col < ex[i].col:
			appendColumn(&out, up[j])
			j++
		default:
			c, err := m.mergeColumn(ex[i], up[j], &cols[ex[i].col], types[ex[i].col])
			if err != nil {
				return nil, err
			}
			appendColumn(&out, c)
			i, j = i+1, j+1
		}
	}
	return &out, nil
}

// columnData is one column of a row: a simple cell, or a complex column's
// deletion and cells.
type columnData struct {
	col     int
	complex bool
	del     deletiontime.DeletionTime // complex only; Live when none
	cells   []rows.Cell
}

func columnsOf(u *rows.Unfiltered) []columnData {
	var out []columnData
	dels := map[int]deletiontime.DeletionTime{}
	for _, cd := range u.ComplexDeletions {
		dels[cd.Column] = cd.Deletion
	}
	seen := map[int]bool{}
	for i := 0; i < len(u.Cells); {
		c := u.Cells[i]
		j := i + 1
		for j < len(u.Cells) && u.Cells[j].Column == c.Column {
			j++
		}
		cd := columnData{col: c.Column, cells: u.Cells[i:j:j], del: deletiontime.Live}
		if d, ok := dels[c.Column]; ok {
			cd.complex, cd.del = true, d
		} else if c.Path != nil {
			cd.complex = true
		}
		seen[c.Column] = true
		out = append(out, cd)
		i = j
	}
	for _, cd := range u.ComplexDeletions {
		if !seen[cd.Column] {
			out = append(out, columnData{col: cd.Column, complex: true, del: cd.Deletion})
		}
	}
	// Columns by index; a complex deletion without cells was appended last.
	for a := 1; a < len(out); a++ {
		for b := a; b > 0 && out[b].col < out[b-1].col; b-- {
			out[b], out[b-1] = out[b-1], out[b]
		}
	}
	return out
}

// retain drops what del shadows (ColumnData.Reconciler.removeShadowed).
func retain(cds []columnData, del deletiontime.DeletionTime) []columnData {
	var out []columnData
	for _, cd := range cds {
		if !cd.complex {
			if cd.cells[0].Timestamp <= del.MarkedForDeleteAt {
				continue
			}
			out = append(out, cd)
			continue
		}
		if !supersedes(del, cd.del) {
			out = append(out, cd)
			continue
		}
		var kept []rows.Cell
		for _, c := range cd.cells {
			if c.Timestamp > del.MarkedForDeleteAt {
				kept = append(kept, c)
			}
		}
		if len(kept) > 0 {
			out = append(out, columnData{col: cd.col, complex: true, del: deletiontime.Live, cells: kept})
		}
	}
	return out
}

func (m *rowMerger) mergeColumn(a, b columnData, col *rows.Column, t *cqltype.Type) (columnData, error) {
	if !a.complex {
		if col.Counter && !a.cells[0].IsTombstone() && !b.cells[0].IsTombstone() {
			return a, errCounterMerge
		}
		return columnData{col: a.col, cells: []rows.Cell{*reconcileCells(&a.cells[0], &b.cells[0])}}, nil
	}
	del := a.del
	aWon := true
	if !supersedes(a.del, b.del) {
		del, aWon = b.del, false
	}
	ac, bc := a.cells, b.cells
	if !del.IsLive() {
		if aWon {
			bc = shadowCells(bc, del)
		} else {
			ac = shadowCells(ac, del)
		}
	}
	var pathType *cqltype.Type
	if t != nil {
		pathType = t.ElementPathType()
	}
	comparePaths := func(x, y []byte) int {
		if pathType != nil {
			return pathType.Compare(x, y)
		}
		return bytes.Compare(x, y)
	}
	out := columnData{col: a.col, complex: true, del: del}
	i, j := 0, 0
	for i < len(ac) || j < len(bc) {
		var c int
		switch {
		case j == len(bc):
			c = -1
		case i == len(ac):
			c = 1
		default:
			c = comparePaths(ac[i].Path, bc[j].Path)
		}
		switch {
		case c < 0:
			out.cells = append(out.cells, ac[i])
			i++
		case c > 0:
			out.cells = append(out.cells, bc[j])
			j++
		default:
			if col.Counter && !ac[i].IsTombstone() && !bc[j].IsTombstone() {
				return out, errCounterMerge
			}
			out.cells = append(out.cells, *reconcileCells(&ac[i], &bc[j]))
			i, j = i+1, j+1
		}
	}
	return out, nil
}

func shadowCells(cells []rows.Cell, del deletiontime.DeletionTime) []rows.Cell {
	var out []rows.Cell
	for _, c := range cells {
		if c.Timestamp > del.MarkedForDeleteAt {
			out = append(out, c)
		}
	}
	return out
}

// appendColumn adds one merged column to u.
func appendColumn(u *rows.Unfiltered, cd columnData) {
	if cd.complex && !cd.del.IsLive() {
		u.ComplexDeletions = append(u.ComplexDeletions, rows.ComplexDeletion{Column: cd.col, Deletion: cd.del})
	}
	u.Cells = append(u.Cells, cd.cells...)
}
