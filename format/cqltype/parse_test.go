package cqltype

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
)

const m = marshalPrefix

// typeStringRe finds AbstractType strings inside a Statistics.db file: the
// serialization header stores each as a length-prefixed UTF-8 string.
var typeStringRe = regexp.MustCompile(`org\.apache\.cassandra\.db\.marshal\.[A-Za-z0-9_.,:()=> +&-]*`)

// fixtureTypeStrings pulls the type strings out of every fixture
// Statistics.db, trimming each to its balanced extent.
func fixtureTypeStrings(t *testing.T) []string {
	t.Helper()
	root := filepath.Join(fixtures.Dir(t), "cassandra")
	seen := map[string]bool{}
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || !strings.HasSuffix(p, "-Statistics.db") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, loc := range typeStringRe.FindAllIndex(b, -1) {
			// The byte before the string's first byte is the low byte of
			// its unsigned-vint length: use it to cut the exact string.
			s := b[loc[0]:loc[1]]
			if loc[0] >= 1 {
				if n := int(b[loc[0]-1]); n <= len(s) && n > len(m) {
					s = s[:n]
				}
			}
			seen[string(s)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func TestParseFixtureHeaders(t *testing.T) {
	strs := fixtureTypeStrings(t)
	if len(strs) < 5 {
		t.Fatalf("found only %d type strings in fixture Statistics.db files: %q", len(strs), strs)
	}
	want := map[string]string{
		m + "Int32Type":                                      "int",
		m + "UTF8Type":                                       "text",
		m + "AsciiType":                                      "ascii",
		m + "CounterColumnType":                              "counter",
		m + "ListType(" + m + "Int32Type)":                   "list<int>",
		m + "SetType(" + m + "Int32Type)":                    "set<int>",
		m + "SetType(" + m + "BooleanType)":                  "set<boolean>",
		m + "MapType(" + m + "Int32Type," + m + "Int32Type)": "map<int, int>",
	}
	found := 0
	for _, s := range strs {
		typ, err := Parse(s)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		if typ.String() != s {
			t.Errorf("String() = %q, want %q", typ.String(), s)
		}
		if w, ok := want[s]; ok {
			found++
			if got := typ.CQL(); got != w {
				t.Errorf("CQL(%q) = %q, want %q", s, got, w)
			}
		}
	}
	if found != len(want) {
		t.Errorf("fixtures held %d of the %d expected type strings: %q", found, len(want), strs)
	}
}

func TestParseFixtureCollectionsAreMultiCell(t *testing.T) {
	dir := fixtures.Table(t, "me-collections", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91")
	b, err := os.ReadFile(filepath.Join(dir, "me-1-big-Statistics.db"))
	if err != nil {
		t.Fatal(err)
	}
	s := m + "MapType(" + m + "Int32Type," + m + "Int32Type)"
	if !bytes.Contains(b, []byte(s)) {
		t.Fatalf("Statistics.db does not hold %q", s)
	}
	typ, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if typ.Kind != Map || !typ.IsMultiCell() || typ.Frozen {
		t.Fatalf("map column: kind %v multiCell %v frozen %v", typ.Kind, typ.IsMultiCell(), typ.Frozen)
	}
	if k := typ.ElementPathType(); k == nil || k.Kind != Int {
		t.Errorf("path type %v, want int", k)
	}
	if v := typ.ElementValueType(); v == nil || v.Kind != Int {
		t.Errorf("value type %v, want int", v)
	}
}

func TestParseEveryKind(t *testing.T) {
	hexName := func(s string) string { return strings.ToLower(strings.ToUpper(hexString(s))) }
	udt := m + "UserType(ks," + hexName("address") + "," + hexName("city") + ":" + m + "UTF8Type," +
		hexName("zip") + ":" + m + "Int32Type)"
	cases := []struct {
		in       string
		kind     Kind
		cql      string
		fixed    int
		multi    bool
		frozen   bool
		reversed bool
	}{
		{m + "AsciiType", Ascii, "ascii", -1, false, false, false},
		{m + "LongType", Bigint, "bigint", 8, false, false, false},
		{m + "BytesType", Blob, "blob", -1, false, false, false},
		{m + "BooleanType", Boolean, "boolean", 1, false, false, false},
		{m + "CounterColumnType", Counter, "counter", -1, false, false, false},
		{m + "SimpleDateType", Date, "date", -1, false, false, false},
		{m + "DecimalType", Decimal, "decimal", -1, false, false, false},
		{m + "DoubleType", Double, "double", 8, false, false, false},
		{m + "DurationType", Duration, "duration", -1, false, false, false},
		{m + "EmptyType", Empty, "empty", 0, false, false, false},
		{m + "FloatType", Float, "float", 4, false, false, false},
		{m + "InetAddressType", Inet, "inet", -1, false, false, false},
		{m + "Int32Type", Int, "int", 4, false, false, false},
		{m + "ShortType", SmallInt, "smallint", -1, false, false, false},
		{m + "UTF8Type", Text, "text", -1, false, false, false},
		{m + "TimeType", Time, "time", -1, false, false, false},
		{m + "TimestampType", Timestamp, "timestamp", 8, false, false, false},
		{m + "DateType", Timestamp, "timestamp", 8, false, false, false},
		{m + "TimeUUIDType", TimeUUID, "timeuuid", 16, false, false, false},
		{m + "ByteType", TinyInt, "tinyint", -1, false, false, false},
		{m + "UUIDType", UUID, "uuid", 16, false, false, false},
		{m + "IntegerType", Varint, "varint", -1, false, false, false},
		{"Int32Type", Int, "int", 4, false, false, false},
		{m + "LexicalUUIDType", Custom, "'" + m + "LexicalUUIDType'", 16, false, false, false},
		{"com.example.MyType", Custom, "'com.example.MyType'", -1, false, false, false},
		{m + "ReversedType(" + m + "Int32Type)", Int, "int", 4, false, false, true},
		{m + "ListType(" + m + "Int32Type)", List, "list<int>", -1, true, false, false},
		{m + "FrozenType(" + m + "ListType(" + m + "Int32Type))", List, "frozen<list<int>>", -1, false, true, false},
		{m + "SetType(" + m + "UTF8Type)", Set, "set<text>", -1, true, false, false},
		{m + "MapType(" + m + "Int32Type," + m + "UTF8Type)", Map, "map<int, text>", -1, true, false, false},
		{m + "FrozenType(" + m + "MapType(" + m + "UTF8Type," + m + "Int32Type))", Map, "frozen<map<text, int>>", -1, false, true, false},
		{m + "ListType(" + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)))", List, "list<frozen<list<int>>>", -1, true, false, false},
		{m + "TupleType(" + m + "Int32Type," + m + "UTF8Type)", Tuple, "frozen<tuple<int, text>>", -1, false, true, false},
		{udt, UDT, "address", -1, true, false, false},
		{m + "FrozenType(" + udt + ")", UDT, "frozen<address>", -1, false, true, false},
		{m + "SetType(" + m + "FrozenType(" + udt + "))", Set, "set<frozen<address>>", -1, true, false, false},
		{m + "VectorType(" + m + "FloatType,3)", Vector, "vector<float, 3>", 12, false, false, false},
		{m + "VectorType(" + m + "FloatType , 3)", Vector, "vector<float, 3>", 12, false, false, false},
		{m + "VectorType(" + m + "UTF8Type,2)", Vector, "vector<text, 2>", -1, false, false, false},
		{m + "CompositeType(" + m + "UTF8Type," + m + "Int32Type)", Composite, "'" + m + "CompositeType(" + m + "UTF8Type," + m + "Int32Type)'", -1, false, false, false},
		{m + "DynamicCompositeType(a=>" + m + "AsciiType,b=>" + m + "BytesType)", DynamicComposite, "'" + m + "DynamicCompositeType(a=>" + m + "AsciiType,b=>" + m + "BytesType)'", -1, false, false, false},
		{m + "ReversedType(" + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)))", List, "frozen<list<int>>", -1, false, true, true},
		{m + "PartitionerDefinedOrder(org.apache.cassandra.dht.Murmur3Partitioner)", Custom, "'" + m + "PartitionerDefinedOrder(org.apache.cassandra.dht.Murmur3Partitioner)'", -1, false, false, false},
		{" " + m + "ListType( " + m + "Int32Type )", List, "list<int>", -1, true, false, false},
	}
	for _, c := range cases {
		typ, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if typ.String() != c.in {
			t.Errorf("String() = %q, want %q", typ.String(), c.in)
		}
		if typ.Kind != c.kind || typ.CQL() != c.cql || typ.FixedLength() != c.fixed ||
			typ.IsMultiCell() != c.multi || typ.Frozen != c.frozen || typ.Reversed != c.reversed {
			t.Errorf("Parse(%q) = kind %v cql %q fixed %d multi %v frozen %v reversed %v; want %v %q %d %v %v %v",
				c.in, typ.Kind, typ.CQL(), typ.FixedLength(), typ.IsMultiCell(), typ.Frozen, typ.Reversed,
				c.kind, c.cql, c.fixed, c.multi, c.frozen, c.reversed)
		}
	}
}

