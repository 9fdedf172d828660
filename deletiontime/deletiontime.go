// Package deletiontime holds Cassandra's two on-disk layouts of a
// DeletionTime (db/DeletionTime.java): the legacy 12-byte form used by every
// big-format version up to nc (int localDeletionTime, then long
// markedForDeleteAt) and the compact form of oa (CASSANDRA-18648): one 0x80
// byte for LIVE, otherwise the 8-byte markedForDeleteAt, whose sign bit is
// the LIVE flag, followed by a 4-byte unsigned localDeletionTime.
package deletiontime

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// DeletionTime is a tombstone's write timestamp (microseconds, usually) and
// the local time in seconds at which it was created.
type DeletionTime struct {
	MarkedForDeleteAt int64
	// LocalDeletionTime is seconds since the epoch. Compact layouts store it
	// as an unsigned 32-bit int (up to 2106), legacy ones as a signed int.
	LocalDeletionTime int64
}

// Live is the DeletionTime that deletes nothing.
var Live = DeletionTime{MarkedForDeleteAt: math.MinInt64, LocalDeletionTime: math.MaxInt64}

// IsLive reports whether d deletes nothing.
func (d DeletionTime) IsLive() bool { return d == Live }

// Supersedes is DeletionTime.supersedes: d is later than o (by
// markedForDeleteAt, then by local deletion time).
func (d DeletionTime) Supersedes(o DeletionTime) bool {
	return d.MarkedForDeleteAt > o.MarkedForDeleteAt ||
		(d.MarkedForDeleteAt == o.MarkedForDeleteAt && d.LocalDeletionTime > o.LocalDeletionTime)
}

// Layout selects one of the two serializations.
type Layout uint8

const (
	// Legacy is the 12-byte layout of ma..nc.
	Legacy Layout = iota
	// Compact is the oa layout: 1 byte when LIVE, 12 otherwise.
	Compact
)

func (l Layout) String() string {
	if l == Compact {
		return "compact"
	}
	return "legacy"
}

const (
	// LegacySize is the width of every legacy DeletionTime.
	LegacySize = 12
	// liveFlag is the only legal first byte with its top bit set in Compact.
	liveFlag = 0x80
	// legacyLiveLDT is the localDeletionTime legacy layouts write for LIVE.
	legacyLiveLDT = math.MaxInt32
)

// ErrShort reports a buffer that ends inside a DeletionTime.
var ErrShort = errors.New("deletiontime: buffer ends inside a DeletionTime")

// CorruptFlagError is a compact DeletionTime whose first byte has the top bit
// set but is not exactly 0x80: Cassandra rejects such a sstable as corrupt.
type CorruptFlagError struct{ Flag byte }

func (e *CorruptFlagError) Error() string {
	return fmt.Sprintf("deletiontime: corrupt compact DeletionTime flag byte 0x%02x (expected 0x80 for LIVE or a byte below 0x80)", e.Flag)
}

// Size returns the number of bytes d takes in layout l.
func (l Layout) Size(d DeletionTime) int {
	if l == Compact && d.IsLive() {
		return 1
	}
	return LegacySize
}

// SizeAt returns the width of the DeletionTime starting at b without
// decoding it fully; it is what a skip costs.
func (l Layout) SizeAt(b []byte) (int, error) {
	if l == Legacy {
		if len(b) < LegacySize {
			return 0, ErrShort
		}
		return LegacySize, nil
	}
	if len(b) < 1 {
		return 0, ErrShort
	}
	if b[0]&0x80 != 0 {
		if b[0] != liveFlag {
			return 0, &CorruptFlagError{Flag: b[0]}
		}
		return 1, nil
	}
	if len(b) < LegacySize {
		return 0, ErrShort
	}
	return LegacySize, nil
}

