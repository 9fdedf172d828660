package cqltype

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

const marshalPrefix = "org.apache.cassandra.db.marshal."

// maxDepth bounds nesting so hostile strings cannot exhaust the stack.
const maxDepth = 64

// nativeKinds maps the simple class names of the single-value types to
// their kind (CQL3Type.Native and each class's asCQL3Type).
var nativeKinds = map[string]Kind{
	"AsciiType":          Ascii,
	"LongType":           Bigint,
	"BytesType":          Blob,
	"BooleanType":        Boolean,
	"CounterColumnType":  Counter,
	"SimpleDateType":     Date,
	"DecimalType":        Decimal,
	"DoubleType":         Double,
	"DurationType":       Duration,
	"EmptyType":          Empty,
	"FloatType":          Float,
	"InetAddressType":    Inet,
	"Int32Type":          Int,
	"ShortType":          SmallInt,
	"UTF8Type":           Text,
	"TimeType":           Time,
	"TimestampType":      Timestamp,
	"DateType":           Timestamp, // pre-2.0 timestamp class; CQL calls it timestamp
	"TimeUUIDType":       TimeUUID,
	"LegacyTimeUUIDType": TimeUUID,
	"ByteType":           TinyInt,
	"UUIDType":           UUID,
	"IntegerType":        Varint,
	"LexicalUUIDType":    Custom,
}

// cassandraOnlyClasses are the db.marshal classes that are neither native
// types nor modelled here, read as Custom: they exist in Cassandra.
var cassandraOnlyClasses = map[string]bool{"PartitionerDefinedOrder": true}

// UnknownClasses lists the classes in t that are not Cassandra's own (a
// custom AbstractType, or a damaged class name): Cassandra loads such a
// class by name and refuses the sstable when it is not on its class path,
// while values of such a type read here as bytes.
func (t *Type) UnknownClasses() []string {
	var out []string
	var walk func(t *Type)
	walk = func(t *Type) {
		if t.Kind == Custom && t.impl == "" {
			out = append(out, t.Class)
		}
		for _, p := range t.Params {
			walk(p)
		}
	}
	walk(t)
	return out
}

// Parse parses an AbstractType string as Cassandra writes it in the
// serialization header, e.g.
// "org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.UTF8Type)".
// Class names without a package are taken from org.apache.cassandra.db.marshal,
// as TypeParser does. The returned type's String() is s.
func Parse(s string) (*Type, error) {
	p := typeParser{s: s}
	t, err := p.parse(0)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if !p.eos() {
		return nil, p.errorf("unexpected %q after the type", p.s[p.i])
	}
	t.Class = s
	return t, nil
}

// ParseError reports a malformed type string.
type ParseError struct {
	Input    string
	Offset   int
	Expected string
}

func (e *ParseError) Error() string {
	in := e.Input
	if len(in) > 200 {
		in = in[:200] + "..."
	}
	return fmt.Sprintf("cqltype: parsing type %q at char %d: %s", in, e.Offset, e.Expected)
}

type typeParser struct {
	s string
	i int
}

func (p *typeParser) errorf(format string, args ...any) error {
	return &ParseError{Input: p.s, Offset: p.i, Expected: fmt.Sprintf(format, args...)}
}

func (p *typeParser) eos() bool { return p.i >= len(p.s) }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' }

func isIdentChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' ||
		c == '-' || c == '+' || c == '.' || c == '_' || c == '&'
}

func (p *typeParser) skipBlank() {
	for !p.eos() && isBlank(p.s[p.i]) {
		p.i++
	}
}

// skipBlankAndComma skips blanks and at most one comma; it reports whether
// input remains (TypeParser.skipBlankAndComma).
func (p *typeParser) skipBlankAndComma() bool {
	comma := false
	for !p.eos() {
		c := p.s[p.i]
		if c == ',' {
			if comma {
				return true
			}
			comma = true
		} else if !isBlank(c) {
			return true
		}
		p.i++
	}
	return false
}

func (p *typeParser) ident() string {
	start := p.i
	for !p.eos() && isIdentChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *typeParser) expect(c byte) error {
	if p.eos() {
		return p.errorf("expected %q, found end of string", c)
	}
	if p.s[p.i] != c {
		return p.errorf("expected %q, found %q", c, p.s[p.i])
	}
	p.i++
	return nil
}

