package cqltype

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// cqlNatives maps CQL native type names to the marshal class that
// implements them (cql3/CQL3Type.Native).
var cqlNatives = map[string]string{
	"ascii": "AsciiType", "bigint": "LongType", "blob": "BytesType", "boolean": "BooleanType",
	"counter": "CounterColumnType", "date": "SimpleDateType", "decimal": "DecimalType",
	"double": "DoubleType", "duration": "DurationType", "empty": "EmptyType", "float": "FloatType",
	"inet": "InetAddressType", "int": "Int32Type", "smallint": "ShortType", "text": "UTF8Type",
	"varchar": "UTF8Type", "time": "TimeType", "timestamp": "TimestampType",
	"timeuuid": "TimeUUIDType", "tinyint": "ByteType", "uuid": "UUIDType", "varint": "IntegerType",
}

// ParseCQL parses a type in CQL syntax ("int", "frozen<map<text, int>>",
// "tuple<int, text>", "vector<float, 3>", "'org.example.MyType'", or a user
// type name such as "address" or "ks.address"). A user type parsed this way
// has only its Name (and Keyspace when qualified): ParseSchema fills in its
// fields from CREATE TYPE statements. The result's Class is the AbstractType
// string Cassandra would write for it (UDTs only once resolved).
func ParseCQL(s string) (*Type, error) {
	lx := newLexer(s)
	t, err := parseCQLType(lx, 0)
	if err != nil {
		return nil, err
	}
	if tok := lx.next(); tok.kind != tokEOF {
		return nil, lx.errorf(tok, "expected the end of the type, found %q", tok.text)
	}
	t.setClass(false)
	return t, nil
}

func parseCQLType(lx *lexer, depth int) (*Type, error) {
	if depth > maxDepth {
		return nil, lx.errorf(lx.peek(), "types nested deeper than %d levels", maxDepth)
	}
	tok := lx.next()
	switch tok.kind {
	case tokString:
		t, err := Parse(tok.text)
		if err != nil {
			return nil, lx.errorf(tok, "custom type %q: %v", tok.text, err)
		}
		return t, nil
	case tokIdent, tokQuotedIdent:
	default:
		return nil, lx.errorf(tok, "expected a type, found %q", tok.text)
	}
	name := tok.text
	lower := strings.ToLower(name)
	if tok.kind == tokIdent {
		if impl, ok := cqlNatives[lower]; ok {
			return &Type{Kind: nativeKinds[impl], impl: impl}, nil
		}
		switch lower {
		case "frozen", "list", "set", "map", "tuple", "vector":
			if !lx.accept("<") {
				break // a user type that happens to be named like a keyword
			}
			return parseCQLGeneric(lx, lower, depth)
		}
	}
	// A user type reference, maybe keyspace-qualified.
	ut := &Type{Kind: UDT, impl: "UserType", Name: identName(tok)}
	if lx.accept(".") {
		n := lx.next()
		if n.kind != tokIdent && n.kind != tokQuotedIdent {
			return nil, lx.errorf(n, "expected a type name after %q.", name)
		}
		ut.Keyspace, ut.Name = ut.Name, identName(n)
	}
	return ut, nil
}

