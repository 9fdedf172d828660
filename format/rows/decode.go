package rows

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Source is uncompressed Data.db read sequentially; reader.Cursor
// implements it, and so does BytesSource for in-memory data.
type Source interface {
	Pos() int64
	// Next consumes exactly n bytes; the slice is valid until the next call.
	Next(n int) ([]byte, error)
	// Peek returns up to n bytes without consuming them; fewer only at the end.
	Peek(n int) ([]byte, error)
	Skip(n int64) error
}

// bufferedSource is a Source that can expose the bytes it already holds.
type bufferedSource interface {
	Buffered() []byte
}

// Decoder reads partitions from a Source. Its errors are *corrupt.Error
// with component Data.db, the uncompressed offset, and the file named by
// SetFile.
type Decoder struct {
	file string // Data.db's path, for errors
	// slowOnly turns fastRow, fastRowBody and the fixed-width clustering
	// shortcut off, for tests that hold them to the general path.
	slowOnly bool
	src      Source
	schema   *Schema
	u        Unfiltered
	// inPartition is set between a header and its end-of-partition byte.
	inPartition bool
	partStart   int64
	prevStart   int64 // where the previous unfiltered (or the header) started
	keyBuf      []byte
	buffered    bufferedSource // src, when it can expose its chunk in memory
	// win is the rest of the source's chunk the fast path parses from;
	// winOff its position; pending how much of it was consumed without the
	// source knowing yet (see sync).
	win     []byte
	winOff  int64
	pending int64
	// fixedWidth is the clustering's width when every clustering type is
	// fixed-width and none is null or empty; -1 when types vary.
	fixedWidth int
	need       int // bytes parseUnfiltered asked for
	// ldtLimit and ttlLimit bound the deletion-time and TTL deltas the
	// fast paths take: below them minimum + delta is the same in 32 and 64
	// bits and not negative, so no cast is involved. Anything else goes
	// to the general path, which casts as the version's release does.
	ldtLimit, ttlLimit uint64
	// timeNotes collects deletion times and TTLs a verifier flags, when
	// noteTimes is set (CollectTimeAnomalies).
	noteTimes bool
	timeNotes []TimeAnomaly
	// lay records the fields read in layout mode (RecordLayout); nil
	// otherwise.
	lay *layout
	// parts is where the clustering decoder records the parts of what it
	// decodes: &lay.parts in layout mode, nil otherwise.
	parts *[]clustering.Part
	// frame and prefix are what NextFrame returns.
	frame  Frame
	prefix []byte
}

// A TimeAnomaly is a deletion time or TTL that Cassandra's reader of this
// version accepts but sstablescrub would flag (CASSANDRA-14092): a stored
// delta that is not a Java int (3.x/4.x truncate it), or a result that is
// negative (a local deletion time that overflowed past 2038, a TTL that
// wrapped).
type TimeAnomaly struct {
	Offset int64  // where the vint starts in uncompressed Data.db
	What   string // e.g. "cell local deletion time"
	Raw    uint64 // the stored delta
	Value  int64  // what Cassandra computes from it
	Reason string
}

// CollectTimeAnomalies makes the decoder note every TimeAnomaly it meets
// on the general path; fast paths never meet one (see ldtLimit). TakeTimeAnomalies
// returns and clears them.
func (d *Decoder) CollectTimeAnomalies() { d.noteTimes = true }

// TakeTimeAnomalies returns the anomalies noted since the last call.
func (d *Decoder) TakeTimeAnomalies() []TimeAnomaly {
	out := d.timeNotes
	d.timeNotes = nil
	return out
}

// castLimit is the exclusive bound on a delta from minimum below which
// minimum + delta is what every path computes and is not negative: a Java
// int delta, and for releases that add in 32 bits (3.x/4.x) a sum that
// does not wrap.
func castLimit(minimum int64, checked bool) uint64 {
	switch {
	case minimum < 0:
		return 0
	case checked:
		return 0x80000000
	case minimum > 0x7FFFFFFF:
		return 0
	}
	return uint64(0x80000000 - minimum)
}

