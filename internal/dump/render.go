package dump

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// flushSize is how much output a renderer gathers before handing it on:
// large enough that writes cost little, small enough to stay in cache.
const flushSize = 256 << 10

// A sink takes a full output buffer and returns the (empty) buffer to go
// on with. A renderer calls it between unfiltereds, so a partition of any
// size streams out in flushSize pieces.
type sink interface {
	emit(b []byte) ([]byte, error)
}

// column is what rendering a cell of one column needs, worked out once.
// A cell's object is left open (its closing " }" is put by whatever
// follows it), so that the separator, the next cell's opening, its name
// and the member after the name go out in one fragment.
type column struct {
	name    string
	complex bool
	counter bool
	udt     *cqltype.Type // a non-frozen UDT: paths name fields
	path    cqltype.Appender
	value   cqltype.Appender

	// `{ "name" : "col", "value" : ` (or `, "path" : [ ` for a complex
	// column, `, "deletion_info" : { "local_delete_time" : ` for a simple
	// column's tombstone), after the first cell's separator or after the
	// previous cell's closing brace and a separator; the first ones
	// open the cells array too.
	firstLive, nextLive, firstTomb, nextTomb frag
	// the same for a complex column deletion: up to "marked_deleted"
	firstDel, nextDel frag
}

// Table is what rendering needs of the table it prints: the decoder's
// schema (its columns in Cassandra's order), the types aligned with it,
// and a path for error messages. *sstable.SSTable is one, and so is a
// merged table (merge.Table).
type Table interface {
	Schema() *rows.Schema
	KeyType() *cqltype.Type
	ClusteringTypes() []*cqltype.Type
	StaticTypes() []*cqltype.Type
	RegularTypes() []*cqltype.Type
	Path(component string) string
}

// Unfiltereds is a partition's static row, rows and markers in order,
// after its header: a *rows.Decoder, or a merged partition. Next returns
// nil at the partition's end.
type Unfiltereds interface {
	Next(skipCells bool) (*rows.Unfiltered, error)
}

// renderer appends sstabledump JSON for one sstable to buf, hands buf to
// out once it holds flushSize bytes, and keeps everything it needs for a
// cell precomputed. It is not safe for concurrent use; the parallel dump
// gives each worker its own.
type renderer struct {
	s   Table
	l   *layout
	raw bool // -t
	now int64
	buf []byte
	out sink

	regular, static []column
	clustering      []cqltype.Appender
	keyParts        []cqltype.Appender // components of a composite key
	key             cqltype.Appender   // a single-column key
	dates           [2]dateCache       // deletion times (s), timestamps (µs)

	dbg *debugState // -d's lines instead of JSON (Options.Debug)
}

func newRenderer(s Table, o Options, now int64, out sink) *renderer {
	r := &renderer{s: s, l: compactLayout, raw: o.RawTimestamps, now: now, out: out, buf: make([]byte, 0, flushSize+flushSize/4)}
	if !o.JSONLines {
		r.l = prettyLayout
	}
	if o.Debug {
		r.l, r.dbg = debugLayout, newDebugState(s)
		return r
	}
	r.regular = r.columns(s.Schema().Regular, s.RegularTypes())
	r.static = r.columns(s.Schema().Static, s.StaticTypes())
	for _, t := range s.ClusteringTypes() {
		r.clustering = append(r.clustering, t.CachingJSONAppender()) // a renderer makes its own: the cache is not safe for concurrent use
	}
	if kt := s.KeyType(); kt.Kind == cqltype.Composite {
		for _, p := range kt.Params {
			r.keyParts = append(r.keyParts, p.StringJSONAppender())
		}
	} else {
		r.key = kt.StringJSONAppender()
	}
	return r
}

func (r *renderer) columns(cols []rows.Column, types []*cqltype.Type) []column {
	out := make([]column, len(cols))
	for i, c := range cols {
		t := types[i]
		rc := column{name: c.Name, complex: c.Complex, counter: c.Counter}
		l := r.l
		open := mkFrag(l.cellOpen.String() + string(cqltype.AppendJSONString(nil, c.Name)))
		live, tomb := l.value, l.cellDeletion
		if c.Complex {
			live, tomb = l.path, l.path
		}
		next := cat(l.inObjectEnd, l.cellNext)
		rc.firstLive, rc.nextLive = cat(l.cells, l.cellFirst, open, live), cat(next, open, live)
		rc.firstTomb, rc.nextTomb = cat(l.cells, l.cellFirst, open, tomb), cat(next, open, tomb)
		rc.firstDel, rc.nextDel = cat(l.cells, l.cellFirst, open, l.colDeletion, l.markedDeleted), cat(next, open, l.colDeletion, l.markedDeleted)
		vt := t
		if c.Complex {
			if t.Kind == cqltype.UDT {
				rc.udt = t
				vt = nil
			} else {
				rc.path = t.ElementPathType().StringJSONAppender()
				vt = t.ElementValueType()
			}
		}
		if vt != nil {
			rc.value = vt.CachingJSONAppender()
		}
		out[i] = rc
	}
	return out
}

