// Package cql parses the subset of CQL's SELECT statement that the query
// command runs on sstables: a column list or *, FROM [keyspace.]table,
// WHERE relations joined by AND (=, IN, <, <=, >, >= on a column, and
// token(...) compared with a literal) and LIMIT. Everything else CQL
// allows in a SELECT (DISTINCT, JSON, functions and aggregates, aliases,
// ORDER BY, GROUP BY, PER PARTITION LIMIT, ALLOW FILTERING, CONTAINS,
// LIKE, IS NOT NULL, !=, multi-column relations, bind markers, collection
// literals) is refused with an error that names it, so that a query is
// never silently answered differently from Cassandra.
//
// It is hand-written: no well-kept Go CQL parser exists (gocql, the Go
// driver, sends statements to the server unparsed; the ANTLR grammar of
// CQL would bring a runtime and generated code for a few productions), and
// what the command needs from a statement is small and checked here with
// the wording a user can act on.
package cql

import (
	"fmt"
	"strconv"
	"strings"
)

// Select is a parsed SELECT statement.
type Select struct {
	// Columns are the selected columns in order (names as Cassandra
	// stores them: unquoted identifiers lowercased); nil for *.
	Columns []string
	// Keyspace is "" when the table is not qualified.
	Keyspace, Table string
	Where           []Relation
	// Limit is the LIMIT (HasLimit false: none).
	Limit    int64
	HasLimit bool
}

// Op is a relation's operator.
type Op uint8

const (
	Eq Op = iota
	In
	Lt
	Le
	Gt
	Ge
)

var opText = [...]string{Eq: "=", In: "IN", Lt: "<", Le: "<=", Gt: ">", Ge: ">="}

func (o Op) String() string { return opText[o] }

// Relation is one restriction of the WHERE clause.
type Relation struct {
	// Token is set for token(Columns...) op value.
	Token bool
	// Columns is the restricted column (one), or token's arguments.
	Columns []string
	Op      Op
	// Values holds one literal, or IN's list (possibly empty).
	Values []Literal
	// Pos is where the relation starts in the statement.
	Pos int
}

// LitKind is a literal's syntax.
type LitKind uint8

const (
	LitString LitKind = iota // 'text' or $$text$$
	LitNumber                // 42, -1.5, 1e10, NaN, Infinity
	LitHex                   // 0xcafe
	LitUUID                  // 123e4567-e89b-12d3-a456-426614174000
	LitBool                  // true, false
	LitNull                  // null
)

var litText = [...]string{"a string", "a number", "a blob", "a uuid", "a boolean", "null"}

func (k LitKind) String() string { return litText[k] }

// Literal is a constant as written.
type Literal struct {
	Kind LitKind
	Text string // unescaped for strings; as written otherwise
	Pos  int
}

// Parse parses one SELECT statement (a trailing semicolon is allowed).
func Parse(stmt string) (*Select, error) {
	toks, err := lex(stmt)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	s, err := p.selectStatement()
	if err != nil {
		return nil, err
	}
	return s, nil
}

