package nodeschema_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/nodeschema"
)

// A node's data directory keeps its schema in system_schema; Read reads
// it as the node does at startup. (Here the system_schema sstables are
// written first, by the project's writer, as a Cassandra 5.0 node writes
// them.)
func Example() {
	data, err := os.MkdirTemp("", "node")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(data)
	created, err := cqltype.ParseSchema(`
		CREATE TABLE shop.orders (customer text, placed timestamp, total decimal, note text,
			PRIMARY KEY (customer, placed)) WITH CLUSTERING ORDER BY (placed DESC);
		ALTER TABLE shop.orders DROP note USING TIMESTAMP 1714564800000000;`)
	if err != nil {
		log.Fatal(err)
	}
	err = testtables.SystemSchema(data, created, testtables.SystemSchemaOptions{Layout: "5.0", Version: format.MustVersion("oa"), Timestamp: 1714564700000000})
	if err != nil {
		log.Fatal(err)
	}

	s, err := nodeschema.Read(data, nodeschema.Options{})
	if err != nil {
		log.Fatal(err)
	}
	t := s.Table("shop", "orders")
	fmt.Println("layout", s.Layout, "warnings", len(s.Warnings))
	fmt.Println("key", t.Schema.PartitionKey, "clustering", t.Schema.Clustering)
	for _, d := range t.Dropped {
		fmt.Printf("dropped %s %s at %d\n", d.Name, d.Type, d.Time)
	}
	head, _, _ := strings.Cut(t.Schema.Describe(false), "\n    AND") // the options follow
	fmt.Println(head)
	// Output:
	// layout 5.0 warnings 0
	// key [customer] clustering [{placed true}]
	// dropped note text at 1714564800000000
	// CREATE TABLE shop.orders (
	//     customer text,
	//     placed timestamp,
	//     total decimal,
	//     PRIMARY KEY (customer, placed)
	// ) WITH CLUSTERING ORDER BY (placed DESC)
}
