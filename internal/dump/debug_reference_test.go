package dump

// The sstabledump -d writer as it was before -d rendered through the
// dumper's renderer (and on every core): kept as the reference the
// renderer's -d output is held to, byte for byte, errors included.

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
)

// refDebugWriter prints partitions the way `sstabledump -d` does
// (SSTableExport's debug output): one line per partition deletion, static
// row, row and range tombstone marker, each "[key]@position " followed by
// the toString of what it is, as Cassandra 5.0 writes them:
//
//	[1]@0 deletedAt=1689932014395000, localDeletion=1689932014
//	[1]@0 Row[info=[ts=-9223372036854775808] ]: STATIC | [s=x ts=1]
//	[1]@0 Row[info=[ts=1] ]: 'a' | [v=1 ts=1], [m[k]=v ts=1]
//	[1]@41 Marker INCL_START_BOUND(b)@1/1689932014
//
// sstabledump takes the position from its scanner's file pointer, which
// sits at the partition's start until the first row has been read: the
// partition deletion, the static row and the first row or marker show the
// partition's offset, every later one its own. (With -k, sstabledump's
// pointer is wherever the previous partition left it; this prints the same
// offsets as a full scan would.)
type refDebugWriter struct {
	w   *bufio.Writer
	s   *sstable.SSTable
	key string
	buf []byte
}

// refNewDebugWriter returns a writer of s's partitions to w; Flush when done.
func refNewDebugWriter(w io.Writer, s *sstable.SSTable) *refDebugWriter {
	return &refDebugWriter{w: bufio.NewWriterSize(w, 64<<10), s: s}
}

// Flush writes what is buffered.
func (d *refDebugWriter) Flush() error { return d.w.Flush() }

// Partition prints one partition; dec is positioned after its header and
// is read to the partition's end.
func (d *refDebugWriter) Partition(h *rows.PartitionHeader, dec *rows.Decoder) error {
	// AbstractType.getString of the key; a key its type cannot print is
	// shown in hex (sstabledump would stop with an exception).
	key, err := d.s.KeyType().Format(h.Key)
	if err != nil {
		key = "0x" + hex.EncodeToString(h.Key)
	}
	d.key = "[" + key + "]@"
	pos := h.Offset
	if !h.Deletion.IsLive() {
		d.prefix(pos)
		d.w.WriteString(refDeletionString(h.Deletion))
		d.w.WriteByte('\n')
	}
	first := true
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			return nil
		}
		if u.Kind == rows.KindStaticRow {
			if refIsEmptyRow(u) {
				continue // sstabledump prints a static row only when it is not empty
			}
			d.prefix(h.Offset)
		} else {
			if !first {
				pos = u.Offset
			}
			first = false
			d.prefix(pos)
		}
		if u.Kind == rows.KindMarker {
			d.marker(u)
		} else if err := d.row(u); err != nil {
			return fmt.Errorf("%s at %d: %w", u.Kind, u.Offset, err)
		}
		d.w.WriteByte('\n')
	}
}

func (d *refDebugWriter) prefix(pos int64) {
	d.w.WriteString(d.key)
	d.w.WriteString(strconv.FormatInt(pos, 10))
	d.w.WriteByte(' ')
}

func refIsEmptyRow(u *rows.Unfiltered) bool {
	return len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 && !u.Liveness.HasTimestamp && !u.HasDeletion()
}

// refDeletionString is DeletionTime.toString.
func refDeletionString(dt deletiontime.DeletionTime) string {
	return "deletedAt=" + strconv.FormatInt(dt.MarkedForDeleteAt, 10) + ", localDeletion=" + strconv.FormatInt(dt.LocalDeletionTime, 10)
}

// marker is RangeTombstoneBoundMarker.toString / RangeTombstoneBoundaryMarker.toString:
// "Marker KIND(v1, v2)@ts/ldt", a boundary with the closing deletion, then the opening one.
func (d *refDebugWriter) marker(u *rows.Unfiltered) {
	w := d.w
	w.WriteString("Marker ")
	w.WriteString(u.Bound.Kind.String())
	w.WriteByte('(')
	for i, v := range u.Bound.Values {
		if i > 0 {
			w.WriteString(", ")
		}
		if v == nil {
			w.WriteString("null") // AbstractType.getString(null)
		} else {
			w.WriteString(d.getString(d.clusteringType(i), v))
		}
	}
	w.WriteString(")@")
	if u.IsBoundary() {
		fmt.Fprintf(w, "%d/%d-%d/%d", u.EndDeletion.MarkedForDeleteAt, u.EndDeletion.LocalDeletionTime,
			u.StartDeletion.MarkedForDeleteAt, u.StartDeletion.LocalDeletionTime)
		return
	}
	fmt.Fprintf(w, "%d/%d", u.Deletion.MarkedForDeleteAt, u.Deletion.LocalDeletionTime)
}