func TestParseUDTDetails(t *testing.T) {
	s := m + "UserType(ks,61646472657373,63697479:" + m + "UTF8Type,7a6970:" + m + "ListType(" + m + "Int32Type))"
	typ, err := Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	if typ.Keyspace != "ks" || typ.Name != "address" || strings.Join(typ.FieldNames, ",") != "city,zip" {
		t.Fatalf("got keyspace %q name %q fields %q", typ.Keyspace, typ.Name, typ.FieldNames)
	}
	if typ.Params[1].Class != m+"ListType("+m+"Int32Type)" {
		t.Errorf("field class %q", typ.Params[1].Class)
	}
	if p := typ.ElementPathType(); p == nil || p.Kind != SmallInt {
		t.Errorf("UDT path type %v, want smallint", p)
	}
	if ft := typ.FieldType(0); ft == nil || ft.Kind != Text {
		t.Errorf("field 0 type %v", ft)
	}
	fz, err := Parse(m + "FrozenType(" + s + ")")
	if err != nil {
		t.Fatal(err)
	}
	if !fz.Params[1].Frozen || fz.Params[1].IsMultiCell() {
		t.Errorf("list field of a frozen UDT should be frozen")
	}
	if typ.Params[1].Frozen {
		t.Errorf("parsing the frozen form must not change the earlier result")
	}
}