func parseCQLGeneric(lx *lexer, kw string, depth int) (*Type, error) {
	var params []*Type
	dim := 0
	for {
		if kw == "vector" && len(params) == 1 {
			n := lx.next()
			d, err := strconv.Atoi(n.text)
			if n.kind != tokNumber || err != nil || d <= 0 {
				return nil, lx.errorf(n, "expected a positive vector dimension, found %q", n.text)
			}
			dim = d
		} else {
			p, err := parseCQLType(lx, depth+1)
			if err != nil {
				return nil, err
			}
			params = append(params, p)
		}
		if lx.accept(">") {
			break
		}
		if !lx.accept(",") {
			return nil, lx.errorf(lx.peek(), "expected ',' or '>' in %s<...>, found %q", kw, lx.peek().text)
		}
	}
	want := map[string]int{"frozen": 1, "list": 1, "set": 1, "map": 2, "vector": 1}[kw]
	if want > 0 && len(params) != want || kw == "vector" && dim == 0 || kw == "tuple" && len(params) == 0 {
		return nil, lx.errorf(lx.peek(), "wrong number of parameters for %s", kw)
	}
	switch kw {
	case "frozen":
		return freeze(params[0]), nil
	case "list":
		return &Type{Kind: List, Params: []*Type{freeze(params[0])}, impl: "ListType"}, nil
	case "set":
		return &Type{Kind: Set, Params: []*Type{freeze(params[0])}, impl: "SetType"}, nil
	case "map":
		return &Type{Kind: Map, Params: []*Type{freeze(params[0]), freeze(params[1])}, impl: "MapType"}, nil
	case "tuple":
		for i := range params {
			params[i] = freeze(params[i])
		}
		return &Type{Kind: Tuple, Params: params, Frozen: true, impl: "TupleType"}, nil
	default:
		if w := params[0].FixedLength(); w > 0 && int64(w)*int64(dim) > math.MaxInt32 {
			return nil, lx.errorf(lx.peek(), "expected a vector of at most %d bytes, found %d elements of %d bytes", math.MaxInt32, dim, w)
		}
		return &Type{Kind: Vector, Params: []*Type{freeze(params[0])}, Dimension: dim, impl: "VectorType"}, nil
	}
}

// setClass fills Class for t and its parameters with the AbstractType
// strings Cassandra writes (AbstractType.toString(ignoreFreezing)).
func (t *Type) setClass(ignoreFreezing bool) {
	var b strings.Builder
	t.appendClass(&b, ignoreFreezing, true)
	t.Class = b.String()
}

func (t *Type) appendClass(b *strings.Builder, ignoreFreezing, set bool) {
	start := b.Len()
	defer func() {
		if set {
			t.Class = b.String()[start:]
		}
	}()
	if t.Reversed {
		b.WriteString(marshalPrefix + "ReversedType(")
		c := *t
		c.Reversed = false
		c.appendClass(b, false, false)
		b.WriteByte(')')
		if set {
			// The base type's parameters get their own Class strings.
			for _, p := range t.Params {
				p.setClass(ignoreFreezing || t.Frozen)
			}
		}
		return
	}
	wrap := func(name string, params func(inner bool)) {
		frozenWrap := !ignoreFreezing && t.Frozen
		if frozenWrap {
			b.WriteString(marshalPrefix + "FrozenType(")
		}
		b.WriteString(marshalPrefix + name + "(")
		params(ignoreFreezing || t.Frozen)
		b.WriteByte(')')
		if frozenWrap {
			b.WriteByte(')')
		}
	}
	switch t.Kind {
	case List, Set, Map:
		wrap(t.impl, func(inner bool) {
			for i, p := range t.Params {
				if i > 0 {
					b.WriteByte(',')
				}
				p.appendClass(b, inner, set)
			}
		})
	case UDT:
		wrap("UserType", func(inner bool) {
			b.WriteString(t.Keyspace)
			b.WriteByte(',')
			b.WriteString(hex.EncodeToString([]byte(t.Name)))
			for i, p := range t.Params {
				b.WriteByte(',')
				b.WriteString(hex.EncodeToString([]byte(t.FieldNames[i])))
				b.WriteByte(':')
				p.appendClass(b, inner, set)
			}
		})
	case Tuple:
		b.WriteString(marshalPrefix + "TupleType(")
		for i, p := range t.Params {
			if i > 0 {
				b.WriteByte(',')
			}
			p.appendClass(b, true, set)
		}
		b.WriteByte(')')
	case Vector:
		b.WriteString(marshalPrefix + "VectorType(")
		t.Params[0].appendClass(b, ignoreFreezing, set)
		b.WriteString(" , ")
		b.WriteString(strconv.Itoa(t.Dimension))
		b.WriteByte(')')
	case Composite, DynamicComposite, Custom:
		b.WriteString(t.unwrappedClass())
	default:
		b.WriteString(marshalPrefix + t.impl)
	}
}

// ---- a small CQL lexer ----

type tokKind int

const (
	tokEOF tokKind = iota
	tokIdent
	tokQuotedIdent
	tokString
	tokNumber
	tokPunct
)

