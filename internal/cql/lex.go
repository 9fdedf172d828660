package cql

import (
	"fmt"
	"strings"
)

// kind is a token's class.
type kind uint8

const (
	tokEOF    kind = iota
	tokIdent       // unquoted identifier or keyword (as typed)
	tokQuoted      // "double-quoted" identifier (unescaped)
	tokString      // 'single-quoted' or $$dollar-quoted$$ string (unescaped)
	tokNumber      // integer or float, with its sign
	tokHex         // 0x... blob
	tokUUID        // a bare UUID literal
	tokPunct       // ( ) , ; . * = < > <= >= != ? : [ ] { } + -
)

type token struct {
	kind kind
	text string // for tokIdent as typed; tokQuoted and tokString unescaped
	pos  int    // byte offset in the statement
}

// Error is a parse error at a byte offset of the statement.
type Error struct {
	Pos int
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("at character %d: %s", e.Pos+1, e.Msg) }

// lex splits s into tokens; an unterminated string or identifier and a
// character CQL has no use for are errors.
func lex(s string) ([]token, error) {
	var out []token
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
				return nil, &Error{i, "a /* comment that does not end"}
			}
			i += end + 4
		case c == '\'':
			text, n, err := quoted(s, i, '\'')
			if err != nil {
				return nil, err
			}
			out = append(out, token{tokString, text, i})
			i = n
		case c == '"':
			text, n, err := quoted(s, i, '"')
			if err != nil {
				return nil, err
			}
			if text == "" {
				return nil, &Error{i, `an empty quoted identifier ""`}
			}
			out = append(out, token{tokQuoted, text, i})
			i = n
		case c == '$' && i+1 < len(s) && s[i+1] == '$':
			end := strings.Index(s[i+2:], "$$")
			if end < 0 {
				return nil, &Error{i, "a $$ string that does not end"}
			}
			out = append(out, token{tokString, s[i+2 : i+2+end], i})
			i += end + 4
		case isDigit(c) || (c == '-' || c == '+' || c == '.') && i+1 < len(s) && isDigit(s[i+1]) && numberMayStart(out):
			t, n := number(s, i)
			out = append(out, t)
			i = n
		case isIdentStart(c):
			j := i
			for j < len(s) && isIdentChar(s[j]) {
				j++
			}
			word := s[i:j]
			// A UUID literal starts like an identifier when its first
			// hex digit is a letter (a0eebc99-...).
			if u, n, ok := uuidAt(s, i); ok {
				out = append(out, token{tokUUID, u, i})
				i = n
				continue
			}
			out = append(out, token{tokIdent, word, i})
			i = j
		default:
			two := ""
			if i+1 < len(s) {
				two = s[i : i+2]
			}
			switch two {
			case "<=", ">=", "!=":
				out = append(out, token{tokPunct, two, i})
				i += 2
				continue
			}
			if strings.IndexByte("(),;.*=<>?:[]{}+-", c) >= 0 {
				out = append(out, token{tokPunct, string(c), i})
				i++
				continue
			}
			return nil, &Error{i, fmt.Sprintf("unexpected character %q", c)}
		}
	}
	return append(out, token{tokEOF, "", len(s)}), nil
}

// numberMayStart: a sign or point starts a number only where a value may
// stand (after an operator, a comma or an opening bracket), not after a
// value (a - b is arithmetic, which is refused later as such).
func numberMayStart(prev []token) bool {
	if len(prev) == 0 {
		return true
	}
	p := prev[len(prev)-1]
	return p.kind == tokPunct && p.text != ")" && p.text != "]" && p.text != "}" || p.kind == tokIdent && isKeyword(p.text, "limit", "in")
}

// quoted reads a string or identifier opened by q at s[i], where a
// doubled q stands for one.
func quoted(s string, i int, q byte) (string, int, error) {
	var b strings.Builder
	j := i + 1
	for {
		k := strings.IndexByte(s[j:], q)
		if k < 0 {
			what := "string"
			if q == '"' {
				what = "quoted identifier"
			}
			return "", 0, &Error{i, fmt.Sprintf("a %s that does not end", what)}
		}
		b.WriteString(s[j : j+k])
		j += k + 1
		if j < len(s) && s[j] == q {
			b.WriteByte(q)
			j++
			continue
		}
		return b.String(), j, nil
	}
}

// number reads an integer, a float (with a fraction or an exponent) or a
// hex blob at s[i].
func number(s string, i int) (token, int) {
	j := i
	if s[j] == '-' || s[j] == '+' {
		j++
	}
	if s[j] == '0' && j+1 < len(s) && (s[j+1] == 'x' || s[j+1] == 'X') && j == i {
		k := j + 2
		for k < len(s) && isHex(s[k]) {
			k++
		}
		return token{tokHex, s[i:k], i}, k
	}
	if u, n, ok := uuidAt(s, i); ok {
		return token{tokUUID, u, i}, n
	}
	for j < len(s) && isDigit(s[j]) {
		j++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	return token{tokNumber, s[i:j], i}, j
}

// uuidAt reads a bare UUID (8-4-4-4-12 hex digits) at s[i].
func uuidAt(s string, i int) (string, int, bool) {
	const n = 36
	if i+n > len(s) {
		return "", 0, false
	}
	for k := 0; k < n; k++ {
		c := s[i+k]
		if k == 8 || k == 13 || k == 18 || k == 23 {
			if c != '-' {
				return "", 0, false
			}
		} else if !isHex(c) {
			return "", 0, false
		}
	}
	if i+n < len(s) && isIdentChar(s[i+n]) {
		return "", 0, false
	}
	return s[i : i+n], i + n, true
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isHex(c byte) bool        { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == '_' }

func isKeyword(word string, kws ...string) bool {
	for _, k := range kws {
		if strings.EqualFold(word, k) {
			return true
		}
	}
	return false
}
