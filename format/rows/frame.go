package rows

import (
	"errors"
	"fmt"
	"io"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Frame is the framing of one unfiltered (UnfilteredSerializer): the flags
// byte, the extended flags byte when FlagExtension is set, a row's
// clustering values or a marker's bound (a static row has neither), the
// size vint, which counts what follows it (the previous-size vint and the
// body), and the previous unfiltered's size. (The end-of-partition byte is
// a frame of its own, one byte long; NextFrame consumes it and returns nil.)
//
// scanFrame is the one reader of this framing. The decoder's general path
// and NextFrame (convert's relinker) call it; the tuned loops that step
// over the commonest rows without it (fastRow, skimFixedWindow, skimOne)
// are held to it by FuzzFrameMatchesFastLoops, FuzzFastRowBodyMatchesSlow
// and FuzzSkimMatchesNext.
type Frame struct {
	Offset   int64 // Data.db position of the flags byte
	Flags    byte
	ExtFlags byte
	Kind     Kind
	// SizeAt is where the size vint starts: the width of the flags,
	// extended flags and clustering or bound. BodyAt is where the body
	// starts, past the size and previous-size vints.
	SizeAt, BodyAt int
	PrevSize       uint64
	// Len is the whole unfiltered's width, body included.
	Len int64
}

// BodyLen is the width of the body, after the size fields.
func (f *Frame) BodyLen() int64 { return f.Len - int64(f.BodyAt) }

// errNeedMore says the bytes at hand end inside the unfiltered; d.need
// then holds how many bytes would do, when known.
var errNeedMore = errors.New("rows: need more bytes")

// scanFrame reads the frame of the unfiltered at the start of b, which is
// at Data.db position off, into d.u: Kind, Offset, Flags, ExtFlags,
// PrevSize and Size (the whole unfiltered's width, body included; 1 for
// the end-of-partition byte). It returns where the size vint, the
// previous-size vint and the body start; errNeedMore when b ends inside
// the frame (never for want of the body); a *corrupt.Error for anything
// Cassandra would not read.
//
// A marker's bound is decoded into d.u.Bound. A row's clustering values are
// decoded into d.u.Clustering when values is set, and only measured
// otherwise (a size-only scan, the relinker). The caller resets d.u first.
// In layout mode the clustering decoder records the parts of a bound or of
// decoded values in d.parts.
//
// The results go straight into d.u and registers, not into a Frame: the
// decoder's general path runs this for every row of a table whose
// clustering is not fixed-width.
func (d *Decoder) scanFrame(b []byte, off int64, values bool) (sizeAt, prevAt, bodyAt int, err error) {
	d.need = 0
	if len(b) == 0 {
		d.need = 1
		return 0, 0, 0, errNeedMore
	}
	u := &d.u
	flags := b[0]
	u.Offset, u.Flags = off, flags
	if flags&FlagEndOfPartition != 0 {
		if flags != FlagEndOfPartition {
			return 0, 0, 0, d.fail(off, "end-of-partition byte 0x01", fmt.Errorf("flags 0x%02x", flags))
		}
		u.Size = 1
		return 1, 1, 1, nil
	}
	p := 1
	var ext byte
	if flags&FlagExtension != 0 {
		if len(b) < 2 {
			return 0, 0, 0, errNeedMore
		}
		ext = b[1]
		u.ExtFlags = ext
		p = 2
	}
	fixed := d.schema.ClusteringFixed
	switch {
	case flags&FlagIsMarker != 0:
		u.Kind = KindMarker
		pr, n, err := clustering.DecodeBoundParts(u.Bound.Values[:0], b[p:], fixed, d.parts)
		if err != nil {
			if errors.Is(err, clustering.ErrShort) {
				return 0, 0, 0, errNeedMore
			}
			return 0, 0, 0, d.fail(off+int64(p), "a range tombstone bound", err)
		}
		u.Bound = pr
		p += n
	case ext&ExtFlagIsStatic != 0:
		u.Kind = KindStaticRow
	default:
		u.Kind = KindRow
		if len(fixed) == 0 {
			break
		}
		switch {
		case !values && d.fixedWidth >= 0 && p < len(b) && b[p] == 0:
			// All clustering types are fixed-width and no value is null or
			// empty (a zero header byte): the width is known.
			p += 1 + d.fixedWidth
		case !values:
			// A size-only scan needs the clustering's width, not its values.
			n, err := clustering.SkipValues(b[p:], len(fixed), fixed)
			if err != nil {
				if errors.Is(err, clustering.ErrShort) {
					return 0, 0, 0, errNeedMore
				}
				return 0, 0, 0, d.fail(off+int64(p), "a row clustering", err)
			}
			p += n
		case d.fixedWidth >= 0 && p < len(b) && b[p] == 0 && len(b)-(p+1) >= d.fixedWidth && !d.slowOnly:
			// Fixed-width types with no null or empty value: slice the
			// values without the general decoder, the same slices
			// clustering.DecodeValues would return.
			q := p + 1
			vals := u.Clustering[:0]
			for _, w := range fixed {
				vals = append(vals, b[q:q+w:q+w])
				q += w
			}
			u.Clustering = vals
			p = q
		default:
			vals, n, err := clustering.DecodeValuesParts(u.Clustering[:0], b[p:], len(fixed), fixed, d.parts)
			if err != nil {
				if errors.Is(err, clustering.ErrShort) {
					return 0, 0, 0, errNeedMore
				}
				return 0, 0, 0, d.fail(off+int64(p), "a row clustering", err)
			}
			u.Clustering = vals
			p += n
		}
	}
	// The size vints, one-byte ones inline (vint.At is too large to be
	// inlined).
	sizeAt = p
	size, n := uint64(0), 1
	if p < len(b) && b[p] < 0x80 {
		size = uint64(b[p])
	} else if size, n = vint.At(b, p); n == 0 {
		return 0, 0, 0, errNeedMore
	}
	p += n
	prevAt = p
	prev := uint64(0)
	if p < len(b) && b[p] < 0x80 {
		prev, n = uint64(b[p]), 1
	} else if prev, n = vint.At(b, p); n == 0 {
		return 0, 0, 0, errNeedMore
	}
	p += n
	if size < uint64(n) {
		return 0, 0, 0, d.fail(off+int64(sizeAt), "a body size covering the previous-size field", fmt.Errorf("size %d", size))
	}
	bodyLen := size - uint64(n)
	if bodyLen > 1<<31 {
		return 0, 0, 0, d.fail(off+int64(sizeAt), "a body size below 2 GiB", fmt.Errorf("size %d", size))
	}
	u.PrevSize = prev
	u.Size = int64(p) + int64(bodyLen)
	return sizeAt, prevAt, p, nil
}

// NextFrame reads the framing of the next unfiltered of the partition and
// stops at its body: the caller reads exactly f.BodyLen() bytes from
// Source before it calls NextFrame again. This is how convert copies
// bodies verbatim while it rewrites the size fields. prefix is the flags,
// extended flags and clustering or bound as stored, in the decoder's own
// buffer, valid until the next call. At the end of the partition it consumes
// the end byte and returns nil. The source's position is exact between
// calls.
func (d *Decoder) NextFrame() (*Frame, []byte, error) {
	if !d.inPartition {
		return nil, nil, errors.New("rows: NextFrame called outside a partition")
	}
	if err := d.sync(); err != nil {
		return nil, nil, err
	}
	d.u.reset()
	off := d.src.Pos()
	var b []byte
	if d.buffered != nil {
		b = d.buffered.Buffered()
	}
	var sizeAt, bodyAt int
	for {
		var err error
		sizeAt, _, bodyAt, err = d.scanFrame(b, off, false)
		if err == nil {
			break
		}
		if err != errNeedMore {
			return nil, nil, err
		}
		want := max(d.need, 2*len(b), 64)
		var perr error
		b, perr = d.src.Peek(want)
		if perr != nil && perr != io.EOF {
			return nil, nil, d.fail(off, "an unfiltered", perr)
		}
		if perr == io.EOF {
			// Everything that is left: one more scan either fits or fails.
			if sizeAt, _, bodyAt, err = d.scanFrame(b, off, false); err != nil {
				if err == errNeedMore {
					return nil, nil, d.fail(off+int64(len(b)), "a complete unfiltered", io.ErrUnexpectedEOF)
				}
				return nil, nil, err
			}
			break
		}
	}
	u := &d.u
	d.prefix = append(d.prefix[:0], b[:sizeAt]...)
	if err := d.src.Skip(int64(bodyAt)); err != nil {
		return nil, nil, d.fail(off, fmt.Sprintf("an unfiltered's %d bytes of framing", bodyAt), err)
	}
	if u.Flags == FlagEndOfPartition {
		d.inPartition = false
		return nil, nil, nil
	}
	d.prevStart = off
	d.frame = Frame{Offset: off, Flags: u.Flags, ExtFlags: u.ExtFlags, Kind: u.Kind,
		SizeAt: sizeAt, BodyAt: bodyAt, PrevSize: u.PrevSize, Len: u.Size}
	d.bodyLeft = d.frame.BodyLen()
	return &d.frame, d.prefix, nil
}
