package testtables

import (
	"fmt"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// ExampleProfile is the table the public packages' Examples read, small
// enough to print whole: CREATE TABLE ks.readings (sensor int, at int,
// value text, PRIMARY KEY (sensor, at)), three sensors of two rows each.
const ExampleProfile = `
name: readings
seed: 7
ops: 1
partitions: 3
schema:
  partition_key: [{name: sensor, type: int, gen: partition}]
  clustering: [{name: at, type: int, gen: row}]
  columns: [{name: value, type: text, size: "6"}]
rows_per_partition: "2"
partition_order: sequential
mix: {insert: 1}
`

// Example writes ExampleProfile's sstable in version v with the
// project's writer into dir (which must not hold it yet) and returns its
// Data.db path. Examples run where no fixture is: this is what they read.
func Example(dir string, v format.Version) (string, error) {
	p, err := workload.ParseProfile([]byte(ExampleProfile), "readings")
	if err != nil {
		return "", fmt.Errorf("example profile: %w", err)
	}
	res, err := generate.Generate(p, dir, generate.Options{Version: v})
	if err != nil {
		return "", err
	}
	return res.DataPath, nil
}
