package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/index"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/vint"
	"github.com/sstabletool/sstabletool/writer"
)

// relinker copies Data.db partitions from one DeletionTime layout to
// another. Row and marker bodies do not depend on the layout (their
// deletion times are vint deltas against the serialization header), so
// they are copied verbatim; only the partition header is re-encoded, and
// each unfiltered's "previous unfiltered size" (and with it its own size
// field) is recomputed from the new positions.
type relinker struct {
	src     rows.Source
	dst     *writer.DataWriter
	fixed   []int
	from    deletiontime.Layout
	to      deletiontime.Layout
	capDT   bool
	file    string // source Data.db, for errors
	scratch [][]byte
	buf     []byte
	flagBuf []byte // a prefix whose flags were rewritten

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
	var ce *corrupt.Error
	if errors.As(err, &ce) {
		if ce.File == "" {
			ce.File = r.file
		}
		return ce
	}
	return corrupt.New(r.file, "Data.db", off, expected, err)
}

// convertDeletion checks that dt fits the target layout, capping it when
// allowed.
func (r *relinker) convertDeletion(dt deletiontime.DeletionTime, place string, off int64) (deletiontime.DeletionTime, error) {
	if err := r.to.Check(dt); err != nil {
		if !r.capDT {
			return dt, fmt.Errorf("%s: %s at source byte %d cannot be written as %s: %w (use --cap-deletion-times to cap it)", r.file, place, off, r.to, err)
		}
		c, changed := deletiontime.Cap(dt, r.to)
		if err := r.to.Check(c); err != nil {
			return dt, fmt.Errorf("%s: %s at source byte %d: even capped: %w", r.file, place, off, err)
		}
		if changed {
			r.counts.Capped++
		}
		return c, nil
	}
	return dt, nil
}

