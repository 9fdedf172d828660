package export

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// The cells dataset's records: one for each thing with a timestamp that
// sstabledump prints inside a partition.

// renderClustering renders values into the cells file's arena, as the
// clustering of the records that follow.
func (w *tableWriter) renderClustering(values [][]byte) error {
	pf := w.cells
	w.clusterV = w.clusterV[:0]
	for i, v := range values {
		if v == nil || i >= len(w.clust) {
			w.clusterV = append(w.clusterV, nullSpan)
			continue
		}
		start := len(pf.arena)
		if asIs := w.clustVerbatim[i]; asIs != nil && asIs(v) {
			pf.arena = append(pf.arena, v...)
		} else {
			var err error
			if pf.arena, err = w.clust[i](pf.arena, v); err != nil {
				pf.arena = pf.arena[:start]
				return fmt.Errorf("clustering value %d: %w", i, err)
			}
			pf.arena = jsonText(pf.arena, start)
		}
		w.clusterV = append(w.clusterV, spanOf(start, len(pf.arena)))
	}
	return nil
}

// unfiltered writes the records of one row or marker.
func (w *tableWriter) unfiltered(u *rows.Unfiltered) error {
	switch u.Kind {
	case rows.KindMarker:
		if err := w.renderClustering(u.Bound.Values); err != nil {
			return err
		}
		if u.IsBoundary() {
			// As sstabledump prints a boundary: the side it opens as the
			// start, then the side it closes as the end.
			openInclusive := u.Bound.Kind == clustering.ExclEndInclStartBoundary
			w.fromPart(w.orgOf(func(o *Origin) int { return o.Start }))
			if err := w.marker(u, kindBoundary, entryStart, openInclusive, u.StartDeletion); err != nil {
				return err
			}
			w.fromPart(w.orgOf(func(o *Origin) int { return o.End }))
			return w.marker(u, kindBoundary, entryEnd, !openInclusive, u.EndDeletion)
		}
		entry := entryEnd
		if u.Bound.Kind.IsStart() {
			entry = entryStart
		}
		w.fromPart(w.orgOf(func(o *Origin) int { return o.Deletion }))
		return w.marker(u, kindBound, entry, u.Bound.Kind.IsInclusive(), u.Deletion)
	case rows.KindStaticRow:
		if u.IsEmpty() {
			return nil // sstabledump skips an empty static row
		}
		w.clusterV = w.clusterV[:0]
		return w.row(u, kindStatic, w.static)
	}
	if err := w.renderClustering(u.Clustering); err != nil {
		return err
	}
	return w.row(u, kindRow, w.regular)
}

// begin starts a record: the columns every record has.
func (w *tableWriter) begin(kind, entry int32) []*col {
	c := w.cells.cols
	if w.org != nil {
		c[cSSTable].word(w.sstWord)
	}
	if n := w.cells.cur.n; w.keyRun {
		w.keyRun = false
		c[cKey].shareBytes(n, w.key)
		if w.murmur {
			c[cToken].shareInt64(n, w.token)
		} else {
			c[cToken].shareNull(n)
		}
	}
	c[cClustering].list(w.clusterV)
	c[cKind].word(kind)
	c[cEntry].word(entry)
	return c
}

// end closes a record. When the batch was handed on, the clustering
// rendered into its arena is rendered again for the records still to
// come of this unfiltered.
func (w *tableWriter) end(u *rows.Unfiltered) error {
	flushed, err := w.cells.endRecord()
	if err != nil || !flushed {
		return err
	}
	w.keyRun = true
	if len(w.clusterV) == 0 {
		return nil
	}
	if u.Kind == rows.KindMarker {
		return w.renderClustering(u.Bound.Values)
	}
	return w.renderClustering(u.Clustering)
}