func (d *refDebugWriter) clusteringType(i int) *cqltype.Type {
	if i < len(d.s.ClusteringTypes()) {
		return d.s.ClusteringTypes()[i]
	}
	return nil
}

// row is AbstractRow.toString(metadata, includeClusterKeys, fullDetails=true):
// sstabledump passes includeClusterKeys for the static row ("STATIC") and not
// for the others (the clustering as CQL literals).
func (d *refDebugWriter) row(u *rows.Unfiltered) error {
	w := d.w
	w.WriteString("Row[info=")
	l := u.Liveness
	switch {
	case !l.HasTimestamp:
		// LivenessInfo.EMPTY: no timestamp (Long.MIN_VALUE).
		fmt.Fprintf(w, "[ts=%d]", int64(math.MinInt64))
	case l.Expiring():
		fmt.Fprintf(w, "[ts=%d ttl=%d, let=%d]", l.Timestamp, l.TTL, l.LocalExpirationTime)
	default:
		fmt.Fprintf(w, "[ts=%d]", l.Timestamp)
	}
	if u.HasDeletion() {
		w.WriteString(" del=")
		w.WriteString(refDeletionString(u.Deletion))
		if u.Shadowable {
			w.WriteString("(shadowable)")
		}
	} else if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		w.WriteString(" del=")
		w.WriteString(refDeletionString(u.ScyllaShadowable))
		w.WriteString("(shadowable)")
	}
	w.WriteString(" ]: ")
	if u.Kind == rows.KindStaticRow {
		w.WriteString("STATIC")
	} else {
		for i, v := range u.Clustering {
			if i > 0 {
				w.WriteString(", ")
			}
			w.WriteString(refCqlLiteral(d.clusteringType(i), v))
		}
	}
	w.WriteString(" | ")

	types, cols := d.s.RegularTypes(), d.s.Schema().Regular
	if u.Kind == rows.KindStaticRow {
		types, cols = d.s.StaticTypes(), d.s.Schema().Static
	}
	// The row's columns in order, each once: a simple column is one cell, a
	// complex one its deletion (if any) and its cells.
	ci, cd := 0, 0
	firstColumn := true
	for ci < len(u.Cells) || cd < len(u.ComplexDeletions) {
		col := math.MaxInt
		if ci < len(u.Cells) {
			col = u.Cells[ci].Column
		}
		if cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column < col {
			col = u.ComplexDeletions[cd].Column
		}
		if col < 0 || col >= len(cols) {
			return fmt.Errorf("column %d outside the %d of the header", col, len(cols))
		}
		if !firstColumn {
			w.WriteString(", ")
		}
		firstColumn = false
		c, t := &cols[col], types[col]
		if !c.Complex {
			d.cell(&u.Cells[ci], c, t)
			ci++
			continue
		}
		if cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column == col {
			w.WriteString("del(")
			w.WriteString(c.Name)
			w.WriteString(")=")
			w.WriteString(refDeletionString(u.ComplexDeletions[cd].Deletion))
			cd++
		}
		for ; ci < len(u.Cells) && u.Cells[ci].Column == col; ci++ {
			w.WriteString(", ")
			d.cell(&u.Cells[ci], c, t)
		}
	}
	return nil
}

// cell is AbstractCell.toString.
func (d *refDebugWriter) cell(c *rows.Cell, col *rows.Column, t *cqltype.Type) {
	w := d.w
	w.WriteByte('[')
	w.WriteString(col.Name)
	switch {
	case col.Counter:
		// "[name=total ts=...]" whatever the cell is.
		total := int64(0)
		if len(c.Value) > 0 {
			total, _ = cqltype.CounterTotal(c.Value)
		}
		fmt.Fprintf(w, "=%d ts=%d]", total, c.Timestamp)
		return
	case col.Complex && t.Kind.IsCollection():
		w.WriteByte('[')
		w.WriteString(d.getString(t.ElementPathType(), c.Path))
		w.WriteString("]=")
		if c.IsTombstone() {
			w.WriteString("<tombstone>")
		} else {
			w.WriteString(d.getString(t.ElementValueType(), c.Value))
		}
	case c.IsTombstone():
		w.WriteString("=<tombstone>")
	default:
		// A field of a non-frozen UDT is printed with the UDT's type, as
		// Cassandra does; it seldom parses, and then shows as hex.
		w.WriteByte('=')
		w.WriteString(d.getString(t, c.Value))
	}
	w.WriteByte(' ')
	switch {
	case c.IsExpiring():
		fmt.Fprintf(w, "ts=%d ttl=%d ldt=%d", c.Timestamp, c.TTL, c.LocalDeletionTime)
	case c.IsTombstone():
		fmt.Fprintf(w, "ts=%d ldt=%d", c.Timestamp, c.LocalDeletionTime)
	default:
		fmt.Fprintf(w, "ts=%d", c.Timestamp)
	}
	w.WriteByte(']')
}