// flush hands the buffer on once it is full.
func (r *renderer) flush() error {
	if len(r.buf) < flushSize {
		return nil
	}
	var err error
	r.buf, err = r.out.emit(r.buf)
	return err
}

func (r *renderer) appendInt(v int64) { r.buf = appendInt(r.buf, v) }

// put appends a fragment: one fixed-size move when it is short, with the
// buffer kept at least fragCap bytes larger than its contents.
func (r *renderer) put(f *frag) {
	if f.long != nil {
		r.buf = append(r.buf, f.long...)
		return
	}
	n := len(r.buf)
	if cap(r.buf)-n < fragCap {
		r.buf = slices.Grow(r.buf, fragCap)
	}
	b := r.buf[:n+fragCap]
	*(*[fragCap]byte)(b[n:]) = f.b
	r.buf = b[:n+f.n]
}

func (r *renderer) appendBool(v bool) {
	if v {
		r.put(&r.l.trueLit)
	} else {
		r.put(&r.l.falseLit)
	}
}

// partition renders the partition whose header dec has just read; first
// says whether it is the first of the document. Errors are worded, and the
// output before them is, exactly as the reference dumper's.
func (r *renderer) partition(h *rows.PartitionHeader, dec Unfiltereds, first bool) error {
	if r.dbg != nil {
		return r.debugPartition(h, dec)
	}
	l := r.l
	if first {
		r.put(&l.partFirst)
	} else {
		r.put(&l.partNext)
	}
	r.put(&l.partHead)
	if err := r.appendKey(h.Key); err != nil {
		return fmt.Errorf("%s: Data.db partition key at %d: %w", r.s.Path("Data.db"), h.Offset+2, err)
	}
	r.put(&l.position)
	r.appendInt(h.Offset)
	if !h.Deletion.IsLive() {
		r.put(&l.partDeletion)
		r.deletionBody(h.Deletion)
	}
	r.put(&l.partMid)
	empty := true
	for {
		u, err := dec.Next(false)
		if err != nil {
			return err
		}
		if u == nil {
			break
		}
		if u.Kind == rows.KindStaticRow && u.IsEmpty() {
			continue // sstabledump skips an empty static row
		}
		next := 0
		if !empty {
			next = 1
		}
		empty = false
		if err := r.unfiltered(u, next); err != nil {
			return fmt.Errorf("%s: Data.db unfiltered at %d: %w", r.s.Path("Data.db"), u.Offset, err)
		}
		if err := r.flush(); err != nil {
			return err
		}
	}
	if empty {
		r.put(&l.rowsEmpty)
	} else {
		r.put(&l.rowsEnd)
	}
	r.put(&l.partEnd)
	return r.flush()
}

// appendKey renders the partition key array: each component of a
// composite key, or the key, as its text in a JSON string.
func (r *renderer) appendKey(key []byte) error {
	l := r.l
	if r.key != nil {
		r.put(&l.inFirst)
		n := len(r.buf)
		var err error
		if r.buf, err = r.key(r.buf, key); err != nil {
			r.buf = r.buf[:n-l.inFirst.n]
			return err
		}
		r.put(&l.inArrayEnd)
		return nil
	}
	if !r.appendCompositeKey(key) {
		return r.appendCompositeKeySlow(key)
	}
	r.put(&l.inArrayEnd)
	return nil
}

// appendCompositeKey renders a well-formed composite key (no static
// marker, every end-of-component byte zero, no component past the type's)
// and reports false, having rendered nothing, for anything else.
func (r *renderer) appendCompositeKey(key []byte) bool {
	start := len(r.buf)
	off := 0
	for i := 0; off < len(key); i++ {
		if i >= len(r.keyParts) || len(key)-off < 2 || (i == 0 && binary.BigEndian.Uint16(key) == 0xFFFF) {
			r.buf = r.buf[:start]
			return false
		}
		n := int(binary.BigEndian.Uint16(key[off:]))
		off += 2
		if len(key)-off < n+1 || key[off+n] != 0 {
			r.buf = r.buf[:start]
			return false
		}
		if i == 0 {
			r.put(&r.l.inFirst)
		} else {
			r.put(&r.l.inNext)
		}
		var err error
		if r.buf, err = r.keyParts[i](r.buf, key[off:off+n]); err != nil {
			r.buf = r.buf[:start]
			return false
		}
		off += n + 1
	}
	return true
}

