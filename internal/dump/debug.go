package dump

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// sstabledump -d (Options.Debug): one line per partition deletion, static
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
//
// The lines are appended to the renderer's buffer like the JSON, so -d
// streams in the same blocks and renders on every core through All; the
// document has no opening or closing (debugLayout's pieces are empty).

// debugLayout is the layout of -d: no fixed JSON pieces at all.
var debugLayout = &layout{}

// debugColumn is what printing one column's cells needs, worked out once.
type debugColumn struct {
	open       []byte // "[name"
	delOpen    []byte // "del(name)="
	t          *cqltype.Type
	path, elem *cqltype.Type // a collection's key and value types
	complex    bool
	counter    bool
	collection bool
}

// debugState is the renderer's -d part: columns, clustering types and the
// line prefix of the partition being printed.
type debugState struct {
	regular, static []debugColumn
	clustering      []*cqltype.Type
	key             []byte // "[key]@"
}

func newDebugState(s Table) *debugState {
	cols := func(cs []rows.Column, types []*cqltype.Type) []debugColumn {
		out := make([]debugColumn, len(cs))
		for i, c := range cs {
			t := types[i]
			dc := debugColumn{open: []byte("[" + c.Name), delOpen: []byte("del(" + c.Name + ")="), t: t,
				complex: c.Complex, counter: c.Counter}
			if c.Complex && t.Kind.IsCollection() {
				dc.collection, dc.path, dc.elem = true, t.ElementPathType(), t.ElementValueType()
			}
			out[i] = dc
		}
		return out
	}
	return &debugState{
		regular:    cols(s.Schema().Regular, s.RegularTypes()),
		static:     cols(s.Schema().Static, s.StaticTypes()),
		clustering: s.ClusteringTypes(),
	}
}

// debugPartition prints one partition's lines; dec is positioned after
// its header and is read to the partition's end.
func (r *renderer) debugPartition(h *rows.PartitionHeader, dec Unfiltereds) error {
	g := r.dbg
	// AbstractType.getString of the key; a key its type cannot print is
	// shown in hex (sstabledump would stop with an exception).
	g.key = append(g.key[:0], '[')
	if k, err := r.s.KeyType().AppendFormat(g.key, h.Key); err == nil {
		g.key = k
	} else {
		g.key = hex.AppendEncode(append(g.key[:1], "0x"...), h.Key)
	}
	g.key = append(g.key, ']', '@')
	pos := h.Offset
	if !h.Deletion.IsLive() {
		r.debugPrefix(pos)
		r.debugDeletion(h.Deletion)
		r.buf = append(r.buf, '\n')
	}
	first := true
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			return r.flush()
		}
		if u.Kind == rows.KindStaticRow {
			if u.IsEmpty() {
				continue // sstabledump prints a static row only when it is not empty
			}
			r.debugPrefix(h.Offset)
		} else {
			if !first {
				pos = u.Offset
			}
			first = false
			r.debugPrefix(pos)
		}
		if u.Kind == rows.KindMarker {
			r.debugMarker(u)
		} else if err := r.debugRow(u); err != nil {
			return fmt.Errorf("%s at %d: %w", u.Kind, u.Offset, err)
		}
		r.buf = append(r.buf, '\n')
		if err := r.flush(); err != nil {
			return err
		}
	}
}

func (r *renderer) debugPrefix(pos int64) {
	r.buf = append(r.buf, r.dbg.key...)
	r.buf = appendInt(r.buf, pos)
	r.buf = append(r.buf, ' ')
}

// debugDeletion is DeletionTime.toString.
func (r *renderer) debugDeletion(dt deletiontime.DeletionTime) {
	r.buf = append(r.buf, "deletedAt="...)
	r.buf = strconv.AppendInt(r.buf, dt.MarkedForDeleteAt, 10)
	r.buf = append(r.buf, ", localDeletion="...)
	r.buf = strconv.AppendInt(r.buf, dt.LocalDeletionTime, 10)
}