// NewDecoder returns a decoder reading src with schema.
func NewDecoder(src Source, schema *Schema) *Decoder {
	d := &Decoder{src: src, schema: schema, fixedWidth: -1,
		ldtLimit: castLimit(schema.MinLocalDeletionTime, schema.Version.CheckedIntVInts),
		ttlLimit: castLimit(schema.MinTTL, schema.Version.CheckedIntVInts)}
	if n := len(schema.ClusteringFixed); n > 0 && n <= 32 {
		d.fixedWidth = 0
		for _, w := range schema.ClusteringFixed {
			if w < 0 {
				d.fixedWidth = -1
				break
			}
			d.fixedWidth += w
		}
	}
	d.buffered, _ = src.(bufferedSource)
	return d
}

// Source returns the decoder's input.
//
// The decoder may have consumed bytes from its window on the source's
// chunk without telling the source yet; Source catches up first, so the
// source's Pos is exact. (Skipping bytes already in memory cannot fail.)
func (d *Decoder) Source() Source {
	_ = d.sync()
	return d.src
}

// SetFile names Data.db in the decoder's errors.
func (d *Decoder) SetFile(path string) { d.file = path }

func (d *Decoder) fail(off int64, expected string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	// A failure below the decoder (a chunk's checksum, a short read) names
	// its own file offset: keep it, and say what was being decoded.
	if ce, ok := corrupt.As(err); ok && ce.File != "" {
		return fmt.Errorf("%w (while decoding %s at uncompressed byte %d)", err, expected, off)
	}
	return &corrupt.Error{File: d.file, Component: dataComponent, Offset: off, Expected: expected, Err: err}
}

const dataComponent = "Data.db"

// ReadPartitionHeader reads a partition header at the current position. It
// returns io.EOF (unwrapped) only when the source is exhausted exactly at a
// partition boundary.
func (d *Decoder) ReadPartitionHeader(h *PartitionHeader) error {
	if err := d.sync(); err != nil {
		return err
	}
	off := d.src.Pos()
	if p, err := d.src.Peek(1); len(p) == 0 {
		if err == nil || err == io.EOF {
			return io.EOF
		}
		return d.fail(off, "a partition key length (2 bytes)", err)
	}
	b, err := d.src.Next(2)
	if err != nil {
		return d.fail(off, "a partition key length (2 bytes)", err)
	}
	klen := int(binary.BigEndian.Uint16(b))
	key, err := d.src.Next(klen)
	if err != nil {
		return d.fail(off+2, fmt.Sprintf("a partition key of %d bytes", klen), err)
	}
	// key aliases the source's buffer, which the Peek below may reuse (a
	// key spanning chunks and a DeletionTime crossing the next boundary
	// share the cursor's scratch): copy it first.
	d.keyBuf = append(d.keyBuf[:0], key...)
	h.Key = d.keyBuf[:klen:klen]
	layout := d.schema.Version.DeletionTimeLayout()
	dtb, err := d.src.Peek(deletiontime.LegacySize)
	if err != nil && !errors.Is(err, io.EOF) {
		return d.fail(off+2+int64(klen), "a partition DeletionTime", err)
	}
	dt, n, err := layout.Decode(dtb)
	if err != nil {
		return d.fail(off+2+int64(klen), "a "+layout.String()+" partition DeletionTime", err)
	}
	if err := d.src.Skip(int64(n)); err != nil {
		return d.fail(off+2+int64(klen), "a partition DeletionTime", err)
	}
	h.Offset = off
	h.Deletion = dt
	h.Size = 2 + klen + n
	if d.lay != nil {
		d.lay.header(off, klen, n)
	}
	d.inPartition = true
	d.partStart = off
	d.prevStart = off
	return nil
}

// Next decodes the next unfiltered of the current partition. It returns
// nil, nil at the end of the partition. When skipCells is set a row's
// clustering values and body are skipped by their widths, which is how a
// partition-level scan avoids decoding cells; Clustering and Cells then
// stay empty (markers are still decoded whole).
//
// The common case decodes straight from the chunk the source holds in
// memory (Buffered); an unfiltered that straddles a chunk is assembled
// with Peek, growing until it fits.
func (d *Decoder) Next(skipCells bool) (*Unfiltered, error) {
	// The common case first: a plain row wholly inside the window.
	if !skipCells && d.fastRow() {
		return &d.u, nil
	}
	return d.next(skipCells)
}

