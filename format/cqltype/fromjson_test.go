package cqltype

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/format/vint"
)

// inverseTypes are the types the inverses are held to their renderers
// on: every kind, nested ones, and a UDT with a field name that is not
// lower case (printed wrapped in quotes).
var inverseTypes = append(append([]string{}, fuzzTypes...),
	"'"+m+"LexicalUUIDType'", "'"+m+"DateType'", "frozen<set<frozen<tuple<timestamp, time, date>>>>",
	"frozen<map<frozen<list<int>>, frozen<map<boolean, double>>>>", "frozen<map<float, inet>>",
	"frozen<map<time, tinyint>>", "tuple<duration, boolean, smallint>", "vector<bigint, 2>",
	"'"+m+"UserType(ks,75,6e616d65:"+m+"UTF8Type,4e616d65:"+m+"Int32Type,6e:"+m+"ListType("+m+"TimestampType))'",
	"'"+m+"FrozenType("+m+"UserType(ks,75,6e616d65:"+m+"UTF8Type,4e616d65:"+m+"Int32Type))'",
	"'"+m+"CompositeType("+m+"UTF8Type,"+m+"Int32Type,"+m+"BytesType)'",
	"'"+m+"DynamicCompositeType(s=>"+m+"UTF8Type,i=>"+m+"Int32Type)'",
)

func inverseTypeList(tb testing.TB) []*Type {
	out := make([]*Type, len(inverseTypes))
	for i, s := range inverseTypes {
		typ, err := ParseCQL(s)
		if err != nil {
			tb.Fatalf("ParseCQL(%q): %v", s, err)
		}
		out[i] = typ
	}
	return out
}

