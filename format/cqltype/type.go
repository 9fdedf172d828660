// Package cqltype models the column types Cassandra records in an sstable's
// serialization header (Statistics.db): it parses the AbstractType class
// strings (db/marshal/TypeParser.java), tells how values of each type are
// laid out (valueLengthIfFixed, multi-cell collections), compares values the
// way each type's comparator does, and prints values the way sstabledump does
// (AbstractType.toJSONString).
//
// Everything here is hand-written: no Go library knows Cassandra's type
// strings, its value encodings or sstabledump's exact output.
package cqltype

import (
	"strconv"
	"strings"
)

// Kind says which CQL type a Type is. Frozen and Reversed are flags on Type,
// not kinds: a ReversedType(Int32Type) is a Type with Kind Int and Reversed set.
type Kind int

// The kinds. Custom covers any class this package does not model (it keeps
// the class string and treats values as opaque bytes).
const (
	Invalid Kind = iota
	Ascii
	Bigint
	Blob
	Boolean
	Counter
	Date
	Decimal
	Double
	Duration
	Empty
	Float
	Inet
	Int
	SmallInt
	Text
	Time
	Timestamp
	TimeUUID
	TinyInt
	UUID
	Varint
	List
	Set
	Map
	Tuple
	UDT
	Vector
	Composite
	DynamicComposite
	Custom
)

var kindNames = [...]string{
	Invalid: "invalid", Ascii: "ascii", Bigint: "bigint", Blob: "blob", Boolean: "boolean",
	Counter: "counter", Date: "date", Decimal: "decimal", Double: "double", Duration: "duration",
	Empty: "empty", Float: "float", Inet: "inet", Int: "int", SmallInt: "smallint", Text: "text",
	Time: "time", Timestamp: "timestamp", TimeUUID: "timeuuid", TinyInt: "tinyint", UUID: "uuid",
	Varint: "varint", List: "list", Set: "set", Map: "map", Tuple: "tuple", UDT: "udt",
	Vector: "vector", Composite: "composite", DynamicComposite: "dynamiccomposite", Custom: "custom",
}

// String returns the lower-case CQL name of a native kind ("int", "text") or
// a short name for the others ("list", "udt", "custom").
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// IsCollection reports whether k is list, set or map.
func (k Kind) IsCollection() bool { return k == List || k == Set || k == Map }

// Type is one parsed AbstractType.
type Type struct {
	Kind Kind
	// Class is the AbstractType string exactly as it was parsed (String
	// returns it), including any FrozenType(...) / ReversedType(...) wrapper.
	Class string
	// Params are the element types: list/set element, map key and value,
	// tuple components, UDT fields, vector element, composite components,
	// dynamic composite alias targets (in the order of Aliases).
	Params []*Type
	// Frozen is set for collections, UDTs and tuples whose values are stored
	// whole in one cell: written inside FrozenType(...), nested inside a
	// collection/tuple/UDT/vector (Cassandra freezes those), or a tuple.
	Frozen bool
	// Reversed is set when the type was wrapped in ReversedType(...): the
	// comparator is inverted (clustering ORDER BY ... DESC).
	Reversed bool

	// UDT only: keyspace, type name and field names, decoded from hex.
	Keyspace, Name string
	FieldNames     []string
	// Vector only: the number of elements.
	Dimension int
	// DynamicComposite only: the alias byte of each Params entry.
	Aliases []byte

	// impl is the simple class name (e.g. "DateType") when it matters beyond
	// Kind: comparators and printing differ for a few legacy classes.
	impl string
}

// String returns the AbstractType string the type was parsed from.
func (t *Type) String() string { return t.Class }

// Impl is the simple Java class name behind the type ("DateType",
// "TimestampType", "LexicalUUIDType"), for the few places where classes of
// one Kind encode differently; "" when the parser did not record one.
func (t *Type) Impl() string { return t.impl }

// IsMultiCell reports whether a column of this type is stored as one cell
// per element (a "complex" column): a non-frozen list, set, map or UDT.
func (t *Type) IsMultiCell() bool {
	switch t.Kind {
	case List, Set, Map, UDT:
		return !t.Frozen
	}
	return false
}

// IsCounter reports whether values are counter contexts (CounterColumnType).
func (t *Type) IsCounter() bool { return t.Kind == Counter }

// FixedLength is Java's valueLengthIfFixed: the width every value of the
// type has, or -1 when values carry a length. Only the classes that
// override valueLengthIfFixed are fixed; smallint, tinyint, date and time
// are variable-length although their values have one size.
func (t *Type) FixedLength() int {
	switch t.Kind {
	case Int, Float:
		return 4
	case Bigint, Double, Timestamp:
		return 8
	case UUID, TimeUUID:
		return 16
	case Boolean:
		return 1
	case Empty:
		return 0
	case Vector:
		if len(t.Params) == 1 {
			if n := t.Params[0].FixedLength(); n >= 0 {
				return n * t.Dimension
			}
		}
		return -1
	case Custom:
		if t.impl == "LexicalUUIDType" {
			return 16
		}
	}
	return -1
}