// next is Next for everything but the common row.
func (d *Decoder) next(skipCells bool) (*Unfiltered, error) {
	if !d.inPartition {
		return nil, errors.New("rows: Next called outside a partition")
	}
	if d.buffered != nil {
		// Fast path: parse from the decoder's window on the chunk in
		// memory and only tell the source how far it got once the window
		// is used up, so a row costs no interface calls.
		if len(d.win) == 0 {
			if err := d.sync(); err != nil {
				return nil, err
			}
			d.win = d.buffered.Buffered()
			d.winOff = d.src.Pos()
		}
		if len(d.win) > 0 {
			off := d.winOff
			n, err := d.parseUnfiltered(d.win, off, skipCells)
			switch {
			case err == nil && n <= int64(len(d.win)):
				d.win = d.win[n:]
				d.winOff += n
				d.pending += n
				if n == 1 && !d.inPartition {
					return nil, d.sync() // end of partition: Pos must be exact
				}
				d.prevStart = off
				return &d.u, nil
			case err == nil:
				// A skipped body that runs past the window.
				if err := d.sync(); err != nil {
					return nil, err
				}
				if err := d.src.Skip(n); err != nil {
					return nil, d.fail(off, fmt.Sprintf("an unfiltered of %d bytes", n), err)
				}
				d.prevStart = off
				return &d.u, nil
			case err != errNeedMore:
				d.retry()
				return nil, err
			}
		}
		d.retry()
		if err := d.sync(); err != nil {
			return nil, err
		}
	}
	off := d.src.Pos()
	var b []byte
	if d.buffered != nil {
		b = d.buffered.Buffered()
	}
	want := 0
	for {
		n, err := d.parseUnfiltered(b, off, skipCells)
		if err == nil {
			if err := d.src.Skip(n); err != nil {
				return nil, d.fail(off, fmt.Sprintf("an unfiltered of %d bytes", n), err)
			}
			if n == 1 && !d.inPartition {
				return nil, nil // end of partition
			}
			d.prevStart = off
			return &d.u, nil
		}
		d.retry()
		if err != errNeedMore {
			return nil, err
		}
		// Ask for what the parse said it needs, at least twice as much as
		// before, so a large unfiltered costs few attempts.
		want = max(d.need, 2*len(b), 64)
		var perr error
		b, perr = d.src.Peek(want)
		if perr != nil && perr != io.EOF {
			return nil, d.fail(off, "an unfiltered", perr)
		}
		if len(b) < want && len(b) < d.need {
			return nil, d.fail(off+int64(len(b)), fmt.Sprintf("an unfiltered of %d bytes", d.need), io.ErrUnexpectedEOF)
		}
		if perr == io.EOF {
			// Everything that is left: one more parse either fits or fails.
			n, err := d.parseUnfiltered(b, off, skipCells)
			if err != nil {
				d.retry()
			}
			if err == errNeedMore {
				return nil, d.fail(off+int64(len(b)), "a complete unfiltered", io.ErrUnexpectedEOF)
			}
			if err != nil {
				return nil, err
			}
			if err := d.src.Skip(n); err != nil {
				return nil, d.fail(off, fmt.Sprintf("an unfiltered of %d bytes", n), err)
			}
			if n == 1 && !d.inPartition {
				return nil, nil
			}
			d.prevStart = off
			return &d.u, nil
		}
	}
}

// parseUnfiltered decodes one unfiltered from b (which starts at Data.db
// position off) into d.u and returns how many bytes the source must skip.
// With skipCells the row body need not be in b: only its size is read.
func (d *Decoder) parseUnfiltered(b []byte, off int64, skipCells bool) (int64, error) {
	u := &d.u
	u.reset()
	sizeAt, prevAt, p, err := d.scanFrame(b, off, !skipCells)
	if err != nil {
		return 0, err
	}
	total := u.Size
	if u.Flags == FlagEndOfPartition {
		d.inPartition = false
		if d.lay != nil {
			d.lay.end(off)
		}
		return 1, nil
	}
	if skipCells && u.Kind != KindMarker {
		return total, nil
	}
	if int64(len(b)) < total {
		d.need = int(total)
		return 0, errNeedMore
	}
	if d.lay != nil {
		// The one test layout mode costs the general path per unfiltered.
		d.lay.frame(u, sizeAt, prevAt, p)
	}
	body := b[p:total:total]
	var used int
	notes := len(d.timeNotes)
	if u.Kind == KindMarker {
		used, err = d.decodeMarkerBody(u, body)
	} else {
		used, err = d.decodeRowBody(u, body)
	}
	for i := notes; i < len(d.timeNotes); i++ {
		d.timeNotes[i].Offset += off + int64(p)
	}
	if err != nil {
		if _, ok := corrupt.As(err); ok {
			return 0, corrupt.Place(err, d.file, "", off+int64(p))
		}
		return 0, d.fail(off+int64(p), "a row body", err)
	}
	if used != len(body) {
		return 0, d.fail(off+int64(p+used), fmt.Sprintf("the body to end after %d bytes", len(body)), fmt.Errorf("%d bytes decoded", used))
	}
	return total, nil
}