// debugMarker is RangeTombstoneBoundMarker.toString and
// RangeTombstoneBoundaryMarker.toString: "Marker KIND(v1, v2)@ts/ldt", a
// boundary with the closing deletion, then the opening one.
func (r *renderer) debugMarker(u *rows.Unfiltered) {
	r.buf = append(r.buf, "Marker "...)
	r.buf = append(r.buf, u.Bound.Kind.String()...)
	r.buf = append(r.buf, '(')
	for i, v := range u.Bound.Values {
		if i > 0 {
			r.buf = append(r.buf, ", "...)
		}
		if v == nil {
			r.buf = append(r.buf, "null"...) // AbstractType.getString(null)
		} else {
			r.debugString(r.debugClusteringType(i), v)
		}
	}
	r.buf = append(r.buf, ")@"...)
	ts := func(dt deletiontime.DeletionTime) {
		r.buf = strconv.AppendInt(r.buf, dt.MarkedForDeleteAt, 10)
		r.buf = append(r.buf, '/')
		r.buf = strconv.AppendInt(r.buf, dt.LocalDeletionTime, 10)
	}
	if u.IsBoundary() {
		ts(u.EndDeletion)
		r.buf = append(r.buf, '-')
		ts(u.StartDeletion)
		return
	}
	ts(u.Deletion)
}

func (r *renderer) debugClusteringType(i int) *cqltype.Type {
	if i < len(r.dbg.clustering) {
		return r.dbg.clustering[i]
	}
	return nil
}

// debugRow is AbstractRow.toString(metadata, includeClusterKeys,
// fullDetails=true): sstabledump passes includeClusterKeys for the static
// row ("STATIC") and not for the others (the clustering as CQL literals).
func (r *renderer) debugRow(u *rows.Unfiltered) error {
	r.buf = append(r.buf, "Row[info=[ts="...)
	l := u.Liveness
	switch {
	case !l.HasTimestamp:
		// LivenessInfo.EMPTY: no timestamp (Long.MIN_VALUE).
		r.buf = strconv.AppendInt(r.buf, math.MinInt64, 10)
	case l.Expiring():
		r.buf = strconv.AppendInt(r.buf, l.Timestamp, 10)
		r.buf = append(r.buf, " ttl="...)
		r.buf = strconv.AppendInt(r.buf, int64(l.TTL), 10)
		r.buf = append(r.buf, ", let="...)
		r.buf = strconv.AppendInt(r.buf, int64(l.LocalExpirationTime), 10)
	default:
		r.buf = strconv.AppendInt(r.buf, l.Timestamp, 10)
	}
	r.buf = append(r.buf, ']')
	if u.HasDeletion() {
		r.buf = append(r.buf, " del="...)
		r.debugDeletion(u.Deletion)
		if u.Shadowable {
			r.buf = append(r.buf, "(shadowable)"...)
		}
	} else if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		// ScyllaDB's own shadowable deletion: Cassandra's Row.Deletion
		// once converted (what convert writes), printed as such.
		r.buf = append(r.buf, " del="...)
		r.debugDeletion(u.ScyllaShadowable)
		r.buf = append(r.buf, "(shadowable)"...)
	}
	r.buf = append(r.buf, " ]: "...)
	cols := r.dbg.regular
	if u.Kind == rows.KindStaticRow {
		r.buf = append(r.buf, "STATIC"...)
		cols = r.dbg.static
	} else {
		for i, v := range u.Clustering {
			if i > 0 {
				r.buf = append(r.buf, ", "...)
			}
			r.debugLiteral(r.debugClusteringType(i), v)
		}
	}
	r.buf = append(r.buf, " | "...)

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
			r.buf = append(r.buf, ", "...)
		}
		firstColumn = false
		c := &cols[col]
		if !c.complex {
			r.debugCell(&u.Cells[ci], c)
			ci++
			continue
		}
		if cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column == col {
			r.buf = append(r.buf, c.delOpen...)
			r.debugDeletion(u.ComplexDeletions[cd].Deletion)
			cd++
		}
		for ; ci < len(u.Cells) && u.Cells[ci].Column == col; ci++ {
			r.buf = append(r.buf, ", "...)
			r.debugCell(&u.Cells[ci], c)
		}
	}
	return nil
}

