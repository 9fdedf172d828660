package query

import (
	"encoding/binary"
	"encoding/hex"
	"strconv"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

// AppendJSON appends a row as one JSON object keyed by column name, in the
// selected order, each value as Cassandra's toJSONString writes it (what
// SELECT JSON and sstabledump print): a non-frozen collection or UDT as
// the JSON of its live elements, a counter as its total, null as null.
func AppendJSON(dst []byte, r Row) []byte {
	dst = append(dst, '{')
	for i, v := range r {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = cqltype.AppendJSONString(dst, v.Column.Name)
		dst = append(dst, ": "...)
		dst = appendValueJSON(dst, v)
	}
	return append(dst, '}')
}

func appendValueJSON(dst []byte, v Value) []byte {
	if v.Null {
		return append(dst, "null"...)
	}
	t := v.Column.Type
	if t.IsMultiCell() {
		return appendCellsJSON(dst, t, v.Cells)
	}
	return appendJSON(dst, t, v.Bytes)
}

func appendJSON(dst []byte, t *cqltype.Type, v []byte) []byte {
	if v == nil {
		return append(dst, "null"...)
	}
	if t.Kind == cqltype.Counter {
		if n, err := cqltype.CounterTotal(v); err == nil {
			return strconv.AppendInt(dst, n, 10)
		}
	}
	out, err := t.AppendJSON(dst, v)
	if err != nil {
		// A value its type cannot decode: its bytes, as a blob.
		return cqltype.AppendJSONString(dst, "0x"+hex.EncodeToString(v))
	}
	return out
}

// appendKeyJSON writes a map key or set element as a JSON object key: a
// JSON string as is, anything else as the string of its JSON.
func appendKeyJSON(dst []byte, t *cqltype.Type, v []byte) []byte {
	s := appendJSON(nil, t, v)
	if len(s) > 0 && s[0] == '"' {
		return append(dst, s...)
	}
	return cqltype.AppendJSONString(dst, string(s))
}

func appendCellsJSON(dst []byte, t *cqltype.Type, cells []rows.Cell) []byte {
	switch t.Kind {
	case cqltype.Set, cqltype.List:
		dst = append(dst, '[')
		for i, c := range cells {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			if t.Kind == cqltype.Set {
				dst = appendJSON(dst, t.Params[0], c.Path)
			} else {
				dst = appendJSON(dst, t.Params[0], c.Value)
			}
		}
		return append(dst, ']')
	case cqltype.Map:
		dst = append(dst, '{')
		for i, c := range cells {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendKeyJSON(dst, t.Params[0], c.Path)
			dst = append(dst, ": "...)
			dst = appendJSON(dst, t.Params[1], c.Value)
		}
		return append(dst, '}')
	case cqltype.UDT:
		at := map[int][]byte{}
		for _, c := range cells {
			if len(c.Path) == 2 {
				at[int(binary.BigEndian.Uint16(c.Path))] = c.Value
			}
		}
		dst = append(dst, '{')
		for i := range t.Params {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = cqltype.AppendJSONString(dst, t.FieldNames[i])
			dst = append(dst, ": "...)
			dst = appendJSON(dst, t.Params[i], at[i])
		}
		return append(dst, '}')
	}
	return append(dst, "null"...)
}
