package rows

import (
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/vint"
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
	p := 0
	for p < len(b) {
		flags := b[p]
		if flags == FlagEndOfPartition {
			return p + 1, rows, true
		}
		if flags&(FlagEndOfPartition|FlagIsMarker|FlagExtension) != 0 {
			return p, rows, false
		}
		q := p + 1
		if len(fixed) > 0 {
			if d.fixedWidth >= 0 && q < len(b) && b[q] == 0 {
				q += 1 + d.fixedWidth
			} else {
				w, err := clustering.SkipValues(b[q:], len(fixed), fixed)
				if err != nil {
					return p, rows, false // short or damaged: Next decides
				}
				q += w
			}
		}
		var size uint64
		if q < len(b) && b[q] < 0x80 {
			size = uint64(b[q])
			q++
		} else {
			if q > len(b) {
				return p, rows, false
			}
			v, w, err := vint.Unsigned(b[q:])
			if err != nil {
				return p, rows, false
			}
			size, q = v, q+w
		}
		// size covers the previous-size vint and the body; a size that
		// cannot hold that vint, or runs past the window, is Next's to judge.
		if size == 0 || size > uint64(len(b)-q) {
			return p, rows, false
		}
		if w := vint.EncodedLen(b[q]); uint64(w) > size {
			return p, rows, false
		}
		p = q + int(size)
		rows++
	}
	return p, rows, false
}
