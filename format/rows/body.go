package rows

import (
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// body is a cursor over one row or marker body.
type body struct {
	b   []byte
	pos int
	// lay is the decoder's layout in layout mode, nil otherwise; last is
	// the value of the last vint read, for the layout.
	lay  *layout
	last uint64
}

// mark records, in layout mode, the field read since body position at.
func (r *body) mark(at int, k SpanKind, index int) {
	if r.lay != nil {
		r.lay.add(r.lay.base+int64(at), r.pos-at, k, index, r.last)
	}
}

// markDeletion records half of a DeletionTime: k is SpanDeletionTimestamp
// or SpanDeletionTime.
func (r *body) markDeletion(at int, k SpanKind, of DeletionOf, index int) {
	if r.lay != nil {
		r.lay.add(r.lay.base+int64(at), r.pos-at, k, index, r.last)
		r.lay.spans[len(r.lay.spans)-1].Of = of
	}
}

// err reports a failure at the body-relative position; parseUnfiltered
// makes the offset absolute and names the file.
func (r *body) err(expected string, err error) error {
	return &corrupt.Error{Component: dataComponent, Offset: int64(r.pos), Expected: expected, Err: err}
}

func (r *body) uvint(what string) (uint64, error) {
	// Most vints in a row body are one byte: take those without a call.
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 {
		r.pos++
		r.last = uint64(r.b[r.pos-1])
		return r.last, nil
	}
	v, n, err := vint.Unsigned(r.b[r.pos:])
	if err != nil {
		return 0, r.err(what+" (vint)", err)
	}
	r.pos += n
	r.last = v
	return v, nil
}

func (r *body) uvint32(what string) (uint64, error) {
	if r.pos < len(r.b) && r.b[r.pos] < 0x80 {
		r.pos++
		r.last = uint64(r.b[r.pos-1])
		return r.last, nil
	}
	v, n, err := vint.Unsigned32(r.b[r.pos:])
	if err != nil {
		return 0, r.err(what+" (vint)", err)
	}
	r.pos += n
	r.last = uint64(v)
	return r.last, nil
}

func (r *body) bytes(n int, what string) ([]byte, error) {
	if n < 0 || n > len(r.b)-r.pos {
		return nil, r.err(fmt.Sprintf("%s of %d bytes", what, n), io.ErrUnexpectedEOF)
	}
	v := r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return v, nil
}

func (d *Decoder) timestamp(r *body, what string) (int64, error) {
	v, err := r.uvint(what)
	return int64(v) + d.schema.MinTimestamp, err
}

func (d *Decoder) localDeletionTime(r *body, what string) (int64, error) {
	return d.intDelta(r, what, d.schema.MinLocalDeletionTime)
}

func (d *Decoder) ttl(r *body, what string) (int64, error) {
	return d.intDelta(r, what, d.schema.MinTTL)
}

// intDelta reads an int-sized delta and adds it to minimum as the
// version's Cassandra release does (format.Version.IntDelta): 5.0 refuses
// a delta that is not a Java int, 3.x/4.x wrap it.
func (d *Decoder) intDelta(r *body, what string, minimum int64) (int64, error) {
	at := r.pos
	raw, err := r.uvint(what)
	if err != nil {
		return 0, err
	}
	v, fits := d.schema.Version.IntDelta(raw, minimum)
	if !fits && d.schema.Version.CheckedIntVInts {
		r.pos = at
		return 0, r.err(what+" delta that fits an int (Cassandra 5.0 reads it with a checked cast)", fmt.Errorf("found %d", raw))
	}
	if d.noteTimes && (!fits || v < 0) {
		reason := "negative: the value overflowed a signed int (scrub rewrites it)"
		if !fits {
			reason = fmt.Sprintf("the stored delta is not a Java int; Cassandra 3.x/4.x cast it with (int) and read %d", v)
		}
		// Body-relative for now; parseUnfiltered makes it absolute.
		d.timeNotes = append(d.timeNotes, TimeAnomaly{Offset: int64(at), What: what, Raw: raw, Value: v, Reason: reason})
	}
	return v, nil
}

// deletionTime reads a DeletionTime written as header deltas (rows,
// markers, complex columns); only partition headers and index entries use
// the fixed layouts.
func (d *Decoder) deletionTime(r *body, what string, of DeletionOf, index int) (deletiontime.DeletionTime, error) {
	at := r.pos
	mfda, err := d.timestamp(r, what+" markedForDeleteAt")
	if err != nil {
		return deletiontime.DeletionTime{}, err
	}
	r.markDeletion(at, SpanDeletionTimestamp, of, index)
	at = r.pos
	notes := len(d.timeNotes)
	ldt, err := d.localDeletionTime(r, what+" localDeletionTime")
	if err != nil {
		return deletiontime.DeletionTime{}, err
	}
	r.markDeletion(at, SpanDeletionTime, of, index)
	dt := deletiontime.DeletionTime{MarkedForDeleteAt: mfda, LocalDeletionTime: ldt}
	if mfda == deletiontime.Live.MarkedForDeleteAt {
		// LIVE (a complex column's "no deletion"): Cassandra 5.0 writes its
		// Long.MAX_VALUE local deletion time cast to a negative int, which
		// is no overflow to report.
		d.timeNotes = d.timeNotes[:notes]
		return deletiontime.Live, nil
	}
	return dt, nil
}

func (d *Decoder) decodeMarkerBody(u *Unfiltered, b []byte) (int, error) {
	r := &body{b: b, lay: d.lay}
	var err error
	if u.Bound.Kind.IsBoundary() {
		if u.EndDeletion, err = d.deletionTime(r, "boundary end deletion", OfBoundaryEnd, 0); err != nil {
			return r.pos, err
		}
		if u.StartDeletion, err = d.deletionTime(r, "boundary start deletion", OfBoundaryStart, 0); err != nil {
			return r.pos, err
		}
		return r.pos, nil
	}
	u.Deletion, err = d.deletionTime(r, "bound deletion", OfBound, 0)
	return r.pos, err
}

func (d *Decoder) decodeRowBody(u *Unfiltered, b []byte) (int, error) {
	if !d.slowOnly {
		if n, ok := d.fastRowBody(u, b); ok {
			return n, nil
		}
	}
	// Start over on the general path, which words the error if there is
	// one: clear what the fast path may have set.
	u.Liveness, u.Shadowable, u.ColumnsPresent = Liveness{}, false, 0
	u.Cells, u.ComplexDeletions = u.Cells[:0], u.ComplexDeletions[:0]
	return d.slowRowBody(u, b)
}

// slowRowBody decodes a row body with full error reporting.
func (d *Decoder) slowRowBody(u *Unfiltered, b []byte) (int, error) {
	r := &body{b: b, lay: d.lay}
	flags := u.Flags
	var err error
	u.Deletion = deletiontime.Live
	if flags&FlagHasTimestamp != 0 {
		u.Liveness.HasTimestamp = true
		at := r.pos
		if u.Liveness.Timestamp, err = d.timestamp(r, "row timestamp"); err != nil {
			return r.pos, err
		}
		r.mark(at, SpanRowTimestamp, 0)
		if flags&FlagHasTTL != 0 {
			at = r.pos
			if u.Liveness.TTL, err = d.ttl(r, "row TTL"); err != nil {
				return r.pos, err
			}
			r.mark(at, SpanRowTTL, 0)
			at = r.pos
			if u.Liveness.LocalExpirationTime, err = d.localDeletionTime(r, "row local expiration time"); err != nil {
				return r.pos, err
			}
			r.mark(at, SpanRowExpiration, 0)
			if u.Liveness.TTL == 0 {
				// LivenessInfo.withExpirationTime: no TTL, no expiration,
				// whatever was stored beside it.
				u.Liveness.LocalExpirationTime = 0
			}
		}
	}
	if flags&FlagHasDeletion != 0 {
		if u.Deletion, err = d.deletionTime(r, "row deletion", OfRow, 0); err != nil {
			return r.pos, err
		}
		u.Shadowable = u.ExtFlags&ExtFlagShadowableDel != 0
	}
	if u.ExtFlags&ExtFlagScyllaShadowable != 0 {
		if u.ScyllaShadowable, err = d.deletionTime(r, "ScyllaDB shadowable row deletion", OfScyllaShadowable, 0); err != nil {
			return r.pos, err
		}
	}
	columns := d.schema.Regular
	if u.Kind == KindStaticRow {
		columns = d.schema.Static
	}
	var missing uint64 // bitmap of absent columns (superset < 64)
	var present []int  // explicit list for supersets of 64 and more
	if flags&FlagHasAllColumns == 0 {
		at := r.pos
		enc, err := r.uvint("columns subset")
		if err != nil {
			return r.pos, err
		}
		if len(columns) < 64 {
			r.mark(at, SpanColumnsBitmap, 0)
		} else {
			r.mark(at, SpanMissingCount, 0)
		}
		if enc != 0 {
			if len(columns) < 64 {
				if enc>>uint(len(columns)) != 0 {
					return r.pos, r.err(fmt.Sprintf("a columns bitmap for %d columns", len(columns)), fmt.Errorf("bits 0x%x", enc))
				}
				missing = enc
			} else {
				present, err = d.largeSubset(r, columns, enc)
				if err != nil {
					return r.pos, err
				}
			}
		}
	}
	visit := func(ci int) error {
		col := &columns[ci]
		u.ColumnsPresent++
		if !col.Complex {
			return d.decodeCell(r, u, ci, col)
		}
		if flags&FlagHasComplexDelete != 0 {
			dt, err := d.deletionTime(r, "complex column deletion", OfComplex, ci)
			if err != nil {
				return err
			}
			if !dt.IsLive() {
				u.ComplexDeletions = append(u.ComplexDeletions, ComplexDeletion{Column: ci, Deletion: dt})
			}
		}
		at := r.pos
		count, err := r.uvint32("complex column cell count")
		if err != nil {
			return err
		}
		r.mark(at, SpanElementCount, ci)
		if count > uint64(len(r.b)-r.pos) {
			return r.err("a cell count no larger than the bytes left", fmt.Errorf("%d cells", count))
		}
		for i := uint64(0); i < count; i++ {
			if err := d.decodeCell(r, u, ci, col); err != nil {
				return err
			}
		}
		return nil
	}
	if present != nil {
		for _, ci := range present {
			if err := visit(ci); err != nil {
				return r.pos, err
			}
		}
	} else {
		for ci := range columns {
			if missing&(1<<uint(ci)) != 0 { // 0 for ci >= 64: supersets that large use present
				continue
			}
			if err := visit(ci); err != nil {
				return r.pos, err
			}
		}
	}
	return r.pos, nil
}

// largeSubset decodes the subset encoding of supersets of 64+ columns:
// the count of missing columns, then either the present or the missing
// indexes, whichever list is shorter.
func (d *Decoder) largeSubset(r *body, columns []Column, delta uint64) ([]int, error) {
	super := len(columns)
	if delta > uint64(super) {
		return nil, r.err("a missing-column count within the header's columns", fmt.Errorf("%d of %d", delta, super))
	}
	count := super - int(delta)
	present := make([]int, 0, count)
	if count < super/2 {
		for i := 0; i < count; i++ {
			at := r.pos
			idx, err := r.uvint32("column index")
			if err != nil {
				return nil, err
			}
			r.mark(at, SpanPresentColumn, 0)
			if idx >= uint64(super) {
				return nil, r.err("a column index within the header", fmt.Errorf("%d of %d", idx, super))
			}
			present = append(present, int(idx))
		}
		return present, nil
	}
	idx, skipped := 0, 0
	for {
		next := super
		if skipped < int(delta) {
			at := r.pos
			v, err := r.uvint32("missing column index")
			if err != nil {
				return nil, err
			}
			r.mark(at, SpanMissingColumn, 0)
			if v >= uint64(super) || int(v) < idx {
				return nil, r.err("ascending missing column indexes", fmt.Errorf("%d", v))
			}
			next = int(v)
		}
		for idx < next {
			present = append(present, idx)
			idx++
		}
		if idx == super {
			return present, nil
		}
		idx++
		skipped++
	}
}

func (d *Decoder) decodeCell(r *body, u *Unfiltered, ci int, col *Column) error {
	if r.pos >= len(r.b) {
		return r.err("cell flags", io.ErrUnexpectedEOF)
	}
	// Decode in place in the reused slice: appending a whole Cell copied
	// 88 bytes per cell, the largest single cost of a full decode.
	n := len(u.Cells)
	if n < cap(u.Cells) {
		u.Cells = u.Cells[:n+1]
	} else {
		u.Cells = append(u.Cells, Cell{})
	}
	c := &u.Cells[n]
	if err := d.fillCell(r, u, c, n, ci, col); err != nil {
		u.Cells = u.Cells[:n]
		return err
	}
	return nil
}

// fillCell decodes cell number n of u (column ci) into c.
func (d *Decoder) fillCell(r *body, u *Unfiltered, c *Cell, n, ci int, col *Column) error {
	flags := r.b[r.pos]
	r.pos++
	r.last = uint64(flags)
	r.mark(r.pos-1, SpanCellFlags, n)
	c.Column, c.Flags = ci, flags
	c.LocalDeletionTime, c.TTL, c.Path = 0, 0, nil
	var err error
	at := r.pos
	if flags&CellFlagUseRowTS != 0 {
		c.Timestamp = u.Liveness.Timestamp
	} else if c.Timestamp, err = d.timestamp(r, "cell timestamp"); err != nil {
		return err
	} else {
		r.mark(at, SpanCellTimestamp, n)
	}
	if flags&CellFlagUseRowTTL != 0 {
		c.LocalDeletionTime = u.Liveness.LocalExpirationTime
		c.TTL = u.Liveness.TTL
		if flags&CellFlagExpiring == 0 && u.Liveness.Expiring() {
			// Cassandra takes the row's TTL and calls a cell expiring, not
			// a tombstone, when its TTL is set (AbstractCell.isExpiring,
			// isTombstone), whatever IS_EXPIRING and IS_DELETED say; its
			// writers set USE_ROW_TTL only with IS_EXPIRING, others may not.
			c.Flags = c.Flags&^CellFlagDeleted | CellFlagExpiring
		}
	} else if flags&(CellFlagDeleted|CellFlagExpiring) != 0 {
		at = r.pos
		if c.LocalDeletionTime, err = d.localDeletionTime(r, "cell local deletion time"); err != nil {
			return err
		}
		r.mark(at, SpanCellDeletionTime, n)
		if flags&CellFlagExpiring != 0 {
			at = r.pos
			if c.TTL, err = d.ttl(r, "cell TTL"); err != nil {
				return err
			}
			r.mark(at, SpanCellTTL, n)
		}
	}
	if col.Complex {
		at = r.pos
		l, err := r.uvint32("cell path length")
		if err != nil {
			return err
		}
		r.mark(at, SpanCellPathLength, n)
		at = r.pos
		if c.Path, err = r.bytes(int(l), "cell path"); err != nil {
			return err
		}
		r.mark(at, SpanCellPath, n)
	}
	if flags&CellFlagEmptyValue != 0 {
		c.Value = emptyValue
		return nil
	}
	l := col.Fixed
	if l < 0 {
		at = r.pos
		v, err := r.uvint32("cell value length")
		if err != nil {
			return err
		}
		r.mark(at, SpanCellValueLength, n)
		l = int(v)
	}
	at = r.pos
	c.Value, err = r.bytes(l, "cell value")
	if err == nil {
		r.mark(at, SpanCellValue, n)
	}
	return err
}

// emptyValue is the value of cells flagged empty: empty, not nil.
var emptyValue = []byte{}