// SkipRest skips to the end of the current partition.
func (d *Decoder) SkipRest() error {
	for d.inPartition {
		if _, err := d.Next(true); err != nil {
			return err
		}
	}
	return nil
}

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

// fastRow decodes the common unfiltered, a plain row with fixed-width
// clustering (or none) that lies wholly in the window, in one call: what
// reset, parseUnfiltered and decodeRowBody would do, without their general
// cases, and moves the window past it. For anything else it reports false,
// having changed nothing that matters; next then starts over and decides.
func (d *Decoder) fastRow() bool {
	b, off := d.win, d.winOff
	if len(b) == 0 || !d.inPartition || d.slowOnly {
		return false
	}
	flags := b[0]
	if flags&(FlagEndOfPartition|FlagIsMarker|FlagExtension) != 0 {
		return false
	}
	u := &d.u
	p := 1
	vals := u.Clustering[:0]
	if fixed := d.schema.ClusteringFixed; len(fixed) > 0 {
		// Fixed-width types and no null or empty value (a zero header).
		if d.fixedWidth < 0 || len(b) < 2+d.fixedWidth || b[1] != 0 {
			return false
		}
		q := 2
		for _, w := range fixed {
			vals = append(vals, b[q:q+w:q+w])
			q += w
		}
		p = q
	}
	// One-byte vints are taken inline: vint.At is too large to inline.
	size, n := uint64(0), 1
	if p < len(b) && b[p] < 0x80 {
		size = uint64(b[p])
	} else if size, n = vint.At(b, p); n == 0 {
		return false
	}
	p += n
	prev, n := uint64(0), 1
	if p < len(b) && b[p] < 0x80 {
		prev = uint64(b[p])
	} else {
		prev, n = vint.At(b, p)
	}
	if n == 0 || size < uint64(n) || size-uint64(n) > uint64(len(b)-p-n) {
		return false
	}
	p += n
	total := p + int(size) - n
	u.Kind, u.Offset, u.Size, u.Flags, u.ExtFlags, u.PrevSize = KindRow, off, int64(total), flags, 0, prev
	u.Clustering = vals
	u.Bound.Kind = 0
	if len(u.Bound.Values) > 0 {
		u.Bound.Values = u.Bound.Values[:0]
	}
	u.Liveness = Liveness{}
	u.EndDeletion, u.StartDeletion = deletiontime.DeletionTime{}, deletiontime.DeletionTime{}
	u.Shadowable, u.ScyllaShadowable = false, deletiontime.DeletionTime{}
	if len(u.ComplexDeletions) > 0 {
		u.ComplexDeletions = u.ComplexDeletions[:0]
	}
	used, ok := d.fastRowBody(u, b[p:total:total])
	if !ok || used != total-p {
		return false
	}
	d.prevStart = off
	d.win = b[total:]
	d.winOff += int64(total)
	d.pending += int64(total)
	return true
}

