package export_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/sstabletool/sstabletool/export"
	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// Export one sstable, here one the project's writer makes from the demo
// workload profile, into the three datasets.
func Example() {
	dir, err := os.MkdirTemp("", "export-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	profile, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		log.Fatal(err)
	}
	profile.Partitions = 20
	table := filepath.Join(dir, "data", "iot", "sensors-0123456789abcdef0123456789abcdef")
	res, err := generate.Generate(profile, table, generate.Options{Version: oa.Version})
	if err != nil {
		log.Fatal(err)
	}

	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	e, err := export.New(filepath.Join(dir, "export"), export.Options{Node: "node1", Now: 1700000000})
	if err != nil {
		log.Fatal(err)
	}
	files, err := e.SSTable(s, export.Names{Keyspace: "iot", Table: "sensors"})
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		fmt.Printf("%-10s %6d rows  %s\n", f.Dataset, f.Rows, rel)
	}
	// Output:
	// partitions     20 rows  export/partitions/keyspace=iot/table=sensors/part-node1-oa-1-big.parquet
	// cells         538 rows  export/cells/keyspace=iot/table=sensors/part-node1-oa-1-big.parquet
	// sstables        1 rows  export/sstables/keyspace=iot/table=sensors/part-node1-oa-1-big.parquet
}