// getString is AbstractType.getString, or the bytes in hex when the type
// cannot print them (AbstractCell.safeToString).
func (d *refDebugWriter) getString(t *cqltype.Type, v []byte) string {
	if t != nil {
		var err error
		if d.buf, err = t.AppendFormat(d.buf[:0], v); err == nil {
			return string(d.buf)
		}
	}
	return "0x" + hex.EncodeToString(v)
}

// refCqlLiteral is AbstractType.toCQLString (CQL3Type.toCQLLiteral) as of
// Cassandra 5.0: strings, inet addresses, dates, times and timestamps in
// single quotes (a quote doubled), blobs and custom types as 0x..., other
// scalars as printed, frozen collections, tuples, UDTs and vectors with
// their literal syntax; null (nil, or empty for types other than text and
// blob) as null. A value its type cannot decode is shown as a blob.
func refCqlLiteral(t *cqltype.Type, v []byte) string {
	var b strings.Builder
	if t == nil || !refAppendCQLLiteral(&b, t, v) {
		return "0x" + hex.EncodeToString(v)
	}
	return b.String()
}

func refAppendCQLLiteral(b *strings.Builder, t *cqltype.Type, v []byte) bool {
	if v == nil {
		b.WriteString("null")
		return true
	}
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii:
		s, err := t.Format(v)
		if err != nil {
			return false
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(s, "'", "''"))
		b.WriteByte('\'')
		return true
	case cqltype.Blob, cqltype.Custom:
		b.WriteString("0x")
		b.WriteString(hex.EncodeToString(v))
		return true
	}
	if len(v) == 0 {
		b.WriteString("null")
		return true
	}
	switch t.Kind {
	case cqltype.List, cqltype.Set, cqltype.Map:
		return refAppendCollectionLiteral(b, t, v)
	case cqltype.Tuple, cqltype.UDT:
		return refAppendTupleLiteral(b, t, v)
	case cqltype.Vector, cqltype.Composite, cqltype.DynamicComposite:
		return false // not clustering types in practice: shown as a blob
	}
	s, err := t.Format(v)
	if err != nil {
		return false
	}
	switch t.Kind {
	case cqltype.Inet, cqltype.Date, cqltype.Time, cqltype.Timestamp:
		b.WriteByte('\'')
		b.WriteString(s)
		b.WriteByte('\'')
	default:
		b.WriteString(s)
	}
	return true
}

// refReadValue reads one element of a frozen collection, tuple or UDT: an int
// length (negative for null) and that many bytes.
func refReadValue(v []byte, off int) (elem []byte, next int, ok bool) {
	if off+4 > len(v) {
		return nil, 0, false
	}
	n := int32(binary.BigEndian.Uint32(v[off:]))
	off += 4
	if n < 0 {
		return nil, off, true
	}
	if off+int(n) > len(v) {
		return nil, 0, false
	}
	return v[off : off+int(n)], off + int(n), true
}

func refAppendCollectionLiteral(b *strings.Builder, t *cqltype.Type, v []byte) bool {
	if len(v) < 4 {
		return false
	}
	n := int(int32(binary.BigEndian.Uint32(v)))
	if n < 0 || n > len(v) {
		return false
	}
	open, close := byte('{'), byte('}')
	if t.Kind == cqltype.List {
		open, close = '[', ']'
	}
	b.WriteByte(open)
	off := 4
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		for j := 0; j < len(t.Params) && (j == 0 || t.Kind == cqltype.Map); j++ {
			if j == 1 {
				b.WriteString(": ")
			}
			e, next, ok := refReadValue(v, off)
			if !ok || !refAppendCQLLiteral(b, t.Params[j], e) {
				return false
			}
			off = next
		}
	}
	b.WriteByte(close)
	return off == len(v)
}

func refAppendTupleLiteral(b *strings.Builder, t *cqltype.Type, v []byte) bool {
	open, close := byte('('), byte(')')
	if t.Kind == cqltype.UDT {
		open, close = '{', '}'
	}
	b.WriteByte(open)
	off := 0
	for i, p := range t.Params {
		if off == len(v) {
			break // fewer fields than the type: added later, as Java allows
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if t.Kind == cqltype.UDT && i < len(t.FieldNames) {
			b.WriteString(refMaybeQuoteIdentifier(t.FieldNames[i]))
			b.WriteString(": ")
		}
		e, next, ok := refReadValue(v, off)
		if !ok || !refAppendCQLLiteral(b, p, e) {
			return false
		}
		off = next
	}
	b.WriteByte(close)
	return off == len(v)
}

// refMaybeQuoteIdentifier is ColumnIdentifier.maybeQuote, less its check of
// reserved keywords: [a-z][a-z0-9_]* as is, anything else in double quotes.
func refMaybeQuoteIdentifier(s string) string {
	plain := s != "" && s[0] >= 'a' && s[0] <= 'z'
	for i := 1; plain && i < len(s); i++ {
		c := s[i]
		plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