// deletionRecord fills a deletion's columns after begin.
func deletionRecord(c []*col, dt deletiontime.DeletionTime) {
	c[cTimestamp].int64(dt.MarkedForDeleteAt)
	c[cTTL].null()
	c[cExpiresAt].null()
	if dt.IsLive() {
		// Stored, but deleting nothing (a LIVE collection deletion).
		c[cLocalDeletionTime].null()
		c[cTombstone].bool(false)
		return
	}
	c[cLocalDeletionTime].int64(dt.LocalDeletionTime * 1000)
	c[cTombstone].bool(true)
}

func (w *tableWriter) marker(u *rows.Unfiltered, kind, entry int32, inclusive bool, dt deletiontime.DeletionTime) error {
	c := w.begin(kind, entry)
	c[cColumn].null()
	c[cPath].null()
	c[cValue].null()
	c[cValueBytes].null()
	deletionRecord(c, dt)
	c[cInclusive].bool(inclusive)
	return w.end(u)
}

func (w *tableWriter) row(u *rows.Unfiltered, kind int32, cols []column) error {
	live := &u.Liveness
	// The row's own liveness (an INSERT's primary-key liveness) is a
	// record only when no cell stands for the row: with cells, it carries
	// the cells' timestamp and TTL, which are in their records, and a
	// record for it beside every row's cells would cost a quarter more
	// records (and break the runs of nulls the columns compress to).
	if live.HasTimestamp && len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 {
		w.fromPart(w.orgOf(func(o *Origin) int { return o.Liveness }))
		c := w.begin(kind, entryLiveness)
		c[cColumn].null()
		c[cPath].null()
		c[cValue].null()
		c[cValueBytes].null()
		c[cTimestamp].int64(live.Timestamp)
		if live.Expiring() {
			c[cTTL].int32(int32(live.TTL))
			c[cExpiresAt].int64(live.LocalExpirationTime * 1000)
		} else {
			c[cTTL].null()
			c[cExpiresAt].null()
		}
		c[cLocalDeletionTime].null()
		c[cTombstone].bool(false)
		c[cInclusive].null()
		if err := w.end(u); err != nil {
			return err
		}
	}
	if u.HasDeletion() {
		w.fromPart(w.orgOf(func(o *Origin) int { return o.Deletion }))
		c := w.begin(kind, entryDeletion)
		c[cColumn].null()
		c[cPath].null()
		c[cValue].null()
		c[cValueBytes].null()
		deletionRecord(c, u.Deletion)
		c[cInclusive].null()
		if err := w.end(u); err != nil {
			return err
		}
	}
	cd := 0
	for i := range u.Cells {
		cell := &u.Cells[i]
		// A complex column's deletion precedes its cells, as sstabledump
		// prints it.
		for cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column <= cell.Column {
			w.fromPart(w.orgAt(cd, true))
			if err := w.columnDeletion(u, kind, cols, &u.ComplexDeletions[cd]); err != nil {
				return err
			}
			cd++
		}
		col := &cols[cell.Column]
		w.fromPart(w.orgAt(i, false))
		if err := w.cell(u, kind, col, cell); err != nil {
			return fmt.Errorf("column %s: %w", col.name, err)
		}
	}
	for ; cd < len(u.ComplexDeletions); cd++ {
		w.fromPart(w.orgAt(cd, true))
		if err := w.columnDeletion(u, kind, cols, &u.ComplexDeletions[cd]); err != nil {
			return err
		}
	}
	return nil
}

func (w *tableWriter) columnDeletion(u *rows.Unfiltered, kind int32, cols []column, d *rows.ComplexDeletion) error {
	c := w.begin(kind, entryColumnDel)
	c[cColumn].word(cols[d.Column].word)
	c[cPath].null()
	c[cValue].null()
	c[cValueBytes].null()
	deletionRecord(c, d.Deletion)
	c[cInclusive].null()
	return w.end(u)
}