// ElementPathType returns the type of the cell path of one element cell of a
// multi-cell column: timeuuid for a list, the element type for a set, the
// key type for a map, smallint (the field position) for a UDT. It returns
// nil for types that are not multi-cell.
func (t *Type) ElementPathType() *Type {
	if !t.IsMultiCell() {
		return nil
	}
	switch t.Kind {
	case List:
		return timeUUIDForPaths
	case Set, Map:
		return t.Params[0]
	case UDT:
		return smallIntForPaths
	}
	return nil
}

// ElementValueType returns the type of the value of one element cell of a
// multi-cell column: the element type for a list, empty for a set (the
// element is in the path), the value type for a map. For a UDT the value
// type depends on the field; use FieldType with the decoded path. It
// returns nil for types that are not multi-cell or for UDTs.
func (t *Type) ElementValueType() *Type {
	if !t.IsMultiCell() {
		return nil
	}
	switch t.Kind {
	case List:
		return t.Params[0]
	case Set:
		return emptyForValues
	case Map:
		return t.Params[1]
	}
	return nil
}

// FieldType returns the type of field i of a UDT or tuple, or nil when out
// of range. For a multi-cell UDT, i is the big-endian short in the cell path.
func (t *Type) FieldType(i int) *Type {
	if (t.Kind != UDT && t.Kind != Tuple) || i < 0 || i >= len(t.Params) {
		return nil
	}
	return t.Params[i]
}

// FieldPath decodes the cell path of one field cell of a non-frozen UDT
// (the field's position as a big-endian short, UserType.cellPathForField)
// into the field's name and type; sstabledump prints the name as the path.
func (t *Type) FieldPath(path []byte) (name string, typ *Type, err error) {
	if t.Kind != UDT || len(path) != 2 {
		return "", nil, valueErr(t, 0, "a 2-byte UDT field position, found %d bytes", len(path))
	}
	i := int(int16(uint16(path[0])<<8 | uint16(path[1])))
	if i < 0 || i >= len(t.FieldNames) {
		return "", nil, valueErr(t, 0, "a field position below %d, found %d", len(t.FieldNames), i)
	}
	return t.FieldNames[i], t.Params[i], nil
}

var (
	timeUUIDForPaths = &Type{Kind: TimeUUID, Class: marshalPrefix + "TimeUUIDType", impl: "TimeUUIDType"}
	smallIntForPaths = &Type{Kind: SmallInt, Class: marshalPrefix + "ShortType", impl: "ShortType"}
	emptyForValues   = &Type{Kind: Empty, Class: marshalPrefix + "EmptyType", impl: "EmptyType"}
)

// CQL returns the type in CQL syntax the way Cassandra prints it
// (cql3/CQL3Type.java): "text", "frozen<list<int>>", "map<int, text>",
// "frozen<tuple<int, text>>", "vector<float, 3>", "frozen<address>". Custom
// classes print as a quoted class string.
func (t *Type) CQL() string {
	var b strings.Builder
	t.appendCQL(&b)
	return b.String()
}

func (t *Type) appendCQL(b *strings.Builder) {
	frozen := t.Frozen && t.Kind != Vector
	switch t.Kind {
	case List, Set, Map:
		if frozen {
			b.WriteString("frozen<")
		}
		b.WriteString(t.Kind.String())
		b.WriteByte('<')
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.appendCQL(b)
		}
		b.WriteByte('>')
		if frozen {
			b.WriteByte('>')
		}
	case Tuple:
		b.WriteString("frozen<tuple<")
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			p.appendCQL(b)
		}
		b.WriteString(">>")
	case UDT:
		if frozen {
			b.WriteString("frozen<")
		}
		b.WriteString(maybeQuote(t.Name))
		if frozen {
			b.WriteByte('>')
		}
	case Vector:
		b.WriteString("vector<")
		if len(t.Params) == 1 {
			t.Params[0].appendCQL(b)
		}
		b.WriteString(", ")
		b.WriteString(strconv.Itoa(t.Dimension))
		b.WriteByte('>')
	case Composite, DynamicComposite, Custom:
		b.WriteByte('\'')
		b.WriteString(t.unwrappedClass())
		b.WriteByte('\'')
	default:
		b.WriteString(t.Kind.String())
	}
}

// unwrappedClass is Class without ReversedType(...)/FrozenType(...) wrappers.
func (t *Type) unwrappedClass() string {
	s := strings.TrimSpace(t.Class)
	for {
		name, inner, ok := splitWrapper(s)
		if !ok || (name != "ReversedType" && name != "FrozenType") {
			return s
		}
		s = strings.TrimSpace(inner)
	}
}

// splitWrapper splits "pkg.NameType( inner )" into the simple name and inner text.
func splitWrapper(s string) (name, inner string, ok bool) {
	open := strings.IndexByte(s, '(')
	if open < 0 || !strings.HasSuffix(s, ")") {
		return "", "", false
	}
	full := strings.TrimSpace(s[:open])
	name = full[strings.LastIndexByte(full, '.')+1:]
	return name, s[open+1 : len(s)-1], true
}

// maybeQuote quotes a CQL identifier unless it is a plain lower-case name
// (cql3/ColumnIdentifier.maybeQuote; reserved words are not checked).
func maybeQuote(s string) string {
	plain := s != ""
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
		case i > 0 && (c >= '0' && c <= '9' || c == '_'):
		default:
			plain = false
		}
	}
	if plain {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
