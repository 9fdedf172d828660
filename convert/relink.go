package convert

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/index"
	"github.com/sstabletool/sstabletool/internal/format/vint"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// relinker copies Data.db partitions from one DeletionTime layout to
// another. Row and marker bodies do not depend on the layout (their
// deletion times are vint deltas against the serialization header), so
// they are copied verbatim; only the partition header is re-encoded, and
// each unfiltered's "previous unfiltered size" (and with it its own size
// field) is recomputed from the new positions.
type relinker struct {
	src    rows.Source
	schema *rows.Schema // the source's
	dst    *writer.DataWriter
	to     deletiontime.Layout
	capDT  bool
	file   string // source Data.db, for errors
	// dec reads src's partition headers and unfiltered framing.
	dec     *rows.Decoder
	buf     []byte
	flagBuf []byte // a prefix whose flags were rewritten
	// reflagged: a row's flags were rewritten (a ScyllaDB shadowable
	// deletion), so the output's frames are not all the source's.
	reflagged bool

	counts *Counts
}

// partitionResult is what the index entry of a rewritten partition needs.
type partitionResult struct {
	key           []byte
	deletion      deletiontime.DeletionTime
	oldStart      int64
	newStart      int64
	oldHeaderSize int
	newHeaderSize int
	oldSize       int64 // whole partition, end-of-partition byte included
	newSize       int64
}

// event pairs a partition-relative position in the source with the same
// point in the output: where each unfiltered starts, where the
// end-of-partition byte starts, and where the partition ends. Promoted index
// blocks start and end at such points.
type event struct{ old, new int64 }

func (r *relinker) corrupt(off int64, expected string, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	if _, ok := corrupt.As(err); ok {
		return corrupt.Place(err, r.file, "", 0)
	}
	return corrupt.New(r.file, "Data.db", off, expected, err)
}

// convertDeletion checks that dt fits the target layout, capping it when
// allowed. place names dt for an error; it is called only for one (a
// partition key formatted per partition cost more than the check).
func (r *relinker) convertDeletion(dt deletiontime.DeletionTime, place func() string, off int64) (deletiontime.DeletionTime, error) {
	if err := r.to.Check(dt); err != nil {
		if !r.capDT {
			return dt, fmt.Errorf("%s: %s at source byte %d cannot be written as %s: %w (use --cap-deletion-times to cap it)", r.file, place(), off, r.to, err)
		}
		c, changed := deletiontime.Cap(dt, r.to)
		if err := r.to.Check(c); err != nil {
			return dt, fmt.Errorf("%s: %s at source byte %d: even capped: %w", r.file, place(), off, err)
		}
		if changed {
			r.counts.Capped++
		}
		return c, nil
	}
	return dt, nil
}

// partition rewrites the partition at the source cursor's position, which
// must be key's. events receives the position pairs (reused buffer). The
// partition header and each unfiltered's framing are read by the row
// decoder (ReadPartitionHeader, NextFrame); the bodies are copied from the
// source as they are.
func (r *relinker) partition(wantKey []byte, events []event) (partitionResult, []event, error) {
	var pr partitionResult
	c := r.src
	if r.dec == nil {
		r.dec = rows.NewDecoder(c, r.schema)
		r.dec.SetFile(r.file)
	}
	start := c.Pos()
	pr.oldStart, pr.newStart = start, r.dst.Pos()
	var h rows.PartitionHeader
	if err := r.dec.ReadPartitionHeader(&h); err != nil {
		if err == io.EOF { // the source ends where a partition should start
			err = r.corrupt(start, "a partition key length (2 bytes)", io.ErrUnexpectedEOF)
		}
		return pr, events, err
	}
	key := h.Key
	if wantKey != nil && !bytes.Equal(key, wantKey) {
		return pr, events, r.corrupt(start+2, fmt.Sprintf("the partition key %x that Index.db names", wantKey), fmt.Errorf("found key %x", key))
	}
	var err error
	if r.buf, pr.deletion, err = r.appendHeader(r.buf[:0], &h); err != nil {
		return pr, events, err
	}
	pr.oldHeaderSize = h.Size
	pr.newHeaderSize = len(r.buf)
	if _, err := r.dst.Write(r.buf); err != nil {
		return pr, events, err
	}
	pr.key = append([]byte(nil), key...)

	events = events[:0]
	prevNew := pr.newStart // previous non-static unfiltered's start (or the partition's)
	for {
		uoff := c.Pos()
		f, prefix, err := r.dec.NextFrame()
		if err != nil {
			return pr, events, err
		}
		if f == nil { // the end-of-partition byte, consumed
			events = append(events, event{uoff - start, r.dst.Pos() - pr.newStart})
			if err := r.dst.WriteByte(rows.FlagEndOfPartition); err != nil {
				return pr, events, err
			}
			pr.oldSize = c.Pos() - start
			pr.newSize = r.dst.Pos() - pr.newStart
			events = append(events, event{pr.oldSize, pr.newSize})
			return pr, events, nil
		}
		static := f.Kind == rows.KindStaticRow
		newStart := r.dst.Pos()
		if !static {
			events = append(events, event{uoff - start, newStart - pr.newStart})
		}
		bodyLen := f.BodyLen()
		if r.buf, err = r.appendFrame(r.buf[:0], prefix, f.ExtFlags, static, f.PrevSize, bodyLen, newStart, &prevNew, uoff); err != nil {
			return pr, events, err
		}
		if _, err := r.dst.Write(r.buf); err != nil {
			return pr, events, err
		}
		for bodyLen > 0 {
			k := min(bodyLen, 64<<10)
			body, err := c.Next(int(k))
			if err != nil {
				return pr, events, r.corrupt(c.Pos(), fmt.Sprintf("an unfiltered body of %d more bytes", bodyLen), err)
			}
			if _, err := r.dst.Write(body); err != nil {
				return pr, events, err
			}
			bodyLen -= k
		}
	}
}

