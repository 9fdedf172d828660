package dump

import (
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// cqlLiteral follows CQL3Type.toCQLLiteral (Cassandra 5.0): the literal a
// user would type in cqlsh for each clustering value sstabledump -d shows.
func TestCQLLiteral(t *testing.T) {
	typ := func(class string) *cqltype.Type {
		t.Helper()
		ty, err := cqltype.Parse(class)
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
	elem := func(b ...byte) []byte { return append([]byte{0, 0, 0, byte(len(b))}, b...) }
	cat := func(parts ...[]byte) []byte {
		var out []byte
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	const m = "org.apache.cassandra.db.marshal."
	cases := []struct {
		class string
		v     []byte
		want  string
	}{
		{m + "UTF8Type", []byte("it's"), "'it''s'"},
		{m + "UTF8Type", []byte{}, "''"},
		{m + "BytesType", []byte{0xca, 0xfe}, "0xcafe"},
		{m + "BytesType", []byte{}, "0x"},
		{m + "Int32Type", []byte{0, 0, 1, 0}, "256"},
		{m + "Int32Type", []byte{}, "null"},
		{m + "Int32Type", nil, "null"},
		{m + "InetAddressType", []byte{10, 0, 0, 1}, "'10.0.0.1'"},
		{m + "TimestampType", []byte{0, 0, 0, 0, 0, 0, 0, 0}, "'1970-01-01T00:00:00.000Z'"},
		{m + "ReversedType(" + m + "Int32Type)", []byte{0, 0, 0, 7}, "7"},
		{"org.example.Unknown", []byte{1}, "0x01"},
		{m + "FrozenType(" + m + "ListType(" + m + "UTF8Type))", cat([]byte{0, 0, 0, 2}, elem('a'), elem('\'')), "['a', '''']"},
		{m + "FrozenType(" + m + "SetType(" + m + "Int32Type))", cat([]byte{0, 0, 0, 1}, elem(0, 0, 0, 5)), "{5}"},
		{m + "FrozenType(" + m + "MapType(" + m + "Int32Type," + m + "UTF8Type))", cat([]byte{0, 0, 0, 1}, elem(0, 0, 0, 5), elem('x')), "{5: 'x'}"},
		{m + "TupleType(" + m + "Int32Type," + m + "UTF8Type)", cat(elem(0, 0, 0, 1), []byte{0xff, 0xff, 0xff, 0xff}), "(1, null)"},
		{m + "TupleType(" + m + "Int32Type," + m + "UTF8Type)", elem(0, 0, 0, 1), "(1)"},
		{m + "UserType(ks,61646472,737472656574:" + m + "UTF8Type,5a6970:" + m + "Int32Type)", cat(elem('m'), elem(0, 0, 0, 9)), `{street: 'm', "Zip": 9}`},
		{m + "FrozenType(" + m + "ListType(" + m + "Int32Type))", []byte{0, 0, 0, 2}, "0x00000002"}, // truncated: a blob
	}
	for _, c := range cases {
		if got := cqlLiteral(typ(c.class), c.v); got != c.want {
			t.Errorf("%s %x: got %s, want %s", c.class, c.v, got, c.want)
		}
	}
}