// appendCompositeKeySlow is the reference's composite key rendering, for
// keys appendCompositeKey leaves alone (and for their errors).
func (r *renderer) appendCompositeKeySlow(key []byte) error {
	kt := r.s.KeyType()
	comps, _, err := kt.Components(key)
	if err != nil {
		return err
	}
	for i, c := range comps {
		if i >= len(kt.Params) {
			break
		}
		s, err := kt.Params[i].Format(c.Value)
		if err != nil {
			return err
		}
		if i == 0 {
			r.put(&r.l.inFirst)
		} else {
			r.put(&r.l.inNext)
		}
		r.buf = cqltype.AppendJSONString(r.buf, s)
	}
	r.put(&r.l.inArrayEnd)
	return nil
}

// deletionBody renders the inside of a deletion_info object and closes it.
func (r *renderer) deletionBody(dt deletiontime.DeletionTime) {
	l := r.l
	r.put(&l.markedDeleted)
	r.buf = r.appendDate(r.buf, true, dt.MarkedForDeleteAt)
	r.put(&l.localDeleteTime)
	r.buf = r.appendDate(r.buf, false, dt.LocalDeletionTime)
	r.put(&l.inObjectEnd)
}

// appendClustering renders a clustering array after its member name
// (written by the caller only when values is not empty).
func (r *renderer) appendClustering(values [][]byte) error {
	l := r.l
	for i, app := range r.clustering {
		if i == 0 {
			r.put(&l.inFirst)
		} else {
			r.put(&l.inNext)
		}
		if i >= len(values) {
			r.put(&l.starLit)
			continue
		}
		v := values[i]
		if v == nil {
			r.put(&l.nullLit)
			continue
		}
		n := len(r.buf)
		var err error
		if r.buf, err = app(r.buf, v); err != nil {
			r.buf = r.buf[:n]
			return fmt.Errorf("clustering value %d: %w", i, err)
		}
	}
	r.put(&l.inArrayEnd)
	return nil
}

// unfiltered renders a row or marker after the separator of the first
// (next 0) or a later (next 1) element of "rows".
func (r *renderer) unfiltered(u *rows.Unfiltered, next int) error {
	l := r.l
	if u.Kind == rows.KindMarker {
		r.put(&l.markerHead[next])
		if u.IsBoundary() {
			r.put(&l.rangeBoundary)
			// sstabledump prints the boundary's open side first, then its close side.
			openInclusive := u.Bound.Kind == clustering.ExclEndInclStartBoundary
			if err := r.bound(true, openInclusive, u.Bound.Values, u.StartDeletion); err != nil {
				return err
			}
			if err := r.bound(false, !openInclusive, u.Bound.Values, u.EndDeletion); err != nil {
				return err
			}
		} else {
			r.put(&l.rangeBound)
			if err := r.bound(u.Bound.Kind.IsStart(), u.Bound.Kind.IsInclusive(), u.Bound.Values, u.Deletion); err != nil {
				return err
			}
		}
		r.put(&l.markerEnd)
		return nil
	}
	cols := r.regular
	if u.Kind == rows.KindStaticRow {
		r.put(&l.staticHead[next])
		cols = r.static
	} else {
		r.put(&l.rowHead[next])
	}
	r.appendInt(u.Offset)
	if u.Kind == rows.KindRow && len(u.Clustering) > 0 {
		r.put(&l.clustering)
		if err := r.appendClustering(u.Clustering); err != nil {
			return err
		}
	}
	live := &u.Liveness
	if live.HasTimestamp {
		r.put(&l.liveness)
		r.buf = r.appendDate(r.buf, true, live.Timestamp)
		if live.Expiring() {
			r.put(&l.ttl)
			r.appendInt(live.TTL)
			r.put(&l.expiresAt)
			r.buf = r.appendDate(r.buf, false, live.LocalExpirationTime)
			r.put(&l.expired)
			r.appendBool(live.LocalExpirationTime < r.now)
		}
		r.put(&l.inObjectEnd)
	}
	if u.HasDeletion() {
		r.put(&l.rowDeletion)
		r.deletionBody(u.Deletion)
	}
	if u.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
		// Not in sstabledump (Cassandra has no such field): ScyllaDB's
		// shadowable row tombstone, beside any regular one.
		r.put(&l.rowShadowable)
		r.deletionBody(u.ScyllaShadowable)
	}
	if len(u.Cells) == 0 && len(u.ComplexDeletions) == 0 {
		r.put(&l.noCells)
		return nil
	}
	first := true
	cd := 0
	for i := range u.Cells {
		c := &u.Cells[i]
		// A complex column's deletion precedes its cells.
		for cd < len(u.ComplexDeletions) && u.ComplexDeletions[cd].Column <= c.Column {
			r.complexDeletion(&cols[u.ComplexDeletions[cd].Column], u.ComplexDeletions[cd].Deletion, first)
			first = false
			cd++
		}
		col := &cols[c.Column]
		if err := r.cell(c, col, live, first); err != nil {
			return fmt.Errorf("column %s: %w", col.name, err)
		}
		first = false
	}
	for ; cd < len(u.ComplexDeletions); cd++ {
		r.complexDeletion(&cols[u.ComplexDeletions[cd].Column], u.ComplexDeletions[cd].Deletion, first)
		first = false
	}
	r.put(&l.cellsClose)
	return nil
}

