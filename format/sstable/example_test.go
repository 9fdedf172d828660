package sstable_test

import (
	"fmt"
	"log"
	"os"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// Open an sstable and walk its partitions, rows and cells, rendering keys,
// clustering values and cells with the types its Statistics.db records.
func Example() {
	dir, err := os.MkdirTemp("", "sstable-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := testtables.Example(dir, oa.Version) // ks.readings: sensor int, at int, value text
	if err != nil {
		log.Fatal(err)
	}

	s, err := sstable.Open(path, sstable.Options{}) // any component of the sstable
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	fmt.Println(s.Version().Name, s.Partitioner().Name())
	err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		key, _ := s.KeyType().Format(h.Key)
		fmt.Println("sensor", key)
		for {
			u, err := dec.Next(false)
			if err != nil || u == nil { // nil: the end of the partition
				return err
			}
			at, _ := s.ClusteringTypes()[0].Format(u.Clustering[0])
			for _, c := range u.Cells {
				v, _ := s.RegularTypes()[c.Column].Format(c.Value)
				fmt.Printf("  at=%s %s=%s\n", at, s.Schema().Regular[c.Column].Name, v)
			}
		}
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// oa org.apache.cassandra.dht.Murmur3Partitioner
	// sensor 1
	//   at=0 value=xex6lk
	//   at=1 value=3xh8xj
	// sensor 0
	//   at=0 value=fzxpsw
	//   at=1 value=91lj6m
	// sensor 2
	//   at=0 value=xjy43k
	//   at=1 value=j8a804
}

// Look a partition up by its key (Summary.db, then Index.db; Partitions.db
// for BTI) and read it from where the index says it starts.
func ExampleSSTable_Find() {
	dir, err := os.MkdirTemp("", "sstable-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path, err := testtables.Example(dir, oa.Version)
	if err != nil {
		log.Fatal(err)
	}
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	key, _ := s.KeyType().FromString("2") // the partition key as CQL text
	e, ok, err := s.Find(key)
	if err != nil || !ok {
		log.Fatal("not found: ", err)
	}
	var h rows.PartitionHeader
	dec, err := s.PartitionAt(e.Position, &h)
	if err != nil {
		log.Fatal(err)
	}
	n := 0
	for u, err := dec.Next(false); u != nil && err == nil; u, err = dec.Next(false) {
		n++
	}
	fmt.Printf("sensor 2 is at Data.db offset %d: %d rows\n", e.Position, n)
	// Output:
	// sensor 2 is at Data.db offset 90: 2 rows
}