func (w *tableWriter) cell(u *rows.Unfiltered, kind int32, col *column, cell *rows.Cell) error {
	// The path and the value are rendered into their columns' own bytes
	// (col.own), first: an error leaves no half-filled record, and those
	// bytes nothing but the records' values, one after the other.
	cols := w.cells.cols
	pc, vc, bc := cols[cPath], cols[cValue], cols[cValueBytes]
	pathStart, valueStart := -1, -1
	value, asIs := col.value, col.verbatimValue
	if col.complex {
		pathStart = len(pc.own)
		if col.udt != nil {
			name, ft, err := col.udt.FieldPath(cell.Path)
			if err != nil {
				return fmt.Errorf("cell path: %w", err)
			}
			pc.own = append(pc.own, name...)
			value, asIs = ft.JSONAppender(), verbatim(ft)
		} else if col.verbatimPath != nil && col.verbatimPath(cell.Path) {
			pc.own = append(pc.own, cell.Path...)
		} else {
			var err error
			if pc.own, err = col.path(pc.own, cell.Path); err != nil {
				pc.own = pc.own[:pathStart]
				return fmt.Errorf("cell path: %w", err)
			}
			pc.own = jsonText(pc.own, pathStart)
		}
	}
	pathEnd := len(pc.own)
	tomb := cell.IsTombstone()
	if !tomb {
		valueStart = len(vc.own)
		var err error
		switch {
		case col.counter:
			var total int64
			if total, err = cqltype.CounterTotal(cell.Value); err == nil {
				vc.own = appendInt(vc.own, total)
			}
		case cell.Value == nil:
			vc.own = append(vc.own, "null"...)
		case asIs != nil && asIs(cell.Value):
			vc.own = append(vc.own, cell.Value...)
		default:
			if vc.own, err = value(vc.own, cell.Value); err == nil {
				vc.own = jsonText(vc.own, valueStart)
			}
		}
		if err != nil {
			vc.own = vc.own[:valueStart]
			if pathStart >= 0 {
				pc.own = pc.own[:pathStart]
			}
			return err
		}
	}
	valueEnd := len(vc.own)
	c := w.begin(kind, entryCell)
	c[cColumn].word(col.word)
	if pathStart >= 0 {
		c[cPath].bytes(pathStart, pathEnd)
	} else {
		c[cPath].null()
	}
	if tomb {
		c[cValue].null()
		c[cValueBytes].null()
	} else {
		c[cValue].bytes(valueStart, valueEnd)
		start := len(bc.own)
		bc.own = append(bc.own, cell.Value...)
		c[cValueBytes].bytes(start, len(bc.own))
	}
	c[cTimestamp].int64(cell.Timestamp)
	switch {
	case tomb:
		c[cTTL].null()
		c[cExpiresAt].null()
		c[cLocalDeletionTime].int64(cell.LocalDeletionTime * 1000)
	case cell.IsExpiring():
		c[cTTL].int32(int32(cell.TTL))
		c[cExpiresAt].int64(cell.LocalDeletionTime * 1000)
		c[cLocalDeletionTime].null()
	default:
		c[cTTL].null()
		c[cExpiresAt].null()
		c[cLocalDeletionTime].null()
	}
	c[cTombstone].bool(tomb)
	c[cInclusive].null()
	return w.end(u)
}

// jsonText turns the JSON value rendered at b[start:] into the value
// column's text: a JSON string becomes the string itself (unescaped),
// anything else (numbers, booleans, collections, null) stays its JSON.
func jsonText(b []byte, start int) []byte {
	v := b[start:]
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return b
	}
	inner := v[1 : len(v)-1]
	escaped := false
	for _, c := range inner {
		if c == '\\' {
			escaped = true
			break
		}
	}
	if !escaped {
		n := copy(b[start:], inner)
		return b[:start+n]
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return b // not ours to fix: keep what the renderer gave
	}
	return append(b[:start], s...)
}

func appendInt(b []byte, v int64) []byte { return strconv.AppendInt(b, v, 10) }