// debugCell is AbstractCell.toString.
func (r *renderer) debugCell(c *rows.Cell, col *debugColumn) {
	r.buf = append(r.buf, col.open...)
	switch {
	case col.counter:
		// "[name=total ts=...]" whatever the cell is.
		total := int64(0)
		if len(c.Value) > 0 {
			total, _ = cqltype.CounterTotal(c.Value)
		}
		r.buf = append(r.buf, '=')
		r.buf = strconv.AppendInt(r.buf, total, 10)
		r.buf = append(r.buf, " ts="...)
		r.buf = strconv.AppendInt(r.buf, c.Timestamp, 10)
		r.buf = append(r.buf, ']')
		return
	case col.collection:
		r.buf = append(r.buf, '[')
		r.debugString(col.path, c.Path)
		r.buf = append(r.buf, "]="...)
		if c.IsTombstone() {
			r.buf = append(r.buf, "<tombstone>"...)
		} else {
			r.debugString(col.elem, c.Value)
		}
	case c.IsTombstone():
		r.buf = append(r.buf, "=<tombstone>"...)
	default:
		// A field of a non-frozen UDT is printed with the UDT's type, as
		// Cassandra does; it seldom parses, and then shows as hex.
		r.buf = append(r.buf, '=')
		r.debugString(col.t, c.Value)
	}
	r.buf = append(r.buf, " ts="...)
	r.buf = strconv.AppendInt(r.buf, c.Timestamp, 10)
	switch {
	case c.IsExpiring():
		r.buf = append(r.buf, " ttl="...)
		r.buf = strconv.AppendInt(r.buf, int64(c.TTL), 10)
		r.buf = append(r.buf, " ldt="...)
		r.buf = strconv.AppendInt(r.buf, int64(c.LocalDeletionTime), 10)
	case c.IsTombstone():
		r.buf = append(r.buf, " ldt="...)
		r.buf = strconv.AppendInt(r.buf, int64(c.LocalDeletionTime), 10)
	}
	r.buf = append(r.buf, ']')
}

// debugString is AbstractType.getString, or the bytes in hex when the type
// cannot print them (AbstractCell.safeToString).
func (r *renderer) debugString(t *cqltype.Type, v []byte) {
	n := len(r.buf)
	if t != nil {
		if b, err := t.AppendFormat(r.buf, v); err == nil {
			r.buf = b
			return
		}
	}
	r.buf = hex.AppendEncode(append(r.buf[:n], "0x"...), v)
}

// debugLiteral is AbstractType.toCQLString (CQL3Type.toCQLLiteral): see
// appendCQLLiteral; a value its type cannot decode is shown as a blob.
func (r *renderer) debugLiteral(t *cqltype.Type, v []byte) {
	n := len(r.buf)
	if t != nil {
		if b, ok := appendCQLLiteral(r.buf, t, v); ok {
			r.buf = b
			return
		}
	}
	r.buf = hex.AppendEncode(append(r.buf[:n], "0x"...), v)
}

// cqlLiteral is debugLiteral as a string.
func cqlLiteral(t *cqltype.Type, v []byte) string {
	if t != nil {
		if b, ok := appendCQLLiteral(nil, t, v); ok {
			return string(b)
		}
	}
	return "0x" + hex.EncodeToString(v)
}

