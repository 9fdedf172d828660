package rows

import (
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Skim counts what SkimRest found in a partition.
type Skim struct {
	Rows      int64 // static row included
	Markers   int64
	HasStatic bool
}

// SkimRest walks the rest of the current partition by sizes alone, as
// Next(true) would, but without filling an Unfiltered: plain rows inside
// the chunk in memory are stepped over in a tight loop (flags, clustering
// width, size vint); anything else — a marker, a static or shadowable row,
// a row that straddles a chunk, bytes that look wrong — goes through Next,
// which decodes and checks it. This is the partition-level scan's hot loop.
func (d *Decoder) SkimRest() (Skim, error) {
	var sk Skim
	for d.inPartition {
		if d.buffered != nil {
			if len(d.win) == 0 {
				if err := d.sync(); err != nil {
					return sk, err
				}
				d.win = d.buffered.Buffered()
				d.winOff = d.src.Pos()
			}
			n, rows, end := d.skimWindow(d.win)
			sk.Rows += rows
			d.win = d.win[n:]
			d.winOff += int64(n)
			d.pending += int64(n)
			if end {
				d.inPartition = false
				return sk, d.sync()
			}
			if len(d.win) == 0 && n > 0 {
				continue // window used up exactly: take the next one
			}
		}
		u, err := d.Next(true)
		if err != nil {
			return sk, err
		}
		if u == nil {
			return sk, nil
		}
		switch u.Kind {
		case KindMarker:
			sk.Markers++
		case KindStaticRow:
			sk.HasStatic = true
			sk.Rows++
		default:
			sk.Rows++
		}
	}
	return sk, nil
}

// skimWindow steps over plain rows at the start of b. It returns the bytes
// consumed, the rows stepped over, and whether it consumed the partition's
// end byte; it stops, without consuming, at anything it does not handle.
func (d *Decoder) skimWindow(b []byte) (n int, rows int64, end bool) {
	fixed := d.schema.ClusteringFixed
	fast := d.fixedWidth >= 0 && len(fixed) > 0
	for n < len(b) {
		if fast {
			// The common shape gets a loop of its own; skimOne takes the
			// row it stops at, then the fast loop goes on.
			m, r, end := skimFixedWindow(b[n:], d.fixedWidth)
			n, rows = n+m, rows+r
			if end || n == len(b) {
				return n, rows, end
			}
		}
		m, end, ok := d.skimOne(b[n:], fixed)
		if !ok {
			return n, rows, false
		}
		n += m
		if end {
			return n, rows, true
		}
		rows++
	}
	return n, rows, false
}

// skimFixedWindow steps over rows whose clustering is fixed-width with no
// null or empty value (a zero header byte) and whose size and
// previous-size vints take one or two bytes each: such a row is flags,
// 0x00, width bytes of values, size, then size more bytes. It stops,
// without consuming, at the first row of any other shape, or after the
// end byte.
func skimFixedWindow(b []byte, width int) (n int, rows int64, end bool) {
	p := 0
	for {
		q := p + 2 + width // the size vint
		if q+2 >= len(b) {
			if p < len(b) && b[p] == FlagEndOfPartition {
				return p + 1, rows, true
			}
			return p, rows, false
		}
		// Flags and the clustering header byte, then the size vint's first
		// byte and the previous-size vint's (when size is one byte), each
		// pair tested at once: the common row costs two loads and two
		// branches before its size moves p on.
		if head := uint16(b[p]) | uint16(b[p+1])<<8; head&(0xff00|FlagEndOfPartition|FlagIsMarker|FlagExtension) != 0 {
			if b[p] == FlagEndOfPartition {
				return p + 1, rows, true
			}
			return p, rows, false
		}
		size := int(b[q])
		if sizes := uint16(b[q]) | uint16(b[q+1])<<8; sizes&0x8080 != 0 || size == 0 {
			// A size of 128 B or more, a previous row of 128 B or more, or
			// a zero size: the general rule, vints of up to two bytes.
			var ok bool
			if q, size, ok = skimSizes(b, q); !ok {
				return p, rows, false
			}
		} else {
			q++
		}
		next := q + size
		if next > len(b) {
			return p, rows, false
		}
		p = next
		rows++
	}
}

// skimSizes reads, at b[q:], a size vint and checks the previous-size vint
// after it fits in that size, both of one or two bytes (a one-byte vint is
// 0xxxxxxx, a two-byte one 10xxxxxx xxxxxxxx). It returns the position
// after the size vint and the size; ok is false for anything else.
func skimSizes(b []byte, q int) (next, size int, ok bool) {
	if q+2 >= len(b) {
		return q, 0, false
	}
	size = int(b[q])
	q++
	if size >= 0x80 {
		if size >= 0xC0 {
			return q, 0, false
		}
		size = (size&0x3f)<<8 | int(b[q])
		q++
	}
	prevWidth := 1
	if pb := b[min(q, len(b)-1)]; pb >= 0xC0 {
		return q, 0, false
	} else if pb >= 0x80 {
		prevWidth = 2
	}
	return q, size, size >= prevWidth
}

// skimOne steps over one plain row, or the end-of-partition byte (end),
// at the start of b; ok is false, with nothing consumed, for anything else:
// a marker, a row with extended flags, one that does not fit in b, or
// bytes scanFrame would refuse (Next then words the error).
//
// It is scanFrame cut down to what a size-only step over a plain row
// needs, written out: scanFrame itself costs a third more instructions a
// row, and for a table whose clustering is not fixed-width this is the
// scan's loop. FuzzFrameMatchesFastLoops holds it to scanFrame.
func (d *Decoder) skimOne(b []byte, fixed []int) (n int, end, ok bool) {
	if len(b) == 0 {
		return 0, false, false
	}
	flags := b[0]
	if flags == FlagEndOfPartition {
		return 1, true, true
	}
	if flags&(FlagEndOfPartition|FlagIsMarker|FlagExtension) != 0 {
		return 0, false, false
	}
	q := 1
	if len(fixed) > 0 {
		if d.fixedWidth >= 0 && q < len(b) && b[q] == 0 {
			q += 1 + d.fixedWidth
		} else {
			w, err := clustering.SkipValues(b[q:], len(fixed), fixed)
			if err != nil {
				return 0, false, false // short or damaged: Next decides
			}
			q += w
		}
	}
	size, w := uint64(0), 1
	if q < len(b) && b[q] < 0x80 {
		size = uint64(b[q])
	} else if size, w = vint.At(b, q); w == 0 {
		return 0, false, false
	}
	q += w
	// size covers the previous-size vint and the body; a size that cannot
	// hold that vint, or runs past the window, is Next's to judge.
	if size == 0 || size > uint64(len(b)-q) {
		return 0, false, false
	}
	if w := vint.EncodedLen(b[q]); uint64(w) > size {
		return 0, false, false
	}
	return q + int(size), false, true
}