// parse reads one type at the current position; Class is set to the text
// from the start of its class name to the end of its parameters.
func (p *typeParser) parse(depth int) (*Type, error) {
	if depth > maxDepth {
		return nil, p.errorf("types nested deeper than %d levels", maxDepth)
	}
	p.skipBlank()
	start := p.i
	full := p.ident()
	if full == "" {
		if p.eos() {
			return nil, p.errorf("expected a type class name, found end of string")
		}
		return nil, p.errorf("expected a type class name, found %q", p.s[p.i])
	}
	nameEnd := p.i
	p.skipBlank()
	hasParams := !p.eos() && p.s[p.i] == '('
	if !hasParams {
		p.i = nameEnd // blanks after the name belong to the caller
	}

	name := full
	if strings.ContainsRune(full, '.') {
		if strings.HasPrefix(full, marshalPrefix) && !strings.ContainsRune(full[len(marshalPrefix):], '.') {
			name = full[len(marshalPrefix):]
		} else {
			name = "" // a class outside db.marshal: custom
		}
	}

	t, err := p.build(name, hasParams, depth)
	if err != nil {
		return nil, err
	}
	t.Class = p.s[start:p.i]
	return t, nil
}

func (p *typeParser) build(name string, hasParams bool, depth int) (*Type, error) {
	switch name {
	case "FrozenType", "ReversedType", "ListType", "SetType", "MapType", "TupleType", "CompositeType":
		if !hasParams {
			return nil, p.errorf("%s needs type parameters", name)
		}
		params, err := p.typeParams(depth)
		if err != nil {
			return nil, err
		}
		want := map[string]int{"FrozenType": 1, "ReversedType": 1, "ListType": 1, "SetType": 1, "MapType": 2}[name]
		if want > 0 && len(params) != want {
			return nil, p.errorf("%s takes %d type parameter(s), found %d", name, want, len(params))
		}
		switch name {
		case "FrozenType":
			return freeze(params[0]), nil
		case "ReversedType":
			c := *params[0]
			c.Reversed = true
			return &c, nil
		case "ListType":
			return &Type{Kind: List, Params: []*Type{freeze(params[0])}, impl: name}, nil
		case "SetType":
			return &Type{Kind: Set, Params: []*Type{freeze(params[0])}, impl: name}, nil
		case "MapType":
			return &Type{Kind: Map, Params: []*Type{freeze(params[0]), freeze(params[1])}, impl: name}, nil
		case "TupleType":
			if len(params) == 0 {
				return nil, p.errorf("TupleType takes at least one type parameter")
			}
			for i := range params {
				params[i] = freeze(params[i])
			}
			return &Type{Kind: Tuple, Params: params, Frozen: true, impl: name}, nil
		default:
			return &Type{Kind: Composite, Params: params, impl: name}, nil
		}
	case "UserType":
		if !hasParams {
			return nil, p.errorf("UserType needs parameters")
		}
		return p.userType(depth)
	case "VectorType":
		if !hasParams {
			return nil, p.errorf("VectorType needs parameters")
		}
		return p.vectorType(depth)
	case "DynamicCompositeType":
		t := &Type{Kind: DynamicComposite, impl: name}
		if hasParams {
			if err := p.aliasParams(t, depth); err != nil {
				return nil, err
			}
		}
		return t, nil
	}
	k, ok := nativeKinds[name]
	if !ok {
		k = Custom
		if !cassandraOnlyClasses[name] {
			name = "" // not one of Cassandra's classes (UnknownClasses)
		}
	}
	if hasParams {
		// Parameters of classes this package does not model (for example
		// PartitionerDefinedOrder(...)) are kept only in Class.
		if err := p.skipBalanced(); err != nil {
			return nil, err
		}
	}
	return &Type{Kind: k, impl: name}, nil
}