func (r *renderer) bound(start, inclusive bool, values [][]byte, dt deletiontime.DeletionTime) error {
	l := r.l
	if start {
		r.put(&l.boundStart)
	} else {
		r.put(&l.boundEnd)
	}
	if inclusive {
		r.put(&l.inclusive)
	} else {
		r.put(&l.exclusive)
	}
	if len(values) > 0 {
		r.put(&l.boundClustering)
		if err := r.appendClustering(values); err != nil {
			return err
		}
	}
	r.put(&l.boundDeletion)
	r.deletionBody(dt)
	r.put(&l.boundClose)
	return nil
}

// complexDeletion renders a complex column's deletion, leaving its object
// open like a cell's.
func (r *renderer) complexDeletion(col *column, dt deletiontime.DeletionTime, first bool) {
	if first {
		r.put(&col.firstDel)
	} else {
		r.put(&col.nextDel)
	}
	r.buf = r.appendDate(r.buf, true, dt.MarkedForDeleteAt)
	r.put(&r.l.localDeleteTime)
	r.buf = r.appendDate(r.buf, false, dt.LocalDeletionTime)
	r.put(&r.l.inObjectEnd)
}

// cell renders one cell, leaving its object open.
func (r *renderer) cell(c *rows.Cell, col *column, live *rows.Liveness, first bool) error {
	l := r.l
	tomb := c.IsTombstone()
	switch {
	case first && !tomb:
		r.put(&col.firstLive)
	case !tomb:
		r.put(&col.nextLive)
	case first:
		r.put(&col.firstTomb)
	default:
		r.put(&col.nextTomb)
	}
	value := col.value
	if col.complex {
		if col.udt != nil {
			name, ft, err := col.udt.FieldPath(c.Path)
			if err != nil {
				return fmt.Errorf("cell path: %w", err)
			}
			r.buf = cqltype.AppendJSONString(r.buf, name)
			value = ft.AppendJSON
		} else {
			n := len(r.buf)
			var err error
			if r.buf, err = col.path(r.buf, c.Path); err != nil {
				r.buf = r.buf[:n]
				return fmt.Errorf("cell path: %w", err)
			}
		}
		if tomb {
			r.put(&l.pathTomb)
		} else {
			r.put(&l.pathValue)
		}
	}
	if tomb {
		r.buf = r.appendDate(r.buf, false, c.LocalDeletionTime)
		r.put(&l.inObjectEnd)
	} else {
		switch {
		case col.counter:
			total, err := cqltype.CounterTotal(c.Value)
			if err != nil {
				return err
			}
			r.appendInt(total)
		case c.Value == nil:
			r.put(&l.nullLit)
		default:
			n := len(r.buf)
			var err error
			if r.buf, err = value(r.buf, c.Value); err != nil {
				r.buf = r.buf[:n]
				return err
			}
		}
	}
	if !live.HasTimestamp || c.Timestamp != live.Timestamp {
		r.put(&l.tstamp)
		r.buf = r.appendDate(r.buf, true, c.Timestamp)
	}
	if c.IsExpiring() && (!live.HasTimestamp || c.TTL != live.TTL) {
		r.put(&l.ttl)
		r.appendInt(c.TTL)
		r.put(&l.expiresAt)
		r.buf = r.appendDate(r.buf, false, c.LocalDeletionTime)
		r.put(&l.expired)
		// !Cell.isLive(now): a cell is gone at its expiry second, where a
		// row's liveness info above counts as expired only after it.
		r.appendBool(c.LocalDeletionTime <= r.now)
	}
	return nil
}