type token struct {
	kind tokKind
	text string // identifiers as written; quoted ones and strings unescaped
	pos  int
}

type lexer struct {
	src  string
	toks []token
	i    int
	err  error
}

func newLexer(src string) *lexer {
	lx := &lexer{src: src}
	lx.scan()
	return lx
}

// CQLError reports malformed CQL with its byte offset in the input.
type CQLError struct {
	Offset   int
	Expected string
}

func (e *CQLError) Error() string {
	return fmt.Sprintf("cqltype: CQL at byte %d: %s", e.Offset, e.Expected)
}

func (lx *lexer) errorf(tok token, format string, args ...any) error {
	if lx.err != nil {
		return lx.err
	}
	return &CQLError{Offset: tok.pos, Expected: fmt.Sprintf(format, args...)}
}

func (lx *lexer) peek() token {
	if lx.i < len(lx.toks) {
		return lx.toks[lx.i]
	}
	return token{kind: tokEOF, text: "end of input", pos: len(lx.src)}
}

func (lx *lexer) next() token {
	t := lx.peek()
	if lx.i < len(lx.toks) {
		lx.i++
	}
	return t
}

// accept consumes the next token when it is the punctuation p.
func (lx *lexer) accept(p string) bool {
	if t := lx.peek(); t.kind == tokPunct && t.text == p {
		lx.i++
		return true
	}
	return false
}

// acceptWord consumes the next token when it is the unquoted keyword w.
func (lx *lexer) acceptWord(w string) bool {
	if t := lx.peek(); t.kind == tokIdent && strings.EqualFold(t.text, w) {
		lx.i++
		return true
	}
	return false
}

func (lx *lexer) scan() {
	s := lx.src
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-', c == '/' && i+1 < len(s) && s[i+1] == '/':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				lx.fail(i, "expected the end of a /* comment */")
				return
			}
			i += end + 4
		case c == '\'' || c == '"':
			start := i
			var b strings.Builder
			i++
			closed := false
			for i < len(s) {
				if s[i] == c {
					if i+1 < len(s) && s[i+1] == c {
						b.WriteByte(c)
						i += 2
						continue
					}
					i++
					closed = true
					break
				}
				b.WriteByte(s[i])
				i++
			}
			if !closed {
				lx.fail(start, "expected a closing "+string(c))
				return
			}
			k := tokString
			if c == '"' {
				k = tokQuotedIdent
			}
			lx.toks = append(lx.toks, token{kind: k, text: b.String(), pos: start})
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			end := strings.Index(s[i+2:], "$$")
			if end < 0 {
				lx.fail(i, "expected a closing $$")
				return
			}
			lx.toks = append(lx.toks, token{kind: tokString, text: s[i+2 : i+2+end], pos: i})
			i += end + 4
		case isCQLIdentStart(c):
			start := i
			for i < len(s) && isCQLIdentChar(s[i]) {
				i++
			}
			lx.toks = append(lx.toks, token{kind: tokIdent, text: s[start:i], pos: start})
		case c >= '0' && c <= '9' || (c == '-' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9'):
			start := i
			i++
			for i < len(s) && (isCQLIdentChar(s[i]) || s[i] == '.' ||
				(s[i] == '-' || s[i] == '+') && (s[i-1] == 'e' || s[i-1] == 'E')) {
				i++
			}
			lx.toks = append(lx.toks, token{kind: tokNumber, text: s[start:i], pos: start})
		default:
			lx.toks = append(lx.toks, token{kind: tokPunct, text: string(c), pos: i})
			i++
		}
	}
}

func (lx *lexer) fail(pos int, expected string) {
	lx.err = &CQLError{Offset: pos, Expected: expected}
	lx.toks = append(lx.toks, token{kind: tokPunct, text: "\x00", pos: pos})
}

func isCQLIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

func isCQLIdentChar(c byte) bool {
	return isCQLIdentStart(c) || c >= '0' && c <= '9'
}

// identName is the name an identifier token denotes: unquoted names are
// case-insensitive (lower-cased), quoted ones keep their case.
func identName(t token) string {
	if t.kind == tokQuotedIdent {
		return t.text
	}
	return strings.ToLower(t.text)
}
