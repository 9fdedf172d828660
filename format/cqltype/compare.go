package cqltype

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math"
	"math/big"
)

// Compare orders two values the way the type's Java comparator does
// (clustering order, set elements, map keys); a Reversed type inverts it.
// Empty values sort first. It never fails: malformed values are compared
// as far as they can be read, then by their bytes.
func (t *Type) Compare(a, b []byte) int {
	c := t.compareBase(a, b)
	if t.Reversed {
		return -c
	}
	return c
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

func (t *Type) compareBase(a, b []byte) int {
	if bytes.Equal(a, b) {
		return 0 // every Java comparator is reflexive, even on malformed bytes
	}
	switch t.Kind {
	case Ascii, Text, Blob, Inet, Duration, Date, Time, Empty:
		if t.Kind == Empty {
			return 0
		}
		return bytes.Compare(a, b)
	case Timestamp:
		if t.impl == "DateType" {
			return bytes.Compare(a, b) // DateType is byte-ordered
		}
		return compareSignedFirstByte(a, b)
	case Counter:
		return bytes.Compare(a, b) // counters are not comparable in Java
	}
	if len(a) == 0 || len(b) == 0 {
		// Empty values sort before non-empty ones.
		return boolCompare(len(b) == 0, len(a) == 0)
	}
	switch t.Kind {
	case Boolean:
		return boolCompare(a[0] != 0, b[0] != 0)
	case TinyInt:
		return sign(int(int8(a[0])) - int(int8(b[0])))
	case SmallInt, Int, Bigint:
		return compareSignedFirstByte(a, b)
	case Varint:
		return compareVarint(a, b)
	case Float:
		if len(a) == 4 && len(b) == 4 {
			return compareJavaFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(a))),
				float64(math.Float32frombits(binary.BigEndian.Uint32(b))))
		}
	case Double:
		if len(a) == 8 && len(b) == 8 {
			return compareJavaFloat(math.Float64frombits(binary.BigEndian.Uint64(a)),
				math.Float64frombits(binary.BigEndian.Uint64(b)))
		}
	case Decimal:
		if len(a) >= 4 && len(b) >= 4 {
			return compareDecimal(a, b)
		}
	case UUID:
		return compareUUID(a, b)
	case TimeUUID:
		return compareTimeUUID(a, b)
	case Custom:
		if t.impl == "LexicalUUIDType" && len(a) == 16 && len(b) == 16 {
			// java.util.UUID.compareTo: signed msb, then signed lsb.
			if c := cmp.Compare(int64(binary.BigEndian.Uint64(a)), int64(binary.BigEndian.Uint64(b))); c != 0 {
				return c
			}
			return cmp.Compare(int64(binary.BigEndian.Uint64(a[8:])), int64(binary.BigEndian.Uint64(b[8:])))
		}
	case List, Set:
		return t.compareCollections(a, b, 1)
	case Map:
		return t.compareCollections(a, b, 2)
	case Tuple, UDT:
		return t.compareTuples(a, b)
	case Vector:
		return t.compareVectors(a, b)
	case Composite, DynamicComposite:
		return t.compareComposites(a, b)
	}
	return bytes.Compare(a, b)
}

func boolCompare(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// compareSignedFirstByte is Int32Type/LongType/ShortType/TimestampType's
// comparator: the first byte signed, the rest unsigned.
func compareSignedFirstByte(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return boolCompare(len(b) == 0, len(a) == 0)
	}
	if d := int(int8(a[0])) - int(int8(b[0])); d != 0 {
		return sign(d)
	}
	return bytes.Compare(a, b)
}

// compareJavaFloat is Float.compareTo / Double.compareTo: -0 < +0 and NaN
// above everything, equal to itself.
func compareJavaFloat(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	xn, yn := math.IsNaN(x), math.IsNaN(y)
	switch {
	case xn && yn:
		return 0
	case xn:
		return 1
	case yn:
		return -1
	}
	return boolCompare(!math.Signbit(x), !math.Signbit(y))
}

// compareVarint is IntegerType.compareIntegers: skip sign-extension bytes,
// then compare by significant length and sign, then byte by byte.
func compareVarint(a, b []byte) int {
	ai, bi := msbIndex(a), msbIndex(b)
	al, bl := len(a)-ai, len(b)-bi
	am, bm := int8(a[ai]), int8(b[bi])
	if al != bl {
		if am < 0 {
			if bm < 0 {
				return sign(bl - al)
			}
			return -1
		}
		if bm < 0 {
			return 1
		}
		return sign(al - bl)
	}
	if am != bm {
		return sign(int(am) - int(bm))
	}
	return bytes.Compare(a[ai+1:], b[bi+1:])
}

