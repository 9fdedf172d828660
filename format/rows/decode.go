package rows

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
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
	// tap sees each unfiltered decoded with its body (SetTap); bodyLeft
	// is what FrameBody has left of the body of NextFrame's unfiltered.
	tap      Tap
	bodyLeft int64
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
	if d.tap != nil {
		d.tap(b[:sizeAt], body)
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
