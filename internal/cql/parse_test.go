package cql

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Select
	}{
		{"SELECT * FROM ks.t", Select{Keyspace: "ks", Table: "t"}},
		{"select A, \"Bee\", c from T;", Select{Columns: []string{"a", "Bee", "c"}, Table: "t"}},
		{"SELECT * FROM ks.t WHERE k = 1 AND c >= 'x''y' AND c < $$z$$ LIMIT 10", Select{Keyspace: "ks", Table: "t", Limit: 10, HasLimit: true,
			Where: []Relation{
				{Columns: []string{"k"}, Op: Eq, Values: []Literal{{Kind: LitNumber, Text: "1"}}},
				{Columns: []string{"c"}, Op: Ge, Values: []Literal{{Kind: LitString, Text: "x'y"}}},
				{Columns: []string{"c"}, Op: Lt, Values: []Literal{{Kind: LitString, Text: "z"}}},
			}}},
		{"SELECT * FROM t WHERE token(a, \"B\") > -9223372036854775808 AND token(a,\"B\") <= 0", Select{Table: "t",
			Where: []Relation{
				{Token: true, Columns: []string{"a", "B"}, Op: Gt, Values: []Literal{{Kind: LitNumber, Text: "-9223372036854775808"}}},
				{Token: true, Columns: []string{"a", "B"}, Op: Le, Values: []Literal{{Kind: LitNumber, Text: "0"}}},
			}}},
		{"SELECT * FROM t WHERE k IN (0xCAFE, 123e4567-e89b-12d3-a456-426614174000, a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11, true, -1.5e3, NaN, -Infinity)", Select{Table: "t",
			Where: []Relation{{Columns: []string{"k"}, Op: In, Values: []Literal{
				{Kind: LitHex, Text: "0xCAFE"}, {Kind: LitUUID, Text: "123e4567-e89b-12d3-a456-426614174000"},
				{Kind: LitUUID, Text: "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {Kind: LitBool, Text: "true"},
				{Kind: LitNumber, Text: "-1.5e3"}, {Kind: LitNumber, Text: "NaN"}, {Kind: LitNumber, Text: "-Infinity"}}}}}},
		{"SELECT * FROM t WHERE k IN ()", Select{Table: "t", Where: []Relation{{Columns: []string{"k"}, Op: In, Values: []Literal{}}}}},
		{"SELECT json, x FROM t -- a comment\n", Select{Table: "t", Columns: []string{"json", "x"}}},
	} {
		got, err := Parse(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(&tc.want, got, cmpopts.IgnoreFields(Relation{}, "Pos"), cmpopts.IgnoreFields(Literal{}, "Pos")); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.in, diff)
		}
	}
}

// Every construct CQL has and query does not is refused by name.
func TestParseRefusals(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT DISTINCT k FROM t":                          "SELECT DISTINCT is not supported",
		"SELECT JSON * FROM t":                              "SELECT JSON (use --json) is not supported",
		"SELECT count(*) FROM t":                            "the aggregate COUNT() is not supported",
		"SELECT writetime(v) FROM t":                        "WRITETIME() (explain",
		"SELECT token(k) FROM t":                            "the function token() in the selection",
		"SELECT v AS x FROM t":                              "AS (column aliases) is not supported",
		"SELECT * FROM t ORDER BY c DESC":                   "ORDER BY",
		"SELECT * FROM t GROUP BY k":                        "GROUP BY is not supported",
		"SELECT * FROM t PER PARTITION LIMIT 1":             "PER PARTITION LIMIT is not supported",
		"SELECT * FROM t WHERE v = 1 ALLOW FILTERING":       "ALLOW FILTERING is not supported",
		"SELECT * FROM t WHERE s CONTAINS 1":                "CONTAINS is not supported",
		"SELECT * FROM t WHERE s LIKE 'a%'":                 "LIKE is not supported",
		"SELECT * FROM t WHERE s IS NOT NULL":               "IS NOT NULL is not supported",
		"SELECT * FROM t WHERE k != 1":                      "!= is not supported",
		"SELECT * FROM t WHERE (a, b) > (1, 2)":             "multi-column relation",
		"SELECT * FROM t WHERE k = ?":                       "bind marker",
		"SELECT * FROM t WHERE k = :k":                      "bind marker",
		"SELECT * FROM t WHERE k = [1]":                     "collection, tuple or UDT literal",
		"SELECT * FROM t WHERE k = now()":                   "the function now() as a value",
		"SELECT * FROM t WHERE ttl(v) > 1":                  "the function ttl() in WHERE",
		"SELECT * FROM t WHERE token(k) IN (1)":             "token(...) IN",
		"SELECT * FROM t WHERE k = 1 OR k = 2":              "OR is not supported",
		"SELECT * FROM t WHERE m['a'] = 1":                  "collection element",
		"SELECT * FROM t WHERE k = 1 + 1":                   "arithmetic",
		"SELECT * FROM t BYPASS CACHE":                      "BYPASS CACHE",
		"INSERT INTO t (k) VALUES (1)":                      "only SELECT statements can be queried, not INSERT",
		"SELECT * FROM t LIMIT 0":                           "LIMIT must be a positive integer",
		"SELECT * FROM t LIMIT 1 WHERE k = 1":               "WHERE must come before LIMIT",
		"SELECT * FROM t WHERE k = 'abc":                    "a string that does not end",
		"SELECT * FROM t WHERE k = abc":                     "strings take single quotes",
		"SELECT * FROM where":                               "found the keyword WHERE",
		"SELECT * FROM t WHERE k = 1 extra":                 "expected the end of the statement",
		"SELECT * FROM t WHERE k @ 1":                       "unexpected character '@'",
		"SELECT m['a'] FROM t":                              "selecting an element",
		"SELECT * FROM t WHERE k = 1 LIMIT 1 LIMIT 2":       "LIMIT given twice",
		"SELECT * FROM t WHERE k = 1 WITH ann_options = {}": "WITH",
	} {
		_, err := Parse(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", in, err, want)
		}
	}
}

// FuzzParse: any input parses or fails with an Error, never panics, and a
// parsed statement's relations hold values for their operators.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"SELECT * FROM ks.t WHERE k = 1 AND c > 'a' LIMIT 3",
		"select a,b from t where token(k) >= -5 and k in (1, 2)", "SELECT * FROM t WHERE k = $$x$$;",
		"SELECT \"A\"\"b\" FROM \"t\" /* c */ WHERE k = 0x00", "SELECT * FROM t WHERE k = 123e4567-e89b-12d3-a456-426614174000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := Parse(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("%q: error of type %T: %v", s, err, err)
			}
			return
		}
		if sel.Table == "" {
			t.Fatalf("%q: no table", s)
		}
		for _, r := range sel.Where {
			if len(r.Columns) == 0 || r.Op != In && len(r.Values) != 1 {
				t.Fatalf("%q: relation %+v", s, r)
			}
		}
	})
}