func msbIndex(v []byte) int {
	i := 0
	if v[0]&0x80 != 0 {
		for i < len(v)-1 && v[i] == 0xFF && v[i+1]&0x80 != 0 {
			i++
		}
	} else {
		for i < len(v)-1 && v[i] == 0 && v[i+1]&0x80 == 0 {
			i++
		}
	}
	return i
}

// compareDecimal is BigDecimal.compareTo: numeric value, scale ignored.
// It never builds 10^scale for a huge scale: the adjusted exponents decide
// first, and only the digit-count difference is ever multiplied in.
func compareDecimal(a, b []byte) int {
	if len(a) > 4 && len(b) > 4 && bytes.Equal(a[:4], b[:4]) {
		return compareVarint(a[4:], b[4:]) // same scale: the unscaled values decide
	}
	ua, ub := twosComplement(a[4:]), twosComplement(b[4:])
	sa, sb := int64(int32(binary.BigEndian.Uint32(a))), int64(int32(binary.BigEndian.Uint32(b)))
	if c := ua.Sign() - ub.Sign(); c != 0 || ua.Sign() == 0 {
		return sign(c)
	}
	da, db := int64(len(new(big.Int).Abs(ua).String())), int64(len(new(big.Int).Abs(ub).String()))
	ea, eb := da-sa, db-sb // value magnitude ~ 10^(digits - scale)
	if ea != eb {
		c := cmp.Compare(ea, eb)
		if ua.Sign() < 0 {
			return -c
		}
		return c
	}
	// Same magnitude: align scales; the difference is at most the digit count.
	diff := sa - sb
	ten := big.NewInt(10)
	if diff > 0 {
		ub = new(big.Int).Mul(ub, new(big.Int).Exp(ten, big.NewInt(diff), nil))
	} else if diff < 0 {
		ua = new(big.Int).Mul(ua, new(big.Int).Exp(ten, big.NewInt(-diff), nil))
	}
	return ua.Cmp(ub)
}

// compareUUID is UUIDType's comparator: version first, then time order for
// version 1 or unsigned msb, then unsigned lsb.
func compareUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return boolCompare(len(a) == 16, len(b) == 16)
	}
	ma, mb := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
	va, vb := int(ma>>12&0xF), int(mb>>12&0xF)
	if va != vb {
		return sign(va - vb)
	}
	if va == 1 {
		if c := cmp.Compare(int64(reorderTimestamp(ma)), int64(reorderTimestamp(mb))); c != 0 {
			return c
		}
	} else if ma != mb {
		return boolCompare(ma > mb, ma < mb)
	}
	la, lb := binary.BigEndian.Uint64(a[8:]), binary.BigEndian.Uint64(b[8:])
	if la == lb {
		return 0
	}
	return boolCompare(la > lb, la < lb)
}

// compareTimeUUID is TimeUUIDType's comparator: the timestamp, then the
// low 8 bytes compared as signed bytes.
func compareTimeUUID(a, b []byte) int {
	if len(a) != 16 || len(b) != 16 {
		return boolCompare(len(a) == 16, len(b) == 16)
	}
	ma, mb := reorderTimestamp(binary.BigEndian.Uint64(a)), reorderTimestamp(binary.BigEndian.Uint64(b))
	if c := cmp.Compare(int64(ma), int64(mb)); c != 0 {
		return c
	}
	const flip = 0x0080808080808080
	return cmp.Compare(int64(binary.BigEndian.Uint64(a[8:])^flip), int64(binary.BigEndian.Uint64(b[8:])^flip))
}

// reorderTimestamp moves a version-1 UUID's time_hi/time_mid/time_low into
// time order (the version nibble lands in the top bits).
func reorderTimestamp(msb uint64) uint64 {
	return msb<<48 | (msb<<16)&0xFFFF00000000 | msb>>32
}