type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return &Error{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

// unsupported is the error for something CQL has that query does not.
func (p *parser) unsupported(t token, what string) error {
	return &Error{Pos: t.pos, Msg: what + " is not supported by query"}
}

func (p *parser) isWord(t token, words ...string) bool {
	return t.kind == tokIdent && isKeyword(t.text, words...)
}

func (p *parser) acceptWord(w string) bool {
	if p.isWord(p.peek(), w) {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptPunct(s string) bool {
	if t := p.peek(); t.kind == tokPunct && t.text == s {
		p.i++
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tokEOF:
		return "the end of the statement"
	case tokString:
		return "string '" + t.text + "'"
	case tokQuoted:
		return `"` + t.text + `"`
	}
	return "'" + t.text + "'"
}

// reserved are the reserved keywords of CQL (cql3/ReservedKeywords) that a
// SELECT can meet where a name is expected: they must be quoted to be
// names.
var reserved = map[string]bool{"select": true, "from": true, "where": true, "and": true, "or": true, "limit": true,
	"order": true, "by": true, "allow": true, "in": true, "token": true, "is": true, "not": true, "null": true,
	"asc": true, "desc": true, "with": true, "using": true, "nan": true, "infinity": true}

func (p *parser) selectStatement() (*Select, error) {
	t := p.next()
	if !p.isWord(t, "select") {
		if t.kind == tokIdent {
			return nil, p.errorf(t, "only SELECT statements can be queried, not %s", strings.ToUpper(t.text))
		}
		return nil, p.errorf(t, "expected SELECT, found %s", describe(t))
	}
	s := &Select{}
	if t := p.peek(); p.isWord(t, "distinct") {
		return nil, p.unsupported(t, "SELECT DISTINCT")
	}
	if t := p.peek(); p.isWord(t, "json") && !p.isWord(p.toks[p.i+1], "from") && !(p.toks[p.i+1].kind == tokPunct && p.toks[p.i+1].text == ",") {
		return nil, p.unsupported(t, "SELECT JSON (use --json)")
	}
	if err := p.selection(s); err != nil {
		return nil, err
	}
	if t := p.next(); !p.isWord(t, "from") {
		return nil, p.errorf(t, "expected FROM, found %s", describe(t))
	}
	name, _, err := p.identifier("a table name")
	if err != nil {
		return nil, err
	}
	s.Table = name
	if p.acceptPunct(".") {
		s.Keyspace = name
		if s.Table, _, err = p.identifier("a table name after the keyspace"); err != nil {
			return nil, err
		}
	}
	if p.acceptWord("where") {
		if err := p.where(s); err != nil {
			return nil, err
		}
	}
	for {
		t := p.peek()
		switch {
		case p.isWord(t, "group"):
			return nil, p.unsupported(t, "GROUP BY")
		case p.isWord(t, "order"):
			return nil, p.unsupported(t, "ORDER BY (rows come in clustering order within each partition, partitions in token order)")
		case p.isWord(t, "per"):
			return nil, p.unsupported(t, "PER PARTITION LIMIT")
		case p.isWord(t, "limit"):
			p.next()
			if s.HasLimit {
				return nil, p.errorf(t, "LIMIT given twice")
			}
			n := p.next()
			if n.kind == tokPunct && (n.text == "?" || n.text == ":") {
				return nil, p.unsupported(n, "a bind marker")
			}
			v, err := strconv.ParseInt(n.text, 10, 32)
			if n.kind != tokNumber || err != nil || v <= 0 {
				return nil, p.errorf(n, "LIMIT must be a positive integer, found %s", describe(n))
			}
			s.Limit, s.HasLimit = v, true
			continue
		case p.isWord(t, "allow"):
			return nil, p.unsupported(t, "ALLOW FILTERING")
		case p.isWord(t, "bypass"):
			return nil, p.unsupported(t, "BYPASS CACHE")
		case p.isWord(t, "with"):
			return nil, p.unsupported(t, "WITH (ANN OF / options)")
		}
		break
	}
	p.acceptPunct(";")
	if t := p.next(); t.kind != tokEOF {
		if p.isWord(t, "where") {
			return nil, p.errorf(t, "WHERE must come before LIMIT")
		}
		return nil, p.errorf(t, "expected the end of the statement, found %s", describe(t))
	}
	return s, nil
}

// identifier reads a column, table or keyspace name: unquoted ones are
// case-insensitive (lowercased, as Cassandra stores them), quoted ones
// kept as written. quoted reports which.
func (p *parser) identifier(what string) (string, bool, error) {
	t := p.next()
	switch t.kind {
	case tokQuoted:
		return t.text, true, nil
	case tokIdent:
		if reserved[strings.ToLower(t.text)] {
			return "", false, p.errorf(t, "expected %s, found the keyword %s (quote it: \"%s\")", what, strings.ToUpper(t.text), t.text)
		}
		return strings.ToLower(t.text), false, nil
	}
	return "", false, p.errorf(t, "expected %s, found %s", what, describe(t))
}

func (p *parser) selection(s *Select) error {
	if p.acceptPunct("*") {
		return nil
	}
	for {
		t := p.peek()
		if t.kind == tokIdent && strings.EqualFold(t.text, "token") || t.kind == tokIdent && p.toks[p.i+1].kind == tokPunct && p.toks[p.i+1].text == "(" {
			name := strings.ToLower(t.text)
			switch name {
			case "count", "sum", "avg", "min", "max":
				return p.unsupported(t, "the aggregate "+strings.ToUpper(name)+"()")
			case "writetime", "ttl", "maxwritetime", "minwritetime":
				return p.unsupported(t, strings.ToUpper(name)+"() (explain -k shows every cell's timestamp and TTL)")
			case "cast":
				return p.unsupported(t, "CAST")
			}
			return p.unsupported(t, "the function "+name+"() in the selection")
		}
		if t.kind == tokPunct && (t.text == "(" || t.text == "[" || t.text == "{") || t.kind == tokString || t.kind == tokNumber {
			return p.unsupported(t, "a term in the selection (only column names and * can be selected)")
		}
		name, _, err := p.identifier("a column name or *")
		if err != nil {
			return err
		}
		s.Columns = append(s.Columns, name)
		if t := p.peek(); p.isWord(t, "as") {
			return p.unsupported(t, "AS (column aliases)")
		}
		if t := p.peek(); t.kind == tokPunct && (t.text == "[" || t.text == "." || t.text == "+" || t.text == "-") {
			return p.unsupported(t, "selecting an element or field of a column, or arithmetic,")
		}
		if !p.acceptPunct(",") {
			return nil
		}
	}
}

func (p *parser) where(s *Select) error {
	for {
		r, err := p.relation()
		if err != nil {
			return err
		}
		s.Where = append(s.Where, r)
		if t := p.peek(); p.isWord(t, "or") {
			return p.unsupported(t, "OR")
		}
		if !p.acceptWord("and") {
			return nil
		}
	}
}

func (p *parser) relation() (Relation, error) {
	start := p.peek()
	r := Relation{Pos: start.pos}
	switch {
	case start.kind == tokPunct && start.text == "(":
		return r, p.unsupported(start, "a multi-column relation ((a, b) > (x, y))")
	case p.isWord(start, "token") && p.toks[p.i+1].kind == tokPunct && p.toks[p.i+1].text == "(":
		p.next()
		p.next()
		r.Token = true
		for {
			name, _, err := p.identifier("a partition key column in token()")
			if err != nil {
				return r, err
			}
			r.Columns = append(r.Columns, name)
			if p.acceptPunct(")") {
				break
			}
			if t := p.next(); t.kind != tokPunct || t.text != "," {
				return r, p.errorf(t, "expected , or ) in token(), found %s", describe(t))
			}
		}
	case start.kind == tokIdent && p.toks[p.i+1].kind == tokPunct && p.toks[p.i+1].text == "(":
		return r, p.unsupported(start, "the function "+strings.ToLower(start.text)+"() in WHERE (only token() is)")
	default:
		name, _, err := p.identifier("a column name")
		if err != nil {
			return r, err
		}
		r.Columns = []string{name}
		if t := p.peek(); t.kind == tokPunct && (t.text == "[" || t.text == ".") {
			return r, p.unsupported(t, "restricting a collection element or a field")
		}
	}
	opTok := p.next()
	switch {
	case opTok.kind == tokPunct:
		switch opTok.text {
		case "=":
			r.Op = Eq
		case "<":
			r.Op = Lt
		case "<=":
			r.Op = Le
		case ">":
			r.Op = Gt
		case ">=":
			r.Op = Ge
		case "!=":
			return r, p.unsupported(opTok, "!=")
		default:
			return r, p.errorf(opTok, "expected an operator (=, IN, <, <=, >, >=), found %s", describe(opTok))
		}
	case p.isWord(opTok, "in"):
		r.Op = In
	case p.isWord(opTok, "contains"):
		return r, p.unsupported(opTok, "CONTAINS")
	case p.isWord(opTok, "like"):
		return r, p.unsupported(opTok, "LIKE")
	case p.isWord(opTok, "is"):
		return r, p.unsupported(opTok, "IS NOT NULL")
	default:
		return r, p.errorf(opTok, "expected an operator (=, IN, <, <=, >, >=), found %s", describe(opTok))
	}
	if r.Token && r.Op == In {
		return r, p.unsupported(opTok, "token(...) IN")
	}
	if r.Op == In {
		if t := p.next(); t.kind != tokPunct || t.text != "(" {
			if t.kind == tokPunct && (t.text == "?" || t.text == ":") {
				return r, p.unsupported(t, "a bind marker")
			}
			return r, p.errorf(t, "expected ( after IN, found %s", describe(t))
		}
		r.Values = []Literal{}
		if p.acceptPunct(")") {
			return r, nil
		}
		for {
			v, err := p.literal()
			if err != nil {
				return r, err
			}
			r.Values = append(r.Values, v)
			if p.acceptPunct(")") {
				return r, nil
			}
			if t := p.next(); t.kind != tokPunct || t.text != "," {
				return r, p.errorf(t, "expected , or ) in the IN list, found %s", describe(t))
			}
		}
	}
	v, err := p.literal()
	if err != nil {
		return r, err
	}
	r.Values = []Literal{v}
	return r, nil
}

func (p *parser) literal() (Literal, error) {
	t := p.next()
	l := Literal{Text: t.text, Pos: t.pos}
	switch t.kind {
	case tokString:
		l.Kind = LitString
	case tokNumber:
		l.Kind = LitNumber
	case tokHex:
		l.Kind = LitHex
	case tokUUID:
		l.Kind = LitUUID
	case tokIdent:
		switch strings.ToLower(t.text) {
		case "true", "false":
			l.Kind, l.Text = LitBool, strings.ToLower(t.text)
		case "null":
			l.Kind = LitNull
		case "nan", "infinity":
			l.Kind = LitNumber
		case "token":
			return l, p.unsupported(t, "token() on the right of a relation")
		default:
			if p.peek().kind == tokPunct && p.peek().text == "(" {
				return l, p.unsupported(t, "the function "+strings.ToLower(t.text)+"() as a value")
			}
			return l, p.errorf(t, "expected a constant, found %s (strings take single quotes: '%s')", describe(t), t.text)
		}
	case tokPunct:
		switch t.text {
		case "?", ":":
			return l, p.unsupported(t, "a bind marker")
		case "-":
			if n := p.peek(); p.isWord(n, "nan", "infinity") {
				p.next()
				return Literal{Kind: LitNumber, Text: "-" + n.text, Pos: t.pos}, nil
			}
		case "[", "{", "(":
			return l, p.unsupported(t, "a collection, tuple or UDT literal")
		}
		return l, p.errorf(t, "expected a constant, found %s", describe(t))
	default:
		return l, p.errorf(t, "expected a constant, found %s", describe(t))
	}
	if n := p.peek(); n.kind == tokPunct && (n.text == "+" || n.text == "-") || n.kind == tokNumber && (n.text[0] == '-' || n.text[0] == '+') {
		return l, p.unsupported(n, "arithmetic")
	}
	return l, nil
}