// partition rewrites the partition at the source cursor's position, which
// must be key's. events receives the position pairs (reused buffer).
func (r *relinker) partition(wantKey []byte, events []event) (partitionResult, []event, error) {
	var pr partitionResult
	c := r.src
	start := c.Pos()
	pr.oldStart, pr.newStart = start, r.dst.Pos()
	b, err := c.Next(2)
	if err != nil {
		return pr, events, r.corrupt(start, "a partition key length (2 bytes)", err)
	}
	klen := int(binary.BigEndian.Uint16(b))
	key, err := c.Next(klen)
	if err != nil {
		return pr, events, r.corrupt(start+2, fmt.Sprintf("a partition key of %d bytes", klen), err)
	}
	if wantKey != nil && string(key) != string(wantKey) {
		return pr, events, r.corrupt(start+2, fmt.Sprintf("the partition key %x that Index.db names", wantKey), fmt.Errorf("found key %x", key))
	}
	r.buf = append(r.buf[:0], b...)
	r.buf = append(r.buf, key...)
	pr.key = r.buf[2:]
	dtOff := c.Pos()
	dtb, err := c.Peek(deletiontime.LegacySize)
	if err != nil && !errors.Is(err, io.EOF) {
		return pr, events, r.corrupt(dtOff, "a partition DeletionTime", err)
	}
	dt, n, err := r.from.Decode(dtb)
	if err != nil {
		return pr, events, r.corrupt(dtOff, "a "+r.from.String()+" partition DeletionTime", err)
	}
	if err := c.Skip(int64(n)); err != nil {
		return pr, events, r.corrupt(dtOff, "a partition DeletionTime", err)
	}
	r.counts.add(PlacePartitionHeader, dt)
	if dt, err = r.convertDeletion(dt, "partition deletion of key "+fmt.Sprintf("%x", key), dtOff); err != nil {
		return pr, events, err
	}
	pr.deletion = dt
	pr.oldHeaderSize = 2 + klen + n
	if r.buf, err = r.to.Append(r.buf, dt); err != nil {
		return pr, events, err
	}
	pr.key = r.buf[2 : 2+klen]
	pr.newHeaderSize = len(r.buf)
	if _, err := r.dst.Write(r.buf); err != nil {
		return pr, events, err
	}
	// Keep the key: r.buf is reused below.
	pr.key = append([]byte(nil), pr.key...)

	events = events[:0]
	prevNew := pr.newStart // previous non-static unfiltered's start (or the partition's)
	for {
		uoff := c.Pos()
		fb, err := c.Peek(2)
		if len(fb) == 0 {
			return pr, events, r.corrupt(uoff, "unfiltered flags or end of partition", err)
		}
		flags := fb[0]
		if flags&rows.FlagEndOfPartition != 0 {
			if flags != rows.FlagEndOfPartition {
				return pr, events, r.corrupt(uoff, "end-of-partition byte 0x01", fmt.Errorf("flags 0x%02x", flags))
			}
			events = append(events, event{uoff - start, r.dst.Pos() - pr.newStart})
			c.Skip(1)
			if err := r.dst.WriteByte(rows.FlagEndOfPartition); err != nil {
				return pr, events, err
			}
			pr.oldSize = c.Pos() - start
			pr.newSize = r.dst.Pos() - pr.newStart
			events = append(events, event{pr.oldSize, pr.newSize})
			return pr, events, nil
		}
		static := false
		if flags&rows.FlagExtension != 0 {
			if len(fb) < 2 {
				return pr, events, r.corrupt(uoff+1, "extended flags", io.ErrUnexpectedEOF)
			}
			static = fb[1]&rows.ExtFlagIsStatic != 0
		}
		newStart := r.dst.Pos()
		if !static {
			events = append(events, event{uoff - start, newStart - pr.newStart})
		}
		plen, err := r.prefixLen(flags, static)
		if err != nil {
			return pr, events, r.corrupt(uoff, "a clustering prefix", err)
		}
		raw, err := c.Next(plen)
		if err != nil {
			return pr, events, r.corrupt(uoff, "a clustering prefix", err)
		}
		if flags&rows.FlagExtension != 0 && raw[1]&rows.ExtFlagScyllaShadowable != 0 {
			if raw, err = r.cassandraShadowable(raw, uoff); err != nil {
				return pr, events, err
			}
		}
		if _, err := r.dst.Write(raw); err != nil {
			return pr, events, err
		}
		sizePos := c.Pos()
		size, err := r.uvint()
		if err != nil {
			return pr, events, r.corrupt(sizePos, "the unfiltered's body size (vint)", err)
		}
		prevPos := c.Pos()
		prev, err := r.uvint()
		if err != nil {
			return pr, events, r.corrupt(prevPos, "the previous unfiltered's size (vint)", err)
		}
		prevWidth := uint64(c.Pos() - prevPos)
		if size < prevWidth || size-prevWidth > 1<<31 {
			return pr, events, r.corrupt(sizePos, "a body size covering the previous-size field and below 2 GiB", fmt.Errorf("size %d", size))
		}
		bodyLen := int64(size - prevWidth)
		newPrev := prev // a static row's is 0 and stays so
		if !static {
			newPrev = uint64(newStart - prevNew)
			prevNew = newStart
		}
		var vb [2 * vint.MaxLen]byte
		sizes := vint.AppendUnsigned(vb[:0], uint64(vint.UnsignedSize(newPrev))+uint64(bodyLen))
		sizes = vint.AppendUnsigned(sizes, newPrev)
		if _, err := r.dst.Write(sizes); err != nil {
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

// cassandraShadowable rewrites the flags of a row that carries ScyllaDB's
// shadowable deletion (extended flag 0x80, the deletion after the regular
// one in the body) as Cassandra's: the row deletion flag with extended flag
// 0x02, which reads the same body bytes as one shadowable deletion. A row
// with both a regular and a Scylla shadowable deletion has no Cassandra
// spelling. raw (flags, extended flags, clustering) is copied, not changed.
func (r *relinker) cassandraShadowable(raw []byte, off int64) ([]byte, error) {
	if raw[0]&rows.FlagHasDeletion != 0 {
		return nil, fmt.Errorf("%s: row at source byte %d carries a regular and a ScyllaDB shadowable deletion; Cassandra's format holds only one: not convertible", r.file, off)
	}
	r.flagBuf = append(r.flagBuf[:0], raw...)
	r.flagBuf[0] |= rows.FlagHasDeletion
	r.flagBuf[1] = r.flagBuf[1]&^rows.ExtFlagScyllaShadowable | rows.ExtFlagShadowableDel
	return r.flagBuf, nil
}

// prefixLen is the width of flags, extended flags and clustering prefix of
// the unfiltered at the cursor, found by decoding the prefix from a peek
// that grows until the prefix fits (it may straddle chunks).
func (r *relinker) prefixLen(flags byte, static bool) (int, error) {
	head := 1
	if flags&rows.FlagExtension != 0 {
		head = 2
	}
	marker := flags&rows.FlagIsMarker != 0
	if !marker && (static || len(r.fixed) == 0) {
		return head, nil
	}
	want := 64
	for {
		b, err := r.src.Peek(head + want)
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if len(b) < head {
			return 0, io.ErrUnexpectedEOF
		}
		var n int
		var derr error
		if marker {
			var p clustering.Prefix
			p, n, derr = clustering.DecodeBound(r.scratch[:0], b[head:], r.fixed)
			r.scratch = p.Values[:0]
		} else {
			var vals [][]byte
			vals, n, derr = clustering.DecodeValues(r.scratch[:0], b[head:], len(r.fixed), r.fixed)
			r.scratch = vals[:0]
		}
		if derr == nil {
			return head + n, nil
		}
		short := errors.Is(derr, clustering.ErrShort) || errors.Is(derr, vint.ErrShort)
		if !short {
			return 0, derr
		}
		if len(b) < head+want || want >= 1<<26 {
			return 0, io.ErrUnexpectedEOF
		}
		want *= 4
	}
}

func (r *relinker) uvint() (uint64, error) {
	b, err := r.src.Peek(1)
	if len(b) == 0 {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return 0, err
	}
	b, err = r.src.Next(vint.EncodedLen(b[0]))
	if err != nil {
		return 0, err
	}
	v, _, err := vint.Unsigned(b)
	return v, err
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
	if e.Deletion, err = r.convertDeletion(e.Deletion, "index entry deletion", entryPos); err != nil {
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
			d, err := r.convertDeletion(*blk.EndOpenMarker, fmt.Sprintf("index block %d end-open marker", i), entryPos)
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