// typeParams reads "(T1, T2, ...)".
func (p *typeParser) typeParams(depth int) ([]*Type, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	var out []*Type
	for p.skipBlankAndComma() {
		if p.s[p.i] == ')' {
			p.i++
			return out, nil
		}
		t, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return nil, p.errorf("expected ')', found end of string")
}

// userType reads "(keyspace,hexname,hexfield:type,...)".
func (p *typeParser) userType(depth int) (*Type, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	t := &Type{Kind: UDT, impl: "UserType"}
	p.skipBlankAndComma()
	t.Keyspace = p.ident()
	if t.Keyspace == "" {
		return nil, p.errorf("expected the UDT keyspace")
	}
	p.skipBlankAndComma()
	name, err := p.hexIdent("UDT name")
	if err != nil {
		return nil, err
	}
	t.Name = name
	for p.skipBlankAndComma() {
		if p.s[p.i] == ')' {
			p.i++
			return t, nil
		}
		field, err := p.hexIdent("UDT field name")
		if err != nil {
			return nil, err
		}
		p.skipBlank()
		if err := p.expect(':'); err != nil {
			return nil, err
		}
		ft, err := p.parse(depth + 1)
		if err != nil {
			return nil, err
		}
		t.FieldNames = append(t.FieldNames, field)
		t.Params = append(t.Params, ft)
	}
	return nil, p.errorf("expected ')', found end of string")
}

func (p *typeParser) hexIdent(what string) (string, error) {
	at := p.i
	h := p.ident()
	b, err := hex.DecodeString(h)
	if err != nil || h == "" {
		p.i = at
		return "", p.errorf("expected the hex-encoded %s, found %q", what, h)
	}
	if !utf8.Valid(b) {
		p.i = at
		return "", p.errorf("expected the hex-encoded %s to be UTF-8", what)
	}
	return string(b), nil
}

// vectorType reads "(type , dimension)".
func (p *typeParser) vectorType(depth int) (*Type, error) {
	if err := p.expect('('); err != nil {
		return nil, err
	}
	elem, err := p.parse(depth + 1)
	if err != nil {
		return nil, err
	}
	if !p.skipBlankAndComma() {
		return nil, p.errorf("expected the vector dimension, found end of string")
	}
	at := p.i
	d := p.ident()
	n, err := strconv.Atoi(d)
	if err != nil || n <= 0 {
		p.i = at
		return nil, p.errorf("expected a positive vector dimension, found %q", d)
	}
	p.skipBlank()
	if err := p.expect(')'); err != nil {
		return nil, err
	}
	if w := elem.FixedLength(); w > 0 && int64(w)*int64(n) > math.MaxInt32 {
		p.i = at
		return nil, p.errorf("expected a vector of at most %d bytes, found %d elements of %d bytes", math.MaxInt32, n, w)
	}
	return &Type{Kind: Vector, Params: []*Type{freeze(elem)}, Dimension: n, impl: "VectorType"}, nil
}

// aliasParams reads "(a=>Type,b=>Type)".
func (p *typeParser) aliasParams(t *Type, depth int) error {
	if err := p.expect('('); err != nil {
		return err
	}
	for p.skipBlankAndComma() {
		if p.s[p.i] == ')' {
			p.i++
			return nil
		}
		a := p.ident()
		if len(a) != 1 {
			return p.errorf("expected a one-character alias, found %q", a)
		}
		p.skipBlank()
		if !strings.HasPrefix(p.s[p.i:], "=>") {
			return p.errorf("expected '=>' after alias %q", a)
		}
		p.i += 2
		at, err := p.parse(depth + 1)
		if err != nil {
			return err
		}
		t.Aliases = append(t.Aliases, a[0])
		t.Params = append(t.Params, at)
	}
	return p.errorf("expected ')', found end of string")
}

func (p *typeParser) skipBalanced() error {
	depth := 0
	for ; !p.eos(); p.i++ {
		switch p.s[p.i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				p.i++
				return nil
			}
		}
	}
	return p.errorf("expected ')', found end of string")
}

// freeze returns t as it is inside a frozen context: collections, UDTs and
// tuples become frozen, recursively (their values are stored whole).
// t itself is not modified.
func freeze(t *Type) *Type {
	switch t.Kind {
	case List, Set, Map, UDT, Tuple, Vector:
	default:
		return t
	}
	c := *t
	if c.Kind != Vector {
		c.Frozen = true
	}
	if len(t.Params) > 0 {
		c.Params = make([]*Type, len(t.Params))
		for i, p := range t.Params {
			c.Params[i] = freeze(p)
		}
	}
	return &c
}

// Frozen returns t as a top-level frozen<...> column of the same type: the
// class wrapped in FrozenType(...) and every nested collection, UDT and
// tuple frozen. t is not modified. A type that cannot be frozen (a scalar)
// is returned as it is.
func Frozen(t *Type) *Type {
	switch t.Kind {
	case List, Set, Map, UDT, Tuple:
	default:
		return t
	}
	f := freeze(t)
	if t.Kind != Tuple {
		f.Class = "org.apache.cassandra.db.marshal.FrozenType(" + t.Class + ")"
	}
	return f
}