// fastRowBody decodes a row body without wording errors: every read is
// inline on a local cursor, with no closure, no body struct behind a
// pointer and no error strings built. It reports false on anything it does
// not take (supersets of 64+ columns, bad or short input); decodeRowBody
// then starts over on slowRowBody. Its results must equal slowRowBody's.
func (d *Decoder) fastRowBody(u *Unfiltered, b []byte) (int, bool) {
	s := d.schema
	flags := u.Flags
	pos := 0
	u.Deletion = deletiontime.Live
	if flags&FlagHasTimestamp != 0 {
		// vint.Load8 inline first; vint.At, a call, near the body's end.
		v, n := vint.Load8(b, pos)
		if n == 0 {
			if v, n = vint.At(b, pos); n == 0 {
				return pos, false
			}
		}
		pos += n
		u.Liveness.HasTimestamp = true
		u.Liveness.Timestamp = int64(v) + s.MinTimestamp
		if flags&FlagHasTTL != 0 {
			ttl, n := vint.Load8(b, pos)
			if n == 0 {
				ttl, n = vint.At(b, pos)
			}
			if n == 0 || ttl >= d.ttlLimit {
				return pos, false
			}
			pos += n
			ldt, n := vint.Load8(b, pos)
			if n == 0 {
				ldt, n = vint.At(b, pos)
			}
			if n == 0 || ldt >= d.ldtLimit {
				return pos, false
			}
			pos += n
			u.Liveness.TTL = int64(ttl) + s.MinTTL
			u.Liveness.LocalExpirationTime = int64(ldt) + s.MinLocalDeletionTime
			if u.Liveness.TTL == 0 {
				return pos, false // not how Cassandra writes it: the general path
			}
		}
	}
	if flags&FlagHasDeletion != 0 {
		dt, n, ok := d.fastDeletionTime(b, pos)
		if !ok {
			return pos, false
		}
		pos += n
		u.Deletion = dt
		u.Shadowable = u.ExtFlags&ExtFlagShadowableDel != 0
	}
	if u.ExtFlags&ExtFlagScyllaShadowable != 0 {
		return pos, false // rare: the general path reads it
	}
	columns := s.Regular
	if u.Kind == KindStaticRow {
		columns = s.Static
	}
	var missing uint64
	if flags&FlagHasAllColumns == 0 {
		enc, n := uint64(0), 1
		if pos < len(b) && b[pos] < 0x80 {
			enc = uint64(b[pos])
		} else {
			enc, n = vint.At(b, pos)
		}
		if n == 0 || enc != 0 && (len(columns) >= 64 || enc>>uint(len(columns)) != 0) {
			return pos, false
		}
		pos += n
		missing = enc
	}
	// Cells are kept in a local slice and stored back once: a store of a
	// slice header into u per cell costs write barrier checks.
	cells := u.Cells[:0]
	ok := true
	for ci := range columns {
		if missing&(1<<uint(ci)) != 0 { // 0 for ci >= 64: missing is 0 then
			continue
		}
		col := &columns[ci]
		count := uint64(1)
		if col.Complex {
			if flags&FlagHasComplexDelete != 0 {
				dt, n, ok := d.fastDeletionTime(b, pos)
				if !ok {
					return pos, false
				}
				pos += n
				if !dt.IsLive() {
					u.ComplexDeletions = append(u.ComplexDeletions, ComplexDeletion{Column: ci, Deletion: dt})
				}
			}
			if pos < len(b) && b[pos] < 0x80 {
				count = uint64(b[pos])
				pos++
			} else {
				var n int
				count, n = vint.At(b, pos)
				if n == 0 || count > 0x7FFFFFFF {
					return pos, false
				}
				pos += n
			}
			if count > uint64(len(b)-pos) {
				return pos, false
			}
		}
		// The cell loop is written out here rather than called per cell:
		// the call and its six arguments cost as much as the decoding.
		for ; count > 0; count-- {
			if pos >= len(b) {
				return pos, false
			}
			flags := b[pos]
			pos++
			ts, ldt, ttl := u.Liveness.Timestamp, int64(0), int64(0)
			if flags&(CellFlagUseRowTS|CellFlagUseRowTTL|CellFlagDeleted|CellFlagExpiring) != CellFlagUseRowTS {
				if pos, ts, ldt, ttl, ok = d.fastCellTimes(b, pos, flags, u); !ok {
					return pos, false
				}
			}
			var path []byte
			if col.Complex {
				l := 0
				if pos < len(b) && b[pos] < 0x80 {
					l = int(b[pos])
					pos++
				} else if l, pos = lengthAt(b, pos); l < 0 {
					return pos, false
				}
				if l > len(b)-pos {
					return pos, false
				}
				path = b[pos : pos+l : pos+l]
				pos += l
			}
			value := emptyValue
			if flags&CellFlagEmptyValue == 0 {
				l := col.Fixed
				if l < 0 {
					if pos < len(b) && b[pos] < 0x80 {
						l = int(b[pos])
						pos++
					} else if l, pos = lengthAt(b, pos); l < 0 {
						return pos, false
					}
				}
				if l > len(b)-pos {
					return pos, false
				}
				value = b[pos : pos+l : pos+l]
				pos += l
			}
			k := len(cells)
			if k == cap(cells) {
				cells = append(cells, Cell{})
			} else {
				cells = cells[:k+1]
			}
			c := &cells[k]
			c.Column, c.Flags = ci, flags
			c.Timestamp, c.LocalDeletionTime, c.TTL = ts, ldt, ttl
			c.Path, c.Value = path, value
		}
	}
	u.Cells = cells
	// Every column not in the missing bitmap (which is below 64 columns).
	u.ColumnsPresent = len(columns) - bits.OnesCount64(missing)
	return pos, true
}

