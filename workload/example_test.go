package workload_test

import (
	"fmt"
	"log"

	"github.com/sstabletool/sstabletool/workload"
)

// A profile (YAML or JSON) becomes a deterministic stream of operations;
// the generator reuses one Op, so copy what you keep.
func ExampleNewGenerator() {
	p, err := workload.ParseProfile([]byte(`
name: readings
seed: 7
ops: 4
partitions: 2
schema:
  partition_key: [{name: sensor, type: int, gen: partition}]
  clustering: [{name: at, type: int, gen: row}]
  columns: [{name: value, type: bigint, gen: op}]
rows_per_partition: "2"
partition_order: sequential
mix: {insert: 1}
`), "readings.yaml")
	if err != nil {
		log.Fatal(err)
	}
	g, err := workload.NewGenerator(p, p.Ops)
	if err != nil {
		log.Fatal(err)
	}
	var op workload.Op
	for {
		ok, err := g.Next(&op)
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break
		}
		if op.Kind != workload.OpWrite {
			continue
		}
		fmt.Printf("write key %x clustering %x: %d cell %x\n", op.Key, op.Clustering[0], len(op.Cells), op.Cells[0].Value)
	}
	// Output:
	// write key 00000000 clustering 00000000: 1 cell 0000000000000000
	// write key 00000000 clustering 00000001: 1 cell 0000000000000001
	// write key 00000001 clustering 00000000: 1 cell 0000000000000002
	// write key 00000001 clustering 00000001: 1 cell 0000000000000003
}
