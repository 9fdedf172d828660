package cqltype

// Elements splits a frozen (single-cell) value of a collection, tuple,
// UDT or vector into its elements: a list's or set's elements, a map's
// keys and values alternating (k1, v1, k2, v2, ...), a tuple's or UDT's
// fields (as many as the type has: fields added to a type after the value
// was written are null), a vector's elements. A null element or field is
// nil. The elements alias v.
func (t *Type) Elements(v []byte) ([][]byte, error) {
	var out [][]byte
	switch t.Kind {
	case List, Set, Map:
		per := 4
		if t.Kind == Map {
			per = 8
		}
		n, err := t.readCount(v, per)
		if err != nil {
			return nil, err
		}
		if t.Kind == Map {
			n *= 2
		}
		off := 4
		for i := 0; i < n; i++ {
			e, next, null, err := t.readElem(v, off)
			if err != nil {
				return nil, err
			}
			if null {
				e = nil
			} else if e == nil {
				e = []byte{}
			}
			out, off = append(out, e), next
		}
		if off != len(v) {
			return nil, valueErr(t, off, "expected the value to end after %d elements, found %d more bytes", n, len(v)-off)
		}
	case Tuple, UDT:
		off := 0
		for range t.Params {
			f, next, null, err := t.field(v, off)
			if err != nil {
				return nil, err
			}
			if null {
				f = nil
			} else if f == nil {
				f = []byte{}
			}
			out, off = append(out, f), next
		}
		if err := t.fieldsEnd(v, off); err != nil {
			return nil, err
		}
	case Vector:
		if err := t.vectorStart(v); err != nil {
			return nil, err
		}
		off := 0
		for i := 0; i < t.Dimension; i++ {
			e, _, next, err := t.vectorElem(v, off)
			if err != nil {
				return nil, err
			}
			out, off = append(out, e), next
		}
		if err := t.vectorEnd(v, off); err != nil {
			return nil, err
		}
	default:
		return nil, valueErr(t, 0, "a %s value has no elements", t.CQL())
	}
	return out, nil
}
