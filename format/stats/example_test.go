package stats_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// Read Statistics.db: the partitioner and bloom filter chance, the
// serialization header (the table's types and the minima every delta in
// Data.db is relative to) and the sstable's own statistics.
func ExampleReadFile() {
	dir, err := os.MkdirTemp("", "stats-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data, err := testtables.Example(dir, oa.Version) // ks.readings: sensor int, at int, value text
	if err != nil {
		log.Fatal(err)
	}
	d, _, err := format.ParseDescriptor(data)
	if err != nil {
		log.Fatal(err)
	}

	st, err := stats.ReadFile(d.Path(stats.ComponentName), d.Version)
	if err != nil {
		log.Fatal(err)
	}
	short := func(class string) string { return strings.TrimPrefix(class, "org.apache.cassandra.db.marshal.") }
	fmt.Println("partitioner:", st.Validation.Partitioner)
	fmt.Println("bloom filter fp chance:", st.Validation.BloomFilterFPChance)
	fmt.Println("key:", short(st.Header.KeyType.Class))
	for _, c := range st.Header.ClusteringTypes {
		fmt.Println("clustering:", short(c.Class))
	}
	for _, c := range st.Header.RegularColumns {
		fmt.Printf("column %s: %s\n", c.Name, short(c.Type.Class))
	}
	fmt.Println("timestamps:", st.Stats.MinTimestamp, "to", st.Stats.MaxTimestamp)
	fmt.Println("rows:", st.Stats.TotalRows)
	// Output:
	// partitioner: org.apache.cassandra.dht.Murmur3Partitioner
	// bloom filter fp chance: 0.01
	// key: Int32Type
	// clustering: Int32Type
	// column value: UTF8Type
	// timestamps: 1700000000012377 to 1700000000801454
	// rows: 6
}

// Convert Statistics.db between versions field by field, with what the
// older layout cannot hold reported as losses, and encode it byte-exact.
func ExampleStatistics_Convert() {
	dir, err := os.MkdirTemp("", "stats-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	data, err := testtables.Example(dir, oa.Version)
	if err != nil {
		log.Fatal(err)
	}
	d, _, _ := format.ParseDescriptor(data)
	raw, err := os.ReadFile(d.Path(stats.ComponentName))
	if err != nil {
		log.Fatal(err)
	}
	st, err := stats.Decode(raw, d.Version)
	if err != nil {
		log.Fatal(err)
	}
	again, _ := st.Encode(d.Version)
	fmt.Println("re-encoded byte for byte:", string(again) == string(raw))

	old, losses, err := st.Convert(nc.Version)
	if err != nil {
		log.Fatal(err)
	}
	b, _ := old.Encode(nc.Version)
	fmt.Printf("as nc: %d bytes instead of %d\n", len(b), len(raw))
	for _, l := range losses {
		fmt.Println("lost:", l.Field)
	}
	// Output:
	// re-encoded byte for byte: true
	// as nc: 10342 bytes instead of 10330
}
