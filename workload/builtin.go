package workload

import "sort"

// builtins are the profiles available by name. They are written in the
// profile format itself so that they double as examples (docs/workload.md).
var builtins = map[string]string{
	// The table and writes of Cassandra's ReadSmallPartitionsBench
	// (test/microbench/.../instance/ReadSmallPartitionsBench.java,
	// SimpleTableWriter.java): op i inserts (i, i, i); reads use the
	// benchmark's four key patterns.
	"small-partitions": `
name: small-partitions
description: ReadSmallPartitionsBench - userid bigint, picid bigint, commentid bigint, PRIMARY KEY(userid, picid); op i inserts (i, i, i)
seed: 1
ops: 1000000
partitions: 1000000
schema:
  partition_key: [{name: userid, type: bigint, gen: partition}]
  clustering: [{name: picid, type: bigint, gen: partition}]
  columns: [{name: commentid, type: bigint, gen: op}]
rows_per_partition: "1"
partition_order: sequential
mix: {insert: 1}
reads: {ops: 0, fixed: 1, inside: 1, partly_outside: 1, outside: 1}
`,
	"wide-partitions": `
name: wide-partitions
description: few partitions with many clustered rows of text values
seed: 1
ops: 1000000
partitions: 1000
schema:
  partition_key: [{name: sensor, type: text, size: "12", gen: hash}]
  clustering: [{name: at, type: timestamp, gen: row}]
  columns:
    - {name: reading, type: double}
    - {name: note, type: text, size: "uniform(0,64)"}
rows_per_partition: "uniform(100,2000)"
partition_order: uniform
mix: {insert: 1}
`,
	"time-series-ttl": `
name: time-series-ttl
description: zipf-skewed writes to time-bucketed partitions, half of them expiring
seed: 1
ops: 1000000
partitions: 100000
schema:
  partition_key: [{name: device, type: uuid, gen: hash}, {name: day, type: int, gen: partition}]
  clustering: [{name: ts, type: timeuuid, gen: row}]
  columns: [{name: value, type: blob, size: "exp(40)"}]
rows_per_partition: "zipf(500,1.1)"
partition_order: "zipf(1.2)"
mix: {insert: 0.9, overwrite: 0.1}
ttl: {fraction: 0.5, seconds: 86400}
reads: {ratio: 0.2}
`,
	"deletes": `
name: deletes
description: a mix of inserts, overwrites and every kind of deletion
seed: 1
ops: 1000000
partitions: 50000
schema:
  partition_key: [{name: id, type: bigint}]
  clustering: [{name: ck, type: int}]
  static: [{name: owner, type: text, size: "8"}]
  columns:
    - {name: a, type: int}
    - {name: b, type: text, size: "uniform(1,40)"}
    - {name: tags, type: "set<text>", size: "8", elements: "uniform(0,6)"}
rows_per_partition: "uniform(1,50)"
partition_order: uniform
mix: {insert: 0.6, overwrite: 0.2, delete_partition: 0.02, delete_row: 0.08, delete_cell: 0.05, delete_range: 0.05}
`,
}

// Builtin returns a fresh copy of the named built-in profile.
func Builtin(name string) (*Profile, bool) {
	src, ok := builtins[name]
	if !ok {
		return nil, false
	}
	p, err := ParseProfile([]byte(src), "built-in "+name)
	if err != nil {
		panic(err) // the built-ins are tested; a failure here is a programming error
	}
	return p, true
}

// BuiltinNames lists the built-in profiles, sorted.
func BuiltinNames() []string {
	var out []string
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
