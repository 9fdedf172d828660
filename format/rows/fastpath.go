package rows

import (
	"math/bits"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

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
	sizeAt := p
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
	if d.tap != nil {
		d.tap(b[:sizeAt], b[p:total:total])
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