// appendCQLLiteral is AbstractType.toCQLString (CQL3Type.toCQLLiteral) as
// of Cassandra 5.0: strings, inet addresses, dates, times and timestamps
// in single quotes (a quote doubled), blobs and custom types as 0x...,
// other scalars as printed, frozen collections, tuples, UDTs and vectors
// with their literal syntax; null (nil, or empty for types other than
// text and blob) as null. It reports false for a value its type cannot
// decode, with dst's extra bytes to be dropped by the caller.
func appendCQLLiteral(dst []byte, t *cqltype.Type, v []byte) ([]byte, bool) {
	if v == nil {
		return append(dst, "null"...), true
	}
	switch t.Kind {
	case cqltype.Text, cqltype.Ascii:
		dst = append(dst, '\'')
		start := len(dst)
		dst, err := t.AppendFormat(dst, v)
		if err != nil {
			return dst, false
		}
		return append(doubleQuotes(dst, start), '\''), true
	case cqltype.Blob, cqltype.Custom:
		return hex.AppendEncode(append(dst, "0x"...), v), true
	}
	if len(v) == 0 {
		return append(dst, "null"...), true
	}
	switch t.Kind {
	case cqltype.List, cqltype.Set, cqltype.Map:
		return appendCollectionLiteral(dst, t, v)
	case cqltype.Tuple, cqltype.UDT:
		return appendTupleLiteral(dst, t, v)
	case cqltype.Vector, cqltype.Composite, cqltype.DynamicComposite:
		return dst, false // not clustering types in practice: shown as a blob
	}
	quoted := t.Kind == cqltype.Inet || t.Kind == cqltype.Date || t.Kind == cqltype.Time || t.Kind == cqltype.Timestamp
	if quoted {
		dst = append(dst, '\'')
	}
	dst, err := t.AppendFormat(dst, v)
	if err != nil {
		return dst, false
	}
	if quoted {
		dst = append(dst, '\'')
	}
	return dst, true
}

// doubleQuotes doubles every single quote of dst[start:], as a CQL string
// literal needs.
func doubleQuotes(dst []byte, start int) []byte {
	n := 0
	for _, c := range dst[start:] {
		if c == '\'' {
			n++
		}
	}
	if n == 0 {
		return dst
	}
	end := len(dst)
	dst = append(dst, make([]byte, n)...)
	// Move the text right from its end, doubling quotes on the way.
	w := len(dst)
	for i := end - 1; i >= start; i-- {
		w--
		dst[w] = dst[i]
		if dst[i] == '\'' {
			w--
			dst[w] = '\''
		}
	}
	return dst
}

// readValue reads one element of a frozen collection, tuple or UDT: an int
// length (negative for null) and that many bytes.
func readValue(v []byte, off int) (elem []byte, next int, ok bool) {
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

func appendCollectionLiteral(dst []byte, t *cqltype.Type, v []byte) ([]byte, bool) {
	if len(v) < 4 {
		return dst, false
	}
	n := int(int32(binary.BigEndian.Uint32(v)))
	if n < 0 || n > len(v) {
		return dst, false
	}
	open, close := byte('{'), byte('}')
	if t.Kind == cqltype.List {
		open, close = '[', ']'
	}
	dst = append(dst, open)
	off := 4
	for i := 0; i < n; i++ {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		for j := 0; j < len(t.Params) && (j == 0 || t.Kind == cqltype.Map); j++ {
			if j == 1 {
				dst = append(dst, ": "...)
			}
			e, next, ok := readValue(v, off)
			if !ok {
				return dst, false
			}
			if dst, ok = appendCQLLiteral(dst, t.Params[j], e); !ok {
				return dst, false
			}
			off = next
		}
	}
	return append(dst, close), off == len(v)
}

func appendTupleLiteral(dst []byte, t *cqltype.Type, v []byte) ([]byte, bool) {
	open, close := byte('('), byte(')')
	if t.Kind == cqltype.UDT {
		open, close = '{', '}'
	}
	dst = append(dst, open)
	off := 0
	for i, p := range t.Params {
		if off == len(v) {
			break // fewer fields than the type: added later, as Java allows
		}
		if i > 0 {
			dst = append(dst, ", "...)
		}
		if t.Kind == cqltype.UDT && i < len(t.FieldNames) {
			dst = appendMaybeQuoted(dst, t.FieldNames[i])
			dst = append(dst, ": "...)
		}
		e, next, ok := readValue(v, off)
		if !ok {
			return dst, false
		}
		if dst, ok = appendCQLLiteral(dst, p, e); !ok {
			return dst, false
		}
		off = next
	}
	return append(dst, close), off == len(v)
}

// appendMaybeQuoted is ColumnIdentifier.maybeQuote, less its check of
// reserved keywords: [a-z][a-z0-9_]* as is, anything else in double quotes.
func appendMaybeQuoted(dst []byte, s string) []byte {
	plain := s != "" && s[0] >= 'a' && s[0] <= 'z'
	for i := 1; plain && i < len(s); i++ {
		c := s[i]
		plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
	}
	if plain {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}
