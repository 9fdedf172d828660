// Package clustering encodes clustering prefixes the way
// db/ClusteringPrefix.java and db/ClusteringBoundOrBoundary.java do: values
// are written in blocks of 32, each block preceded by an unsigned vint whose
// two bits per value mark null (bit 2i+1) or empty (bit 2i); values of
// fixed-length types carry no length, the others an unsigned vint length.
// Bounds and boundaries add a kind byte and an unsigned short size.
//
// Types are passed as their fixed value lengths (-1 for variable) so that
// the hot decode path needs no type lookups.
package clustering

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// Kind is ClusteringPrefix.Kind; its ordinal is what the files store.
type Kind uint8

const (
	ExclEndBound             Kind = 0
	InclStartBound           Kind = 1
	ExclEndInclStartBoundary Kind = 2
	StaticClustering         Kind = 3
	Clustering               Kind = 4
	InclEndExclStartBoundary Kind = 5
	InclEndBound             Kind = 6
	ExclStartBound           Kind = 7
)

var kindNames = [...]string{"EXCL_END_BOUND", "INCL_START_BOUND", "EXCL_END_INCL_START_BOUNDARY",
	"STATIC_CLUSTERING", "CLUSTERING", "INCL_END_EXCL_START_BOUNDARY", "INCL_END_BOUND", "EXCL_START_BOUND"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Valid reports whether k is a kind Cassandra writes.
func (k Kind) Valid() bool { return k <= ExclStartBound }

// IsBoundary reports whether k is a boundary (closes one range tombstone and opens another).
func (k Kind) IsBoundary() bool {
	return k == ExclEndInclStartBoundary || k == InclEndExclStartBoundary
}

// IsStart reports whether a bound of kind k opens a range.
func (k Kind) IsStart() bool { return k == InclStartBound || k == ExclStartBound }

// IsInclusive reports whether the bound includes its own clustering.
func (k Kind) IsInclusive() bool { return k == InclStartBound || k == InclEndBound }

// Value states, as the header bits encode them. A nil slice in Values means null.
var empty = []byte{}

// ErrShort reports bytes that end inside a clustering prefix.
var ErrShort = errors.New("clustering: bytes end inside a clustering prefix")

// Prefix is a decoded clustering, bound or boundary. Values alias the input
// bytes; nil means a null value and an empty non-nil slice an empty one.
type Prefix struct {
	Kind   Kind
	Values [][]byte
}

// Clone copies p and its values, which may point into a decoder's buffer;
// a null value stays nil and an empty one stays empty.
func (p Prefix) Clone() Prefix {
	out := Prefix{Kind: p.Kind, Values: make([][]byte, len(p.Values))}
	for i, v := range p.Values {
		if v != nil {
			out.Values[i] = append([]byte{}, v...)
		}
	}
	return out
}

// DecodeValues reads size values (no size field) from b, appending them to
// dst, and returns the values and the number of bytes read. fixed[i] is the
// fixed length of the i-th clustering type, or -1.
func DecodeValues(dst [][]byte, b []byte, size int, fixed []int) ([][]byte, int, error) {
	return DecodeValuesParts(dst, b, size, fixed, nil)
}

// PartKind says what one part of an encoded clustering prefix is.
type PartKind uint8

const (
	PartBoundKind PartKind = iota // a bound's kind byte
	PartBoundSize                 // a bound's unsigned short value count
	PartHeader                    // a block's header vint of null and empty bits
	PartLength                    // a variable-length value's length vint
	PartValue                     // a value's bytes (none for null and empty values)
)

// A Part is where one field of an encoded prefix sits, for a hex view:
// Off is relative to the start of the bytes decoded.
type Part struct {
	Off, Len int
	Kind     PartKind
	// Index is the value a length or value belongs to, and the first value
	// of a header's block.
	Index int
	// Value is what a kind byte, size, header or length stores.
	Value uint64
}

// DecodeValuesParts is DecodeValues that, when parts is not nil, also
// appends to it where each header, length and value it reads sits. It is
// the one decoder of clustering values: the row decoder calls it directly
// (with nil parts in the hot path, one predictable branch per field).
func DecodeValuesParts(dst [][]byte, b []byte, size int, fixed []int, parts *[]Part) ([][]byte, int, error) {
	if size > len(fixed) {
		return dst, 0, fmt.Errorf("clustering: prefix of %d values but the header has %d clustering columns", size, len(fixed))
	}
	pos := 0
	for off := 0; off < size; {
		// One-byte vints (nearly every header and length) are read inline.
		header, n := uint64(0), 1
		if pos < len(b) && b[pos] < 0x80 {
			header = uint64(b[pos])
		} else {
			var err error
			if header, n, err = vint.Unsigned(b[pos:]); err != nil {
				return dst, pos, ErrShort // the only error vint.Unsigned returns
			}
		}
		if parts != nil {
			addPart(parts, Part{Off: pos, Len: n, Kind: PartHeader, Index: off, Value: header})
		}
		pos += n
		limit := min(size, off+32)
		for i := off; i < limit; i++ {
			shift := uint(i*2) & 63
			switch {
			case header&(1<<(shift+1)) != 0:
				dst = append(dst, nil)
				continue
			case header&(1<<shift) != 0:
				dst = append(dst, empty)
				continue
			}
			l := fixed[i]
			if l < 0 {
				ul, n := uint32(0), 1
				if pos < len(b) && b[pos] < 0x80 {
					ul = uint32(b[pos])
				} else {
					var err error
					ul, n, err = vint.Unsigned32(b[pos:])
					if err == vint.ErrShort {
						return dst, pos, ErrShort
					}
					if err != nil {
						return dst, pos, fmt.Errorf("clustering value %d length at +%d: %w", i, pos, err)
					}
				}
				if parts != nil {
					addPart(parts, Part{Off: pos, Len: n, Kind: PartLength, Index: i, Value: uint64(ul)})
				}
				pos += n
				l = int(ul)
			}
			if l > len(b)-pos {
				// A sentinel, not a formatted error: streaming decoders hit
				// this routinely at chunk boundaries and retry with more bytes.
				return dst, pos, ErrShort
			}
			if parts != nil && l > 0 {
				addPart(parts, Part{Off: pos, Len: l, Kind: PartValue, Index: i})
			}
			dst = append(dst, b[pos:pos+l:pos+l])
			pos += l
		}
		off = limit
	}
	return dst, pos, nil
}

// addPart is out of line so that the decoding loop keeps its registers
// when no parts are recorded.
//
//go:noinline
func addPart(parts *[]Part, p Part) { *parts = append(*parts, p) }

// ValuesSize is the encoded width of values (no size field).
func ValuesSize(values [][]byte, fixed []int) int {
	n := 0
	for off := 0; off < len(values); off += 32 {
		limit := min(len(values), off+32)
		n += vint.UnsignedSize(header(values, off, limit))
		for i := off; i < limit; i++ {
			v := values[i]
			if len(v) == 0 {
				continue
			}
			if fixed[i] >= 0 {
				n += len(v)
			} else {
				n += vint.UnsignedSize(uint64(len(v))) + len(v)
			}
		}
	}
	return n
}

func header(values [][]byte, off, limit int) uint64 {
	var h uint64
	for i := off; i < limit; i++ {
		shift := uint(i*2) & 63
		if values[i] == nil {
			h |= 1 << (shift + 1)
		} else if len(values[i]) == 0 {
			h |= 1 << shift
		}
	}
	return h
}

// AppendValues encodes values (no size field) after dst.
func AppendValues(dst []byte, values [][]byte, fixed []int) ([]byte, error) {
	if len(values) > len(fixed) {
		return dst, fmt.Errorf("clustering: %d values for %d clustering columns", len(values), len(fixed))
	}
	for off := 0; off < len(values); off += 32 {
		limit := min(len(values), off+32)
		dst = vint.AppendUnsigned(dst, header(values, off, limit))
		for i := off; i < limit; i++ {
			v := values[i]
			if len(v) == 0 {
				continue
			}
			if fixed[i] >= 0 {
				if len(v) != fixed[i] {
					return dst, fmt.Errorf("clustering value %d: %d bytes for a fixed-length type of %d", i, len(v), fixed[i])
				}
			} else {
				dst = vint.AppendUnsigned(dst, uint64(len(v)))
			}
			dst = append(dst, v...)
		}
	}
	return dst, nil
}

// DecodeBound reads a bound or boundary: kind byte, unsigned short size, values.
func DecodeBound(dst [][]byte, b []byte, fixed []int) (Prefix, int, error) {
	return DecodeBoundParts(dst, b, fixed, nil)
}

// DecodeBoundParts is DecodeBound that, when parts is not nil, also appends
// to it where the kind, the size and each header, length and value sit.
func DecodeBoundParts(dst [][]byte, b []byte, fixed []int, parts *[]Part) (Prefix, int, error) {
	if len(b) < 3 {
		return Prefix{}, 0, ErrShort
	}
	kind := Kind(b[0])
	if !kind.Valid() || kind == Clustering || kind == StaticClustering {
		return Prefix{}, 0, fmt.Errorf("clustering: bound kind %d is not a bound or boundary", b[0])
	}
	size := int(binary.BigEndian.Uint16(b[1:]))
	first := 0
	if parts != nil {
		*parts = append(*parts, Part{Off: 0, Len: 1, Kind: PartBoundKind, Value: uint64(kind)},
			Part{Off: 1, Len: 2, Kind: PartBoundSize, Value: uint64(size)})
		first = len(*parts)
	}
	vals, n, err := DecodeValuesParts(dst, b[3:], size, fixed, parts)
	if parts != nil {
		for i := first; i < len(*parts); i++ {
			(*parts)[i].Off += 3 // the values' parts, after kind and size
		}
	}
	if err != nil {
		return Prefix{}, 3 + n, err
	}
	return Prefix{Kind: kind, Values: vals}, 3 + n, nil
}

// BoundSize is the encoded width of a bound.
func BoundSize(p Prefix, fixed []int) int { return 3 + ValuesSize(p.Values, fixed) }

// AppendBound encodes a bound or boundary after dst.
func AppendBound(dst []byte, p Prefix, fixed []int) ([]byte, error) {
	dst = append(dst, byte(p.Kind), byte(len(p.Values)>>8), byte(len(p.Values)))
	return AppendValues(dst, p.Values, fixed)
}

// DecodePrefix reads a prefix preceded by its kind byte, as IndexInfo and
// the stats slice store them: a CLUSTERING has exactly len(fixed) values and
// no size; bounds and boundaries carry an unsigned short size.
func DecodePrefix(dst [][]byte, b []byte, fixed []int) (Prefix, int, error) {
	if len(b) < 1 {
		return Prefix{}, 0, ErrShort
	}
	kind := Kind(b[0])
	switch {
	case kind == Clustering:
		vals, n, err := DecodeValues(dst, b[1:], len(fixed), fixed)
		return Prefix{Kind: kind, Values: vals}, 1 + n, err
	case kind.Valid() && kind != StaticClustering:
		return DecodeBound(dst, b, fixed)
	}
	return Prefix{}, 0, fmt.Errorf("clustering: invalid prefix kind %d", b[0])
}

// PrefixSize is the encoded width of a prefix with its kind byte.
func PrefixSize(p Prefix, fixed []int) int {
	if p.Kind == Clustering {
		return 1 + ValuesSize(p.Values, fixed)
	}
	return BoundSize(p, fixed)
}

// AppendPrefix encodes a prefix with its kind byte.
func AppendPrefix(dst []byte, p Prefix, fixed []int) ([]byte, error) {
	if p.Kind == Clustering {
		if len(p.Values) != len(fixed) {
			return dst, fmt.Errorf("clustering: %d values for %d clustering columns", len(p.Values), len(fixed))
		}
		return AppendValues(append(dst, byte(p.Kind)), p.Values, fixed)
	}
	return AppendBound(dst, p, fixed)
}

// SkipValues returns the width of size values (no size field) at the start
// of b without keeping them: what a scan that only wants row sizes needs.
func SkipValues(b []byte, size int, fixed []int) (int, error) {
	if size > len(fixed) {
		return 0, fmt.Errorf("clustering: prefix of %d values but the header has %d clustering columns", size, len(fixed))
	}
	pos := 0
	for off := 0; off < size; {
		header, n, err := vint.Unsigned(b[pos:])
		if err != nil {
			return pos, ErrShort
		}
		pos += n
		limit := min(size, off+32)
		for i := off; i < limit; i++ {
			shift := uint(i*2) & 63
			if header&(3<<shift) != 0 {
				continue // null or empty: nothing stored
			}
			l := fixed[i]
			if l < 0 {
				ul, n, err := vint.Unsigned32(b[pos:])
				if err == vint.ErrShort {
					return pos, ErrShort
				}
				if err != nil {
					return pos, fmt.Errorf("clustering value %d length at +%d: %w", i, pos, err)
				}
				pos += n
				l = int(ul)
			}
			if l > len(b)-pos {
				return pos, ErrShort
			}
			pos += l
		}
		off = limit
	}
	return pos, nil
}
