package generate

// HistoryProfile is the profile a history (GenerateHistory) is written
// from when none is named: a clustered table with a static column, every
// kind of collection, every kind of deletion and TTLs, small enough that
// each partition's versions can be read by eye.
const HistoryProfile = `
name: history
description: one table's flush history - clustered, a static column, collections, every kind of deletion, TTLs
seed: 7
ops: 1
partitions: 200
timestamp_start: 1704067200000000
schema:
  partition_key: [{name: id, type: bigint, gen: hash}]
  clustering: [{name: seq, type: int}]
  static: [{name: owner, type: text, size: "8"}]
  columns:
    - {name: name, type: text, size: "uniform(3,12)"}
    - {name: score, type: int}
    - {name: tags, type: "set<text>", size: "5", elements: "uniform(0,3)"}
    - {name: attrs, type: "map<text,int>", size: "4", elements: "uniform(0,3)"}
    - {name: events, type: "list<text>", size: "6", elements: "uniform(0,2)"}
rows_per_partition: "uniform(1,12)"
mix: {insert: 1, delete_partition: 0.02, delete_row: 0.03, delete_cell: 0.03, delete_range: 0.03}
ttl: {fraction: 0.25, seconds: 3600}
`

// CounterHistoryProfile is a counter table's history: counters updated
// by three nodes day after day (see GenerateHistory).
const CounterHistoryProfile = `
name: counters
description: a counter table's flush history - counters updated by three nodes, merged by shard
seed: 7
ops: 1
partitions: 100
timestamp_start: 1704067200000000
schema:
  partition_key: [{name: page, type: text, size: "10", gen: hash}]
  clustering: [{name: day, type: int}]
  columns: [{name: views, type: counter}, {name: clicks, type: counter}]
rows_per_partition: "uniform(1,6)"
mix: {insert: 1}
`