// fastDeletionTime is deletionTime for fastRowBody: ok is false where
// deletionTime would fail.
func (d *Decoder) fastDeletionTime(b []byte, pos int) (deletiontime.DeletionTime, int, bool) {
	mfda, n1 := vint.At(b, pos)
	if n1 == 0 {
		return deletiontime.DeletionTime{}, 0, false
	}
	ldt, n2 := vint.At(b, pos+n1)
	if n2 == 0 || ldt >= d.ldtLimit {
		return deletiontime.DeletionTime{}, 0, false
	}
	dt := deletiontime.DeletionTime{
		MarkedForDeleteAt: int64(mfda) + d.schema.MinTimestamp,
		LocalDeletionTime: int64(ldt) + d.schema.MinLocalDeletionTime,
	}
	if dt.MarkedForDeleteAt == deletiontime.Live.MarkedForDeleteAt {
		dt = deletiontime.Live
	}
	return dt, n1 + n2, true
}

// fastCellTimes reads what a cell that does not simply take the row's
// timestamp carries: its own timestamp, and its local deletion time and
// TTL or the row's. ok is false where fillCell would fail.
func (d *Decoder) fastCellTimes(b []byte, pos int, flags byte, u *Unfiltered) (end int, ts, ldt, ttl int64, ok bool) {
	ts = u.Liveness.Timestamp
	if flags&CellFlagUseRowTS == 0 {
		v, n := vint.At(b, pos)
		if n == 0 {
			return pos, 0, 0, 0, false
		}
		pos += n
		ts = int64(v) + d.schema.MinTimestamp
	}
	if flags&CellFlagUseRowTTL != 0 {
		if flags&CellFlagExpiring == 0 {
			return pos, 0, 0, 0, false // not how Cassandra writes it: the general path
		}
		return pos, ts, u.Liveness.LocalExpirationTime, u.Liveness.TTL, true
	}
	if flags&(CellFlagDeleted|CellFlagExpiring) != 0 {
		v, n := vint.At(b, pos)
		if n == 0 || v >= d.ldtLimit {
			return pos, 0, 0, 0, false
		}
		pos += n
		ldt = int64(v) + d.schema.MinLocalDeletionTime
		if flags&CellFlagExpiring != 0 {
			v, n := vint.At(b, pos)
			if n == 0 || v >= d.ttlLimit {
				return pos, 0, 0, 0, false
			}
			pos += n
			ttl = int64(v) + d.schema.MinTTL
		}
	}
	return pos, ts, ldt, ttl, true
}

// lengthAt reads a length vint (a value or path length, at most 2^31-1)
// of more than one byte at b[pos:] and returns it with the position after
// it; the length is -1 when the vint is cut short or too large.
func lengthAt(b []byte, pos int) (int, int) {
	v, n := vint.At(b, pos)
	if n == 0 || v > 0x7FFFFFFF {
		return -1, pos
	}
	return int(v), pos + n
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

// SkipRestDecoding decodes every remaining unfiltered of the partition
// (checking cells, not just row sizes) and discards them.
func (d *Decoder) SkipRestDecoding() error {
	for d.inPartition {
		if _, err := d.Next(false); err != nil {
			return err
		}
	}
	return nil
}

// InPartition reports whether the decoder is between a partition header and
// the partition's end.
func (d *Decoder) InPartition() bool { return d.inPartition }

// Reset forgets any partition in progress, for a decoder whose source was
// moved to another partition start.
func (d *Decoder) Reset() {
	d.inPartition = false
	d.win, d.pending = nil, 0
}

// sync moves the source past what the fast path consumed from its window.
func (d *Decoder) sync() error {
	d.win = nil
	if d.pending == 0 {
		return nil
	}
	n := d.pending
	d.pending = 0
	if err := d.src.Skip(n); err != nil {
		return d.fail(d.src.Pos(), fmt.Sprintf("%d bytes already decoded", n), err)
	}
	return nil
}

// Pos is the Data.db position of the next byte the decoder will read.
func (d *Decoder) Pos() int64 {
	if d.win != nil {
		return d.winOff
	}
	return d.src.Pos() + d.pending
}