// invalid reports what makes v a value Cassandra's validation would refuse
// although AppendJSON or Format prints it, so that its text need not read
// back: a time outside one day, a duration of -2^63 nanoseconds (whose
// absolute value Java cannot print either), nested ones in elements.
// textual adds what only getString's text cannot carry: a backslash in
// a tuple field or vector element (the escapes have none for it), ", "
// in a vector element, a vector of collections, "_" as the last component of a composite (the
// end-of-component marker's text), the 0xFFFF static marker, and counters
// (their Format is hex, FromString reads a number).
func invalid(t *Type, v []byte, textual bool) bool {
	switch t.Kind {
	case Time:
		if len(v) == 8 {
			n := int64(binary.BigEndian.Uint64(v))
			return n < 0 || n >= 86400_000_000_000
		}
	case Duration:
		var f [3]int64
		off := 0
		for i := range f {
			x, n, err := vint.Signed(v[off:])
			if err != nil {
				return false
			}
			f[i], off = x, off+n
		}
		return f[2] == math.MinInt64
	case Counter:
		return textual
	case List, Set, Map, Tuple, UDT, Vector:
		if k := t.Params[0].Kind; textual && t.Kind == Vector && (k == List || k == Set || k == Map) {
			return true // its text is Java's collection toString, unquoted
		}
		es, err := t.Elements(v)
		if err != nil {
			return false
		}
		for i, e := range es {
			p := t.Params[0]
			switch {
			case t.Kind == Map:
				p = t.Params[i%2]
			case t.Kind == Tuple || t.Kind == UDT:
				p = t.Params[i]
			}
			if e != nil && invalid(p, e, textual) {
				return true
			}
			if textual && (t.Kind == Tuple || t.Kind == UDT || t.Kind == Vector) && e != nil {
				s, err := p.Format(e)
				if err == nil && (strings.Contains(s, `\`) || (t.Kind == Vector && strings.Contains(s, ", "))) {
					return true
				}
			}
		}
	case Composite, DynamicComposite:
		comps, static, err := t.Components(v)
		if err != nil {
			return false
		}
		if static && textual {
			return true
		}
		for i, c := range comps {
			if invalid(c.Type, c.Value, textual) {
				return true
			}
			if s, err := c.Type.Format(c.Value); err == nil && textual && i == len(comps)-1 && s == "_" {
				return true
			}
		}
	}
	return false
}

// checkFromJSON holds FromJSON to AppendJSON for one value: whatever
// AppendJSON prints reads back to bytes that AppendJSON prints the same.
func checkFromJSON(t *testing.T, typ *Type, v []byte) {
	t.Helper()
	text, err := typ.AppendJSON(nil, v)
	if err != nil || invalid(typ, v, false) {
		return
	}
	back, err := typ.FromJSON(text)
	if err != nil {
		t.Fatalf("%s: FromJSON(%s) (of %x): %v", typ.CQL(), text, v, err)
	}
	again, err := typ.AppendJSON(nil, back)
	if err != nil || !bytes.Equal(again, text) {
		t.Fatalf("%s: %x prints %s; FromJSON gives %x, which prints %s (%v)", typ.CQL(), v, text, back, again, err)
	}
}

// checkFromString holds FromString to Format the same way.
func checkFromString(t *testing.T, typ *Type, v []byte) {
	t.Helper()
	text, err := typ.Format(v)
	if err != nil || invalid(typ, v, true) {
		return
	}
	back, err := typ.FromString(text)
	if err != nil {
		t.Fatalf("%s: FromString(%q) (of %x): %v", typ.CQL(), text, v, err)
	}
	again, err := typ.Format(back)
	if err != nil || again != text {
		t.Fatalf("%s: %x formats as %q; FromString gives %x, which formats as %q (%v)", typ.CQL(), v, text, back, again, err)
	}
}

// TestInversesOnKnownValues runs every known value (and its prefixes)
// of every type through both inverses, then random values of the widths
// the types take.
func TestInversesOnKnownValues(t *testing.T) {
	for _, c := range append(append([]valueCase{}, hasAllTypesCases...), otherValueCases...) {
		typ := cqlType(t, c.typ)
		for n := 0; n <= len(c.value); n++ {
			checkFromJSON(t, typ, c.value[:n])
			checkFromString(t, typ, c.value[:n])
		}
		if c.json != "" {
			back, err := typ.FromJSON([]byte(c.json))
			if err != nil {
				t.Fatalf("%s: FromJSON(%s): %v", c.typ, c.json, err)
			}
			if again, _ := typ.AppendJSON(nil, back); string(again) != c.json {
				t.Errorf("%s: FromJSON(%s) = %x, which prints %s", c.typ, c.json, back, again)
			}
		}
	}
	rng := rand.New(rand.NewSource(7))
	for _, typ := range inverseTypeList(t) {
		for i := 0; i < 3000; i++ {
			v := make([]byte, []int{1, 2, 4, 8, 16, rng.Intn(40)}[rng.Intn(6)])
			rng.Read(v)
			checkFromJSON(t, typ, v)
			checkFromString(t, typ, v)
		}
	}
}

// TestInversesOfComposedValues builds values of the nested types from
// parts, which random bytes almost never are.
func TestInversesOfComposedValues(t *testing.T) {
	elem := func(b []byte) []byte { return appendElem(nil, b, b == nil) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	cases := []struct {
		typ   string
		value []byte
	}{
		{"frozen<list<int>>", cat(be32(3), elem(be32(1)), elem(nil), elem([]byte{}))},
		{"frozen<set<text>>", cat(be32(2), elem([]byte("a\"b\\c\n")), elem([]byte("é€")))},
		{"frozen<map<int, frozen<list<text>>>>", cat(be32(2), elem(be32(-5)), elem(cat(be32(1), elem([]byte("x")))), elem([]byte{}), elem(nil))},
		{"frozen<map<frozen<list<int>>, frozen<map<boolean, double>>>>", cat(be32(1), elem(cat(be32(1), elem(be32(7)))), elem(cat(be32(1), elem([]byte{1}), elem(binary.BigEndian.AppendUint64(nil, math.Float64bits(math.Inf(1)))))))},
		{"frozen<map<float, inet>>", cat(be32(2), elem(u32(math.Float32bits(float32(math.NaN())))), elem([]byte{10, 0, 0, 1}), elem(u32(math.Float32bits(1.5))), elem(net16()))},
		{"frozen<map<time, tinyint>>", cat(be32(2), elem([]byte{}), elem([]byte{0x80}), elem(be64(3_600_000_000_123)), elem([]byte{1}))},
		{"tuple<int, text, frozen<map<text, int>>>", cat(elem(be32(1)), elem([]byte("a:b@c")), elem(cat(be32(1), elem([]byte("k")), elem(be32(2)))))},
		{"tuple<int, text, frozen<map<text, int>>>", cat(elem(be32(1)))},
		{"tuple<int, text, frozen<map<text, int>>>", cat(elem(nil), elem([]byte("@")), elem(nil))},
		{"frozen<set<frozen<tuple<timestamp, time, date>>>>", cat(be32(1), elem(cat(elem(be64(-62_167_219_200_000-86_400_000)), elem(be64(86_399_999_999_999)), elem(u32(1<<31+3_000_000)))))},
		{"frozen<list<frozen<tuple<decimal, varint, duration>>>>", cat(be32(1), elem(cat(elem(cat(be32(14), []byte{1})), elem([]byte{0xff, 0x01}), elem(durationValue(-14, -3, -5_000_000_001)))))},
		{"vector<text, 2>", cat([]byte{1}, []byte("a"), []byte{2}, []byte("bc"))},
		{"vector<float, 3>", cat(u32(math.Float32bits(1)), u32(math.Float32bits(float32(math.Copysign(0, -1)))), u32(math.Float32bits(3.25e-20)))},
		{"'" + m + "CompositeType(" + m + "UTF8Type," + m + "Int32Type," + m + "BytesType)'", cat([]byte{0, 3}, []byte("a:\\"), []byte{0}, []byte{0, 4}, be32(9), []byte{0xff})},
		{"'" + m + "CompositeType(" + m + "UTF8Type," + m + "Int32Type," + m + "BytesType)'", cat([]byte{0, 2}, []byte("x!"), []byte{1})},
		{"'" + m + "DynamicCompositeType(s=>" + m + "UTF8Type,i=>" + m + "Int32Type)'", cat([]byte{0x80, 's', 0, 1, 'a', 0}, []byte{0x80, 'i', 0, 4}, be32(3), []byte{0})},
		{"'" + m + "UserType(ks,75,6e616d65:" + m + "UTF8Type,4e616d65:" + m + "Int32Type,6e:" + m + "ListType(" + m + "TimestampType))'", cat(elem([]byte("n")), elem(be32(3)), elem(nil))},
	}
	for _, c := range cases {
		typ := cqlType(t, c.typ)
		if _, err := typ.AppendJSON(nil, c.value); err != nil {
			t.Fatalf("%s: the test value %x does not print: %v", c.typ, c.value, err)
		}
		checkFromJSON(t, typ, c.value)
		checkFromString(t, typ, c.value)
	}
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

func net16() []byte {
	b, _ := hex.DecodeString("20010db8000000000000000000000001")
	return b
}

func durationValue(months, days, nanos int64) []byte {
	return vint.AppendSigned(vint.AppendSigned(vint.AppendSigned(nil, months), days), nanos)
}

// TestFromJSONChoices pins the values FromJSON picks where the text does
// not tell values apart, and what it reads the calendars' edges as.
func TestFromJSONChoices(t *testing.T) {
	ms := func(v int64) string { return hex.EncodeToString(be64(v)) }
	for _, c := range []struct{ typ, json, want string }{
		{"double", `null`, "7ff8000000000000"},
		{"float", `null`, "7fc00000"},
		{"int", `""`, ""},
		{"duration", `""`, ""},
		{"boolean", `true`, "01"},
		{"inet", `"127.0.0.1"`, "7f000001"},
		{"timestamp", `"0001-01-01 00:00:00.000Z"`, ms(-719164 * 86400000)},   // Julian 0001-01-01, of the common era
		{"timestamp", `"1582-10-04 23:59:59.999Z"`, ms(-141427*86400000 - 1)}, // the last Julian millisecond
		{"timestamp", `"1582-10-15 00:00:00.000Z"`, ms(-141427 * 86400000)},   // the first Gregorian one
		{"timestamp", `"2023-07-21 09:33:34.395Z"`, ms(1689932014395)},
		{"date", `"+5881580-07-11"`, "ffffffff"},                // the last date
		{"date", `"-5877641-06-23"`, "00000000"},                // the first
		{"decimal", `1E-14`, "0000000e01"},                      // unscaled 1, scale 14
		{"decimal", `-1.50E+3`, "ffffffffff6a"},                 // unscaled -150, scale -1
		{"tuple<int, text>", `[1]`, "0000000400000001ffffffff"}, // absent fields are null
		{"frozen<map<int, text>>", `{"1": "a"}`, "000000010000000400000001000000016" + "1"},
	} {
		typ := cqlType(t, c.typ)
		got, err := typ.FromJSON([]byte(c.json))
		if err != nil {
			t.Fatalf("%s FromJSON(%s): %v", c.typ, c.json, err)
		}
		if hex.EncodeToString(got) != c.want {
			t.Errorf("%s FromJSON(%s) = %x, want %s", c.typ, c.json, got, c.want)
		}
	}
}

// TestFromJSONErrorsSayWhatWasExpected: a wrong value names the type, what
// it expected and what it found.
func TestFromJSONErrorsSayWhatWasExpected(t *testing.T) {
	for _, c := range []struct{ typ, json, want string }{
		{"int", `"12"`, `expected a 32-bit integer for a int value, found "12"`},
		{"int", `4294967296`, `expected a 32-bit integer for a int value, found 4294967296`},
		{"text", `12`, `expected a JSON string for a text value, found 12`},
		{"blob", `"12"`, `expected a JSON string "0x" and hex digits for a blob value, found "12"`},
		{"timestamp", `"2020-02-30 00:00:00.000Z"`, `expected a timestamp "yyyy-MM-dd HH:mm:ss.SSSZ" for a timestamp value`},
		{"frozen<list<int>>", `[1, "a"]`, `element 1: expected a 32-bit integer for a int value, found "a"`},
		{"frozen<list<int>>", `[1, 2`, `expected a JSON array for a frozen<list<int>> value, found [1, 2`},
		{"vector<float, 3>", `[1, 2]`, `expected a JSON array of 3 elements for a vector<float, 3> value`},
		{"double", `NaN`, `expected a number or null for a double value, found NaN`},
	} {
		_, err := cqlType(t, c.typ).FromJSON([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s FromJSON(%s) = %v, want an error containing %q", c.typ, c.json, err, c.want)
		}
	}
}

// FuzzFromJSONInvertsAppendJSON: for any bytes of any of the types,
// whatever AppendJSON prints reads back to bytes it prints the same; and
// FromJSON on arbitrary text never panics.
func FuzzFromJSONInvertsAppendJSON(f *testing.F) {
	types := inverseTypeList(f)
	for i := range types {
		f.Add(uint8(i), []byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1})
	}
	f.Add(uint8(0), []byte(`[1, {"a": null}]`))
	f.Fuzz(func(t *testing.T, which uint8, v []byte) {
		typ := types[int(which)%len(types)]
		checkFromJSON(t, typ, v)
		typ.FromJSON(v) // arbitrary text: an error or a value, never a panic
	})
}

// FuzzFromStringInvertsFormat holds FromString to Format the same way.
func FuzzFromStringInvertsFormat(f *testing.F) {
	types := inverseTypeList(f)
	for i := range types {
		f.Add(uint8(i), []byte{0, 0, 0, 1, 0, 0, 0, 4, 0, 0, 0, 1})
	}
	f.Add(uint8(0), []byte(`a:b\:c:@`))
	f.Fuzz(func(t *testing.T, which uint8, v []byte) {
		typ := types[int(which)%len(types)]
		checkFromString(t, typ, v)
		typ.FromString(string(v))
	})
}
