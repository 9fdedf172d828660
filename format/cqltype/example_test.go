package cqltype_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// Parse an AbstractType string as Statistics.db stores it, and render a
// stored value the way sstabledump prints a cell (JSON) and the way
// AbstractType.getString does (bare hex for a collection).
func ExampleParse() {
	t, err := cqltype.Parse("org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.UTF8Type,org.apache.cassandra.db.marshal.Int32Type)")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(t.CQL())
	// A frozen map's bytes: the entry count, then each key and value with
	// an int length.
	v := []byte{0, 0, 0, 2, 0, 0, 0, 1, 'a', 0, 0, 0, 4, 0, 0, 0, 1, 0, 0, 0, 1, 'b', 0, 0, 0, 4, 0, 0, 0, 2}
	j, err := t.AppendJSON(nil, v)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(j))
	s, _ := t.Format(v)
	fmt.Println(s)
	// Output:
	// map<text, int>
	// {"a": 1, "b": 2}
	// 000000020000000161000000040000000100000001620000000400000002
}

// Turn a key typed by a user into the bytes Cassandra stores, as the
// commands' --key flags do.
func ExampleType_FromString() {
	t, err := cqltype.ParseCQL("timestamp")
	if err != nil {
		log.Fatal(err)
	}
	v, err := t.FromString("2024-02-01T10:00:00Z")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %x\n", t.Class, v)
	s, _ := t.Format(v)
	fmt.Println(s)
	// Output:
	// org.apache.cassandra.db.marshal.TimestampType 0000018d641c6900
	// 2024-02-01T10:00:00.000Z
}

// Parse a CREATE TABLE statement as cqlsh's DESCRIBE prints it.
func ExampleParseCreateTable() {
	ts, err := cqltype.ParseCreateTable(`CREATE TABLE ks.readings (
		sensor int, at timestamp, value text,
		PRIMARY KEY (sensor, at)
	) WITH CLUSTERING ORDER BY (at DESC);`)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ts.Name(), ts.PartitionKey)
	for _, c := range ts.Clustering {
		fmt.Println("clustering", c.Name, ts.Column(c.Name).Type.Class)
	}
	// Output:
	// ks.readings [sensor]
	// clustering at org.apache.cassandra.db.marshal.ReversedType(org.apache.cassandra.db.marshal.TimestampType)
}