// Decode reads a DeletionTime from the start of b and returns it with its width.
func (l Layout) Decode(b []byte) (DeletionTime, int, error) {
	n, err := l.SizeAt(b)
	if err != nil {
		return DeletionTime{}, 0, err
	}
	if l == Legacy {
		ldt := int32(binary.BigEndian.Uint32(b))
		mfda := int64(binary.BigEndian.Uint64(b[4:]))
		if ldt == legacyLiveLDT && mfda == math.MinInt64 {
			return Live, n, nil
		}
		return DeletionTime{MarkedForDeleteAt: mfda, LocalDeletionTime: int64(ldt)}, n, nil
	}
	if n == 1 {
		return Live, 1, nil
	}
	mfda := int64(binary.BigEndian.Uint64(b))
	ldt := binary.BigEndian.Uint32(b[8:])
	return DeletionTime{MarkedForDeleteAt: mfda, LocalDeletionTime: int64(ldt)}, n, nil
}

// RangeError is a DeletionTime that the target layout cannot represent.
type RangeError struct {
	Layout Layout
	D      DeletionTime
	Why    string
}

func (e *RangeError) Error() string {
	return fmt.Sprintf("deletiontime: %s layout cannot hold markedForDeleteAt=%d localDeletionTime=%d: %s",
		e.Layout, e.D.MarkedForDeleteAt, e.D.LocalDeletionTime, e.Why)
}

// Check reports whether d can be written in layout l unchanged.
func (l Layout) Check(d DeletionTime) error {
	if d.IsLive() {
		return nil
	}
	if l == Legacy {
		if d.LocalDeletionTime > math.MaxInt32-1 || d.LocalDeletionTime < math.MinInt32 {
			return &RangeError{l, d, "localDeletionTime does not fit a signed 32-bit int (past 2038)"}
		}
		return nil
	}
	if d.MarkedForDeleteAt < 0 {
		return &RangeError{l, d, "a negative markedForDeleteAt collides with the LIVE flag bit"}
	}
	if d.LocalDeletionTime < 0 || d.LocalDeletionTime > math.MaxUint32 {
		return &RangeError{l, d, "localDeletionTime does not fit an unsigned 32-bit int"}
	}
	return nil
}

// InvalidLocalDeletionTime is what Cassandra 5.0 stores for a local
// deletion time that is not valid (negative after a 3.x/4.x overflow, or
// past the maximum): Cell.INVALID_DELETION_TIME, the largest unsigned int
// but one (DeletionTime.InvalidDeletionTime).
const InvalidLocalDeletionTime = math.MaxUint32 - 1

// Cap returns d changed the way Cassandra changes a DeletionTime that layout
// l cannot hold, and whether it changed anything: the legacy layout clamps
// a local deletion time past 2038 to the largest it can hold; the compact
// layout of 5.0 stores a negative one as InvalidLocalDeletionTime.
func Cap(d DeletionTime, l Layout) (DeletionTime, bool) {
	if d.IsLive() {
		return d, false
	}
	if l == Compact {
		if d.LocalDeletionTime >= 0 && d.LocalDeletionTime <= math.MaxUint32 {
			return d, false
		}
		d.LocalDeletionTime = InvalidLocalDeletionTime
		return d, true
	}
	if d.LocalDeletionTime <= math.MaxInt32-1 {
		return d, false
	}
	d.LocalDeletionTime = math.MaxInt32 - 1
	return d, true
}

// Append encodes d in layout l after dst. It fails rather than silently
// writing a value that would decode differently (see Check).
func (l Layout) Append(dst []byte, d DeletionTime) ([]byte, error) {
	if err := l.Check(d); err != nil {
		return dst, err
	}
	var buf [LegacySize]byte
	if l == Compact {
		if d.IsLive() {
			return append(dst, liveFlag), nil
		}
		binary.BigEndian.PutUint64(buf[:], uint64(d.MarkedForDeleteAt))
		binary.BigEndian.PutUint32(buf[8:], uint32(d.LocalDeletionTime))
		return append(dst, buf[:]...), nil
	}
	ldt := int32(legacyLiveLDT)
	if !d.IsLive() {
		ldt = int32(d.LocalDeletionTime)
	}
	binary.BigEndian.PutUint32(buf[:], uint32(ldt))
	binary.BigEndian.PutUint64(buf[4:], uint64(d.MarkedForDeleteAt))
	return append(dst, buf[:]...), nil
}
