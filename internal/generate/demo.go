package generate

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/workload"
)

// DemoProfile is the profile Demo writes: a clustered table with a static
// column, a collection, every kind of deletion, TTLs, and a zipf row count
// that makes a couple of partitions far bigger than the rest.
const DemoProfile = `
name: demo
description: sstabletool's demo table - clustered, with deletions, TTLs and a few big partitions
seed: 42
ops: 1
partitions: 1500
schema:
  partition_key: [{name: sensor, type: text, size: "4", gen: hash}]
  clustering: [{name: at, type: timestamp}]
  static: [{name: site, type: text, size: "12"}]
  columns:
    - {name: reading, type: double}
    - {name: status, type: text, size: "uniform(2,24)"}
    - {name: tags, type: "set<text>", size: "6", elements: "uniform(0,3)"}
rows_per_partition: "zipf(20000,1.6)"
mix: {insert: 0.9, delete_partition: 0.01, delete_row: 0.03, delete_cell: 0.03, delete_range: 0.03}
ttl: {fraction: 0.2, seconds: 604800}
`

// Demo writes the demo sstable (a few MB, oa, LZ4) into dir, which must
// not hold it yet, and returns its Data.db path.
func Demo(dir string) (dataPath string, err error) {
	p, err := workload.ParseProfile([]byte(DemoProfile), "demo")
	if err != nil {
		return "", fmt.Errorf("demo profile: %w", err)
	}
	res, err := Generate(p, dir, Options{Version: oa.Version})
	if err != nil {
		return "", err
	}
	return res.DataPath, nil
}
