package nodeschema

import (
	"encoding/binary"
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// FuzzBuild hands the schema builder rows of the system tables whose
// values are arbitrary bytes and text (a damaged row that still decodes
// as a row, or a type string no version writes): it must make a table, or
// say why it did not, and never panic.
func FuzzBuild(f *testing.F) {
	f.Add("k", "int", "partition_key", int32(0), "asc", []byte{0, 0, 0, 1, 0, 0, 0, 1, 'a', 0, 0, 0, 1, 'b'}, []byte{0, 0, 0, 1, 0, 0, 0, 4, 't', 'e', 'x', 't'}, int64(1_700_000_000_000))
	f.Add("c", "frozen<addr>", "clustering", int32(-1), "desc", []byte{0, 0, 0, 2}, []byte("x"), int64(-1))
	f.Add("m", "map<text, frozen<list<int>>>", "static", int32(1<<30), "none", []byte{}, []byte{0xff, 0xff, 0xff, 0xff}, int64(0))
	f.Add("v", "'org.example.Custom'", "regular", int32(2), "DESC", []byte{0, 0, 0, 0}, []byte{0, 0, 0, 2, 0, 0, 0, 0}, int64(1<<62))
	f.Fuzz(func(t *testing.T, name, typ, kind string, pos int32, order string, list, mapOrList []byte, dropped int64) {
		m := typeOf("org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.UTF8Type))")
		l := typeOf("org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.UTF8Type))")
		lb := typeOf("org.apache.cassandra.db.marshal.FrozenType(org.apache.cassandra.db.marshal.ListType(org.apache.cassandra.db.marshal.BooleanType))")
		text := typeOf("org.apache.cassandra.db.marshal.UTF8Type")
		i32 := typeOf("org.apache.cassandra.db.marshal.Int32Type")
		ts := typeOf("org.apache.cassandra.db.marshal.TimestampType")
		uuid := typeOf("org.apache.cassandra.db.marshal.UUIDType")
		dbl := typeOf("org.apache.cassandra.db.marshal.DoubleType")
		str := func(s string) value { return value{typ: text, b: []byte(s)} }
		posb := binary.BigEndian.AppendUint32(nil, uint32(pos))
		rows := map[string][]row{
			"keyspaces": {{"keyspace_name": str("ks"), "replication": {typ: m, b: mapOrList}}},
			"types": {
				{"keyspace_name": str("ks"), "type_name": str("addr"), "field_names": {typ: l, b: list}, "field_types": {typ: l, b: mapOrList}},
				{"keyspace_name": str("ks"), "type_name": str(name), "field_names": {typ: l, b: []byte{0, 0, 0, 1, 0, 0, 0, 1, 'f'}}, "field_types": {typ: l, b: append([]byte{0, 0, 0, 1, 0, 0, 0, byte(len(typ))}, typ...)}},
			},
			"tables": {{"keyspace_name": str("ks"), "table_name": str("t"), "id": {typ: uuid, b: list}, "flags": {typ: l, b: mapOrList},
				"gc_grace_seconds": {typ: i32, b: posb}, "compaction": {typ: m, b: mapOrList}, "comment": str(name),
				"bloom_filter_fp_chance": {typ: dbl, b: list}}},
			"columns": {
				{"keyspace_name": str("ks"), "table_name": str("t"), "column_name": str("pk"), "kind": str("partition_key"), "position": {typ: i32, b: []byte{0, 0, 0, 0}}, "type": str("text"), "clustering_order": str("none")},
				{"keyspace_name": str("ks"), "table_name": str("t"), "column_name": str(name), "kind": str(kind), "position": {typ: i32, b: posb}, "type": str(typ), "clustering_order": str(order)},
			},
			"dropped_columns": {{"keyspace_name": str("ks"), "table_name": str("t"), "column_name": str(name), "type": str(typ), "kind": str(kind),
				"dropped_time": {typ: ts, b: binary.BigEndian.AppendUint64(nil, uint64(dropped))}}},
			"indexes":  {{"keyspace_name": str("ks"), "table_name": str("t"), "index_name": str(name), "kind": str(kind), "options": {typ: m, b: mapOrList}}},
			"triggers": {{"keyspace_name": str("ks"), "table_name": str("t"), "trigger_name": str(name), "options": {typ: m, b: list}}},
			"column_masks": {{"keyspace_name": str("ks"), "table_name": str("t"), "column_name": str(name), "function_name": str(typ),
				"function_argument_types": {typ: l, b: list}, "function_argument_values": {typ: l, b: mapOrList}, "function_argument_nulls": {typ: lb, b: list}}},
			"views": {{"keyspace_name": str("ks"), "view_name": str("v"), "base_table_name": str("t"), "where_clause": str(order)}},
		}
		s := &Schema{CQL: cqltype.NewSchema()}
		b := &builder{s: s, byKs: map[string]*Keyspace{}}
		b.build(rows)
		if tb := s.Table("ks", "t"); tb != nil {
			_ = tb.Schema.DescribeTypes() + tb.Schema.Describe(true) + tb.Schema.Describe(false)
			if len(tb.Schema.PartitionKey) == 0 {
				t.Fatalf("table without a partition key: %+v", tb.Schema)
			}
		}
	})
}

func typeOf(class string) *cqltype.Type {
	t, err := cqltype.Parse(class)
	if err != nil {
		panic(err)
	}
	return t
}