func TestParseErrors(t *testing.T) {
	bad := []string{
		"",
		"   ",
		m + "ListType",
		m + "ListType(",
		m + "ListType(" + m + "Int32Type",
		m + "ListType(" + m + "Int32Type," + m + "Int32Type)",
		m + "MapType(" + m + "Int32Type)",
		m + "Int32Type)",
		m + "UserType(ks,zz,61:" + m + "Int32Type)",
		m + "UserType(ks,61,6:" + m + "Int32Type)",
		m + "UserType(ks,61,61" + m + "Int32Type)",
		m + "VectorType(" + m + "FloatType,0)",
		m + "VectorType(" + m + "FloatType)",
		m + "DynamicCompositeType(ab=>" + m + "Int32Type)",
		m + "DynamicCompositeType(a>" + m + "Int32Type)",
		strings.Repeat(m+"ListType(", 100) + m + "Int32Type" + strings.Repeat(")", 100),
		m + "ListType(,," + m + "Int32Type)",
	}
	for _, s := range bad {
		typ, err := Parse(s)
		if err == nil {
			t.Errorf("Parse(%q) = %v, want an error", s, typ.Class)
			continue
		}
		if _, ok := err.(*ParseError); !ok {
			t.Errorf("Parse(%q) error %T, want *ParseError", s, err)
		}
	}
}

func hexString(s string) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(digits[s[i]>>4])
		b.WriteByte(digits[s[i]&15])
	}
	return b.String()
}

