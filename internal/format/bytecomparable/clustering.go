package bytecomparable

import (
	"errors"
	"fmt"

	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
)

// KindTerminator is the byte that ends a clustering prefix of kind k
// (ClusteringPrefix.Kind.asByteComparableValue, OSS50): bounds that sort
// before the clusterings they prefix end in 0x20, those that sort after in
// 0x60, a full clustering in 0x38 and the static clustering is 0x18.
func KindTerminator(k clustering.Kind) byte {
	switch k {
	case clustering.ExclEndBound, clustering.InclStartBound, clustering.ExclEndInclStartBoundary:
		return LTNextComponent
	case clustering.StaticClustering:
		return Excluded
	case clustering.Clustering:
		return Terminator
	}
	return GTNextComponent
}

// AppendClustering appends the byte-comparable form of a clustering, bound
// or boundary (ClusteringComparator.asByteComparable): for each value a
// separator and the value's bytes (NextComponentNull for a nil value,
// NextComponentEmpty, or its reversed twin, for a value that encodes as
// nothing), then the kind's terminator. values may be shorter than types
// (a bound on a prefix of the clustering columns).
func AppendClustering(dst []byte, types []*cqltype.Type, kind clustering.Kind, values [][]byte) ([]byte, error) {
	if len(values) > len(types) {
		return dst, fmt.Errorf("bytecomparable: clustering of %d values for %d clustering columns", len(values), len(types))
	}
	for i, v := range values {
		if v == nil {
			dst = append(dst, NextComponentNull)
			continue
		}
		out, null, err := AppendValue(append(dst, NextComponent), types[i], v)
		if err != nil {
			return dst, fmt.Errorf("clustering column %d: %w", i, err)
		}
		if null {
			if types[i].Reversed {
				dst = append(dst, NextComponentEmptyReversed)
			} else {
				dst = append(dst, NextComponentEmpty)
			}
			continue
		}
		dst = out
	}
	return append(dst, KindTerminator(kind)), nil
}

// Position says where a decoded clustering prefix sorts, from the byte
// that ended it.
type Position uint8

const (
	// Partial: the bytes ended before any terminator (an index separator,
	// which is a prefix of an encoding).
	Partial Position = iota
	// AtClustering: a full clustering (terminator 0x38).
	AtClustering
	// BeforePrefix: an inclusive start or exclusive end bound (0x20),
	// before every clustering with these values.
	BeforePrefix
	// AfterPrefix: an exclusive start or inclusive end bound (0x60).
	AfterPrefix
	// Static: the static clustering (0x18).
	Static
)

func (p Position) String() string {
	return [...]string{"partial", "clustering", "before", "after", "static"}[p]
}

// DecodedClustering is a decoded clustering prefix.
type DecodedClustering struct {
	// Values in serialized form; nil is a null value. When Position is
	// Partial the last value may be cut short (LastPartial).
	Values      [][]byte
	Position    Position
	LastPartial bool
}

// DecodeClustering decodes the byte-comparable form of a clustering prefix.
// It accepts a prefix of an encoding, as Rows.db separators are: decoding
// then stops where the bytes end, with Position Partial; a text or blob
// value cut short is returned as far as it goes. A value of another type
// cut short is left out (LastPartial with no value for it).
func DecodeClustering(b []byte, types []*cqltype.Type) (DecodedClustering, error) {
	d := decoder{b: b, tolerant: true}
	var dc DecodedClustering
	for {
		if d.pos == len(b) {
			return dc, nil
		}
		sep := b[d.pos]
		d.pos++
		switch sep {
		case Terminator, LTNextComponent, GTNextComponent, Excluded:
			dc.Position = map[byte]Position{Terminator: AtClustering, LTNextComponent: BeforePrefix, GTNextComponent: AfterPrefix, Excluded: Static}[sep]
			if sep == Excluded && len(dc.Values) > 0 {
				return dc, d.errorf("the static clustering marker only as the first byte")
			}
			if sep == Terminator && len(dc.Values) != len(types) {
				return dc, d.errorf("a full clustering of %d values, found %d", len(types), len(dc.Values))
			}
			if d.pos != len(b) {
				return dc, d.errorf("the end of the clustering after its terminator, found %d more bytes", len(b)-d.pos)
			}
			return dc, nil
		}
		i := len(dc.Values)
		if i >= len(types) {
			return dc, d.errorf("a terminator after %d clustering values, found 0x%02x", len(types), sep)
		}
		switch sep {
		case NextComponentNull:
			dc.Values = append(dc.Values, nil)
		case NextComponentEmpty, NextComponentEmptyReversed:
			dc.Values = append(dc.Values, []byte{})
		case NextComponent:
			v, err := d.value(types[i], 0)
			if errors.Is(err, errTruncated) {
				dc.LastPartial = true
				if v != nil && isEscapedKind(types[i]) {
					dc.Values = append(dc.Values, v)
				}
				return dc, nil
			}
			if err != nil {
				return dc, fmt.Errorf("clustering column %d: %w", i, err)
			}
			dc.Values = append(dc.Values, v)
		default:
			d.pos--
			return dc, d.errorf("a clustering separator (0x40, 0x3e, 0x3f, 0x41) or terminator (0x38, 0x20, 0x60, 0x18), found 0x%02x", sep)
		}
	}
}

func isEscapedKind(t *cqltype.Type) bool {
	switch t.Kind {
	case cqltype.Ascii, cqltype.Text, cqltype.Blob, cqltype.Inet, cqltype.Duration:
		return true
	}
	return false
}

// DecodeValue decodes one whole value's encoding (as AppendValue wrote it
// when null was false) back to its serialized form. Decimals come back
// with their trailing zeros stripped; everything else as it was.
func DecodeValue(b []byte, t *cqltype.Type) ([]byte, error) {
	d := decoder{b: b}
	v, err := d.value(t, 0)
	if err != nil {
		return nil, err
	}
	if d.pos != len(b) {
		return nil, d.errorf("the end of the %s value, found %d more bytes", t.Kind, len(b)-d.pos)
	}
	return v, nil
}
