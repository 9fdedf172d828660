package query

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/internal/format/vint"
)

func cqlType(t *testing.T, s string) *cqltype.Type {
	t.Helper()
	typ, err := cqltype.ParseCQL(s)
	if err != nil {
		t.Fatal(err)
	}
	return typ
}

func be64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// frozen serializes elements as a collection, tuple or UDT value.
func frozen(count bool, elems ...[]byte) []byte {
	var b []byte
	if count {
		b = be32(uint32(len(elems)))
	}
	for _, e := range elems {
		if e == nil {
			b = append(b, 0xff, 0xff, 0xff, 0xff)
			continue
		}
		b = append(append(b, be32(uint32(len(e)))...), e...)
	}
	return b
}

// Values as cqlsh's formatting.py prints them with cqlsh's defaults
// (float and double precision 5, UTC timestamps with microseconds).
func TestFormatLikeCqlsh(t *testing.T) {
	dur := vint.AppendSigned(vint.AppendSigned(vint.AppendSigned(nil, 14), 3), 3600e9+5)
	for _, tc := range []struct {
		typ  string
		v    []byte
		want string
	}{
		{"text", []byte(`it's a \ test`), `it's a \\ test`},
		{"ascii", []byte("tab\there"), `tab\x09here`},
		{"blob", []byte{0xca, 0xfe}, "0xcafe"},
		{"boolean", []byte{1}, "True"},
		{"boolean", []byte{0}, "False"},
		{"int", be32(uint32(0xffffffff)), "-1"},
		{"bigint", be64(1 << 40), "1099511627776"},
		{"double", be64(math.Float64bits(3.14159265)), "3.14159"},
		{"double", be64(math.Float64bits(1234567.891)), "1.2346e+06"},
		{"double", be64(math.Float64bits(0.000123456)), "0.000123"},
		{"double", be64(math.Float64bits(-0.5)), "-0.5"},
		{"float", be32(math.Float32bits(0.1)), "0.1"},
		{"double", be64(math.Float64bits(math.Inf(-1))), "-Infinity"},
		{"decimal", append(be32(2), 0x30, 0x39), "123.45"},
		{"decimal", append(be32(uint32(0xfffffffd)), 0x30, 0x39), "1.2345E+7"},
		{"decimal", append(be32(10), 0x01), "1E-10"},
		{"decimal", append(be32(3), 0xff), "-0.001"},
		{"timestamp", be64(0), "1970-01-01 00:00:00.000000+0000"},
		{"timestamp", be64(1704067200500), "2024-01-01 00:00:00.500000+0000"},
		{"date", be32(1 << 31), "1970-01-01"},
		{"time", be64(3723000000001), "01:02:03.000000001"},
		{"duration", dur, "1y2mo3d1h5ns"},
		{"uuid", bytes.Repeat([]byte{0xab}, 16), "abababab-abab-abab-abab-abababababab"},
		{"inet", []byte{10, 0, 0, 1}, "10.0.0.1"},
		{"frozen<list<text>>", frozen(true, []byte("a"), []byte("it's")), "['a', 'it''s']"},
		{"frozen<map<text, int>>", append(be32(1), frozen(false, []byte("a"), be32(1))...), "{'a': 1}"},
		{"frozen<set<timestamp>>", frozen(true, be64(0)), "{'1970-01-01 00:00:00.000000+0000'}"},
		{"frozen<tuple<int, text>>", frozen(false, be32(1), nil), "(1, null)"},
		{"int", []byte{}, ""},
	} {
		c := Column{Name: "c", Type: cqlType(t, tc.typ)}
		if got := FormatValue(Value{Column: &c, Bytes: tc.v}); got != tc.want {
			t.Errorf("%s %x: %q, want %q", tc.typ, tc.v, got, tc.want)
		}
	}
	// Non-frozen collections from their cells.
	set := Column{Name: "s", Type: cqlType(t, "set<text>")}
	cells := []rows.Cell{{Path: []byte("x")}, {Path: []byte("y")}}
	if got := FormatValue(Value{Column: &set, Cells: cells}); got != "{'x', 'y'}" {
		t.Errorf("set: %q", got)
	}
	m := Column{Name: "m", Type: cqlType(t, "map<int, text>")}
	if got := FormatValue(Value{Column: &m, Cells: []rows.Cell{{Path: be32(7), Value: []byte("v")}}}); got != "{7: 'v'}" {
		t.Errorf("map: %q", got)
	}
	if got := string(AppendJSON(nil, Row{{Column: &m, Cells: []rows.Cell{{Path: be32(7), Value: []byte("v")}}}, {Column: &set, Null: true}})); got != `{"m": {"7": "v"}, "s": null}` {
		t.Errorf("json: %s", got)
	}
}

// The table layout of cqlsh's print_formatted_result, as piped cqlsh
// -e prints it: names left-aligned, values right-aligned, a header only
// on the first page of 100 rows, each page with its own widths.
func TestTableLayout(t *testing.T) {
	a := Column{Name: "key", Type: cqlType(t, "int")}
	b := Column{Name: "v", Type: cqlType(t, "text")}
	var out strings.Builder
	tbl := NewTable(&out, []Column{a, b})
	for i := 0; i < 101; i++ {
		v := "x"
		if i == 100 {
			v = "longer"
		}
		if err := tbl.Add(Row{{Column: &a, Bytes: be32(uint32(i))}, {Column: &b, Bytes: []byte(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tbl.End(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	if lines[0] != "" || lines[1] != " key | v" || lines[2] != "-----+---" || lines[3] != "   0 | x" || lines[102] != "  99 | x" ||
		lines[103] != " 100 | longer" || lines[104] != "" || lines[105] != "(101 rows)" {
		t.Fatalf("layout:\n%s", out.String())
	}
	out.Reset()
	tbl = NewTable(&out, []Column{a, b})
	tbl.End()
	if out.String() != "\n key | v\n-----+---\n\n\n(0 rows)\n" {
		t.Fatalf("no rows: %q", out.String())
	}
}