// compareCollections compares frozen lists/sets (per 1) or maps (per 2)
// element by element, then by element count.
func (t *Type) compareCollections(a, b []byte, per int) int {
	if len(a) < 4 || len(b) < 4 {
		return bytes.Compare(a, b)
	}
	na, nb := int(int32(binary.BigEndian.Uint32(a))), int(int32(binary.BigEndian.Uint32(b)))
	oa, ob := 4, 4
	for i := 0; i < na && i < nb; i++ {
		for j := 0; j < per; j++ {
			ea, nexta, nulla, oka := elemAt(a, oa)
			eb, nextb, nullb, okb := elemAt(b, ob)
			if !oka || !okb {
				return bytes.Compare(a[oa:], b[ob:])
			}
			if nulla || nullb {
				if c := boolCompare(!nulla, !nullb); c != 0 {
					return c
				}
			} else if c := t.Params[j].Compare(ea, eb); c != 0 {
				return c
			}
			oa, ob = nexta, nextb
		}
	}
	return cmp.Compare(int64(na), int64(nb))
}

// compareTuples is TupleType's comparator: empty first, field by field
// (null before non-null), then a value with only null fields left equals
// a shorter one.
func (t *Type) compareTuples(a, b []byte) int {
	oa, ob := 0, 0
	for i := 0; oa < len(a) && ob < len(b) && i < len(t.Params); i++ {
		ea, nexta, nulla, oka := elemAt(a, oa)
		eb, nextb, nullb, okb := elemAt(b, ob)
		if !oka || !okb {
			return bytes.Compare(a[oa:], b[ob:])
		}
		oa, ob = nexta, nextb
		if nulla {
			if nullb {
				continue
			}
			return -1
		}
		if nullb {
			return 1
		}
		if c := t.Params[i].Compare(ea, eb); c != 0 {
			return c
		}
	}
	restNullA, restNullB := t.allNull(a, oa), t.allNull(b, ob)
	if restNullA && restNullB {
		return 0
	}
	if oa == len(a) {
		if restNullB {
			return 0
		}
		return -1
	}
	if restNullA {
		return 0
	}
	return 1
}

func (t *Type) allNull(v []byte, off int) bool {
	for off < len(v) {
		if len(v)-off < 4 {
			return false
		}
		n := int32(binary.BigEndian.Uint32(v[off:]))
		off += 4
		if n >= 0 {
			return false
		}
	}
	return true
}

func (t *Type) compareVectors(a, b []byte) int {
	if t.vectorStart(a) != nil || t.vectorStart(b) != nil {
		return bytes.Compare(a, b)
	}
	oa, ob := 0, 0
	for i := 0; i < t.Dimension; i++ {
		ea, _, nexta, erra := t.vectorElem(a, oa)
		eb, _, nextb, errb := t.vectorElem(b, ob)
		if erra != nil || errb != nil {
			return bytes.Compare(a[oa:], b[ob:])
		}
		if c := t.Params[0].Compare(ea, eb); c != 0 {
			return c
		}
		oa, ob = nexta, nextb
	}
	return 0
}

// compareComposites is AbstractCompositeType's comparator: static rows
// first, then component by component (DynamicComposite components of
// different types by class name), then end-of-component bytes.
func (t *Type) compareComposites(a, b []byte) int {
	if len(a) == 0 || len(b) == 0 {
		return boolCompare(len(b) == 0, len(a) == 0)
	}
	ca, sa, erra := t.Components(a)
	cb, sb, errb := t.Components(b)
	if erra != nil || errb != nil {
		return bytes.Compare(a, b)
	}
	if sa != sb {
		if sa {
			return -1
		}
		return 1
	}
	for i := 0; i < len(ca) && i < len(cb); i++ {
		x, y := ca[i], cb[i]
		typ := x.Type
		if t.Kind == DynamicComposite && x.Type.unwrappedClass() != y.Type.unwrappedClass() {
			if c := compareClassNames(x.Type.unwrappedClass(), y.Type.unwrappedClass()); c != 0 {
				return c
			}
		}
		if c := typ.Compare(x.Value, y.Value); c != 0 {
			return c
		}
		if x.EOC != y.EOC {
			return sign(int(x.EOC) - int(y.EOC))
		}
	}
	return sign(len(ca) - len(cb))
}

// compareClassNames orders two class names by simple name, then full name.
func compareClassNames(x, y string) int {
	simple := func(s string) string {
		if i := bytes.LastIndexByte([]byte(s), '.'); i >= 0 {
			return s[i+1:]
		}
		return s
	}
	if c := bytes.Compare([]byte(simple(x)), []byte(simple(y))); c != 0 {
		return c
	}
	return bytes.Compare([]byte(x), []byte(y))
}