func FuzzParse(f *testing.F) {
	f.Add(m + "MapType(" + m + "Int32Type," + m + "UTF8Type)")
	f.Add(m + "FrozenType(" + m + "UserType(ks,61,62:" + m + "ListType(" + m + "Int32Type)))")
	f.Add(m + "VectorType(" + m + "FloatType , 3)")
	f.Add(m + "DynamicCompositeType(a=>" + m + "AsciiType)")
	f.Add("ReversedType(TupleType(Int32Type,UTF8Type))")
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := Parse(s)
		if err != nil {
			return
		}
		if typ.String() != s {
			t.Fatalf("String() = %q, want %q", typ.String(), s)
		}
		_ = typ.CQL()
		_ = typ.FixedLength()
		// Types without user types or custom classes survive a trip
		// through CQL syntax: same CQL, same class string as Cassandra
		// would write it.
		if !hasKind(typ, Custom, Composite, DynamicComposite, UDT) {
			back, err := ParseCQL(typ.CQL())
			if err != nil {
				t.Fatalf("ParseCQL(%q) from %q: %v", typ.CQL(), s, err)
			}
			if back.CQL() != typ.CQL() || back.IsMultiCell() != typ.IsMultiCell() {
				t.Fatalf("ParseCQL(%q).CQL() = %q", typ.CQL(), back.CQL())
			}
			if !typ.Reversed && back.String() != canonical(typ) {
				t.Fatalf("ParseCQL(%q).String() = %q, canonical %q", typ.CQL(), back.String(), canonical(typ))
			}
		}
	})
}

func hasKind(t *Type, kinds ...Kind) bool {
	for _, k := range kinds {
		if t.Kind == k {
			return true
		}
	}
	for _, p := range t.Params {
		if hasKind(p, kinds...) {
			return true
		}
	}
	return false
}

func FuzzParseCQL(f *testing.F) {
	for _, s := range []string{"frozen<map<text, list<int>>>", "tuple<int, 'Int32Type'>", "vector<float, 3>", "ks.\"Addr\"", "list<frozen<address>>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typ, err := ParseCQL(s)
		if err != nil {
			var ce *CQLError
			var pe *ParseError
			if !errors.As(err, &ce) && !errors.As(err, &pe) {
				t.Fatalf("error %T %v", err, err)
			}
			return
		}
		if typ.Kind == UDT || hasKind(typ, UDT) {
			return
		}
		back, err := Parse(typ.String())
		if err != nil {
			t.Fatalf("Parse(%q) of ParseCQL(%q): %v", typ.String(), s, err)
		}
		if back.CQL() != typ.CQL() {
			t.Fatalf("Parse(%q).CQL() = %q, want %q", typ.String(), back.CQL(), typ.CQL())
		}
	})
}

func FuzzParseSchema(f *testing.F) {
	f.Add("CREATE TYPE a (x int, y frozen<list<text>>); CREATE TABLE k.t (p int, c text, s a static, v frozen<a>, PRIMARY KEY ((p), c)) WITH CLUSTERING ORDER BY (c DESC) AND comment = 'x';")
	f.Add("CREATE TABLE t (k int PRIMARY KEY, v map<text, int>) WITH COMPACT STORAGE;")
	f.Add("CREATE TABLE k.t (p int, c text, v int, PRIMARY KEY (p, c)); ALTER TABLE k.t DROP v USING TIMESTAMP 1; ALTER TABLE IF EXISTS k.t ADD (w set<int>, x text static);" +
		"CREATE MATERIALIZED VIEW k.m AS SELECT p, c FROM k.t WHERE c IS NOT NULL AND p > 'x;' PRIMARY KEY (c, p) WITH CLUSTERING ORDER BY (p DESC);" +
		"CREATE FUNCTION k.f(a int) RETURNS NULL ON NULL INPUT RETURNS int LANGUAGE java AS $$ return a; $$;")
	f.Add("CREATE TABLE k.t (p int PRIMARY KEY, m map<text, int>, v text); CREATE INDEX ON k.t (keys(m)); CREATE INDEX IF NOT EXISTS i ON k.t (v) USING 'sai';" +
		"CREATE CUSTOM INDEX k.s ON k.t (v) USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'mode': 'CONTAINS'};")
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseSchema(s)
		if err != nil {
			return
		}
		for _, ts := range sc.Tables {
			if len(ts.PartitionKey) == 0 {
				t.Fatalf("table %s without a partition key", ts.Table)
			}
			for _, c := range ts.Columns {
				if c.Type == nil || c.Type.String() == "" {
					t.Fatalf("column %s without a type", c.Name)
				}
			}
			for _, ix := range ts.Indexes {
				if ix.Name == "" || ix.Kind == "CUSTOM" && ix.Options["class_name"] == "" || ix.Kind != "CUSTOM" && ix.Target() == "" {
					t.Fatalf("index %+v of %s", ix, ts.Name())
				}
				ix.Implementation()
			}
		}
	})
}