// appendHeader appends to dst the partition header h (read at source
// byte h.Offset) in the target layout, and returns the deletion written.
func (r *relinker) appendHeader(dst []byte, h *rows.PartitionHeader) ([]byte, deletiontime.DeletionTime, error) {
	key := h.Key
	r.counts.add(PlacePartitionHeader, h.Deletion)
	dt, err := r.convertDeletion(h.Deletion, func() string { return fmt.Sprintf("partition deletion of key %x", key) }, h.Offset+2+int64(len(key)))
	if err != nil {
		return dst, dt, err
	}
	dst, err = rows.AppendPartitionHeader(dst, key, r.to, dt)
	return dst, dt, err
}

// appendFrame appends to dst an unfiltered's frame as the relinker writes
// it: its flags and clustering (prefix; a ScyllaDB shadowable deletion's
// flags respelled), then its size and previous-size fields for a body of
// bodyLen bytes at output position newStart, the previous non-static
// unfiltered (or the partition) having started at *prevNew (positions
// relative to anything, as long as both are). A static row keeps its
// previous size (0 as Cassandra writes it). uoff is the unfiltered's
// source position, for errors.
func (r *relinker) appendFrame(dst, prefix []byte, ext byte, static bool, prevSize uint64, bodyLen, newStart int64, prevNew *int64, uoff int64) ([]byte, error) {
	if ext&rows.ExtFlagScyllaShadowable != 0 {
		var err error
		if prefix, err = r.cassandraShadowable(prefix, uoff); err != nil {
			return dst, err
		}
	}
	dst = append(dst, prefix...)
	newPrev := prevSize
	if !static {
		newPrev = uint64(newStart - *prevNew)
		*prevNew = newStart
	}
	dst = vint.AppendUnsigned(dst, uint64(vint.UnsignedSize(newPrev))+uint64(bodyLen))
	return vint.AppendUnsigned(dst, newPrev), nil
}

// cassandraShadowable rewrites the flags of a row that carries ScyllaDB's
// shadowable deletion (extended flag 0x80, the deletion after the regular
// one in the body) as Cassandra's (cassandraShadowablePrefix). A row with
// both a regular and a Scylla shadowable deletion has no Cassandra
// spelling. raw (flags, extended flags, clustering) is copied, not changed.
func (r *relinker) cassandraShadowable(raw []byte, off int64) ([]byte, error) {
	if raw[0]&rows.FlagHasDeletion != 0 {
		return nil, fmt.Errorf("%s: row at source byte %d carries a regular and a ScyllaDB shadowable deletion; Cassandra's format holds only one: not convertible", r.file, off)
	}
	r.flagBuf = cassandraShadowablePrefix(r.flagBuf, raw)
	r.reflagged = true
	return r.flagBuf, nil
}

// cassandraShadowablePrefix is raw (flags, extended flags, clustering of a
// row with ScyllaDB's shadowable deletion) in dst, its flags as Cassandra
// spells that deletion: the row deletion flag with extended flag 0x02,
// which reads the same body bytes as one shadowable deletion.
func cassandraShadowablePrefix(dst, raw []byte) []byte {
	dst = append(dst[:0], raw...)
	dst[0] |= rows.FlagHasDeletion
	dst[1] = dst[1]&^rows.ExtFlagScyllaShadowable | rows.ExtFlagShadowableDel
	return dst
}

// relinkEntry returns the Index.db entry of the rewritten partition:
// position, header length and DeletionTime in the new layout, and every
// promoted index block moved to the output positions of the same
// unfiltereds.
func (r *relinker) relinkEntry(e *index.Entry, pr *partitionResult, events []event, entryPos int64) error {
	e.Position = pr.newStart
	if !e.Indexed() {
		return nil
	}
	fail := func(expected string, err error) error {
		return corrupt.New(r.file+" (Index.db)", "Index.db", entryPos, expected, err)
	}
	e.HeaderLength += int64(pr.newHeaderSize - pr.oldHeaderSize)
	r.counts.add(PlaceIndexEntry, e.Deletion)
	var err error
	if e.Deletion, err = r.convertDeletion(e.Deletion, func() string { return "index entry deletion" }, entryPos); err != nil {
		return err
	}
	ev := 0
	for i := range e.Blocks {
		blk := &e.Blocks[i]
		oldEnd := blk.Offset + blk.Width
		for ev < len(events) && events[ev].old < blk.Offset {
			ev++
		}
		if ev == len(events) || events[ev].old != blk.Offset {
			return fail(fmt.Sprintf("index block %d to start at an unfiltered of the partition", i), fmt.Errorf("offset %d", blk.Offset))
		}
		newOff := events[ev].new
		for ev < len(events) && events[ev].old < oldEnd {
			ev++
		}
		if ev == len(events) || events[ev].old != oldEnd {
			return fail(fmt.Sprintf("index block %d to end at an unfiltered or the partition end", i), fmt.Errorf("offset %d + width %d", blk.Offset, blk.Width))
		}
		blk.Offset, blk.Width = newOff, events[ev].new-newOff
		if blk.EndOpenMarker != nil {
			r.counts.add(PlaceIndexBlock, *blk.EndOpenMarker)
			d, err := r.convertDeletion(*blk.EndOpenMarker, func() string { return fmt.Sprintf("index block %d end-open marker", i) }, entryPos)
			if err != nil {
				return err
			}
			blk.EndOpenMarker = &d
		} else {
			r.counts.BlocksWithoutMarker++
		}
	}
	return nil
}
