package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format/nc"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// Queries like those docs/export.md shows, run on the export of two nodes.
const (
	largestPartitions = `SELECT node, keyspace, "table", key, size, rows
FROM read_parquet('EXPORT/partitions/**/*.parquet', hive_partitioning = true)
ORDER BY size DESC, node, keyspace, "table", key LIMIT 20`
	tombstonesPerTable = `SELECT keyspace, "table", sum(tombstones) AS tombstones, sum(row_tombstones) AS rows,
       sum(range_tombstones) AS ranges, sum(cell_tombstones) AS cells, count(DISTINCT node) AS nodes
FROM read_parquet('EXPORT/partitions/**/*.parquet', hive_partitioning = true)
GROUP BY ALL ORDER BY tombstones DESC, keyspace, "table"`
	savingsPerTable = `SELECT keyspace, "table", count(*) AS sstables, sum(bytes) AS bytes, sum(savings) AS savings,
       round(100 * sum(savings) / sum(bytes), 2) AS pct
FROM read_parquet('EXPORT/sstables/**/*.parquet', hive_partitioning = true)
GROUP BY ALL ORDER BY savings DESC, keyspace, "table"`
	cellsPerKind = `SELECT keyspace, "table", kind, entry, count(*) AS n, count(*) FILTER (WHERE tombstone) AS tombstones
FROM read_parquet('EXPORT/cells/**/*.parquet', hive_partitioning = true)
GROUP BY ALL ORDER BY ALL`
)

// duckdb runs statements with DuckDB and decodes each one's rows; it
// skips the test when DuckDB is not installed ($DUCKDB_NODE_DIR, where
// .ci/run installs the npm package @duckdb/node-api).
func duckdb(t *testing.T, exportDir string, sql ...string) [][]map[string]any {
	t.Helper()
	dir := os.Getenv("DUCKDB_NODE_DIR")
	if dir == "" {
		t.Skip("DuckDB not installed: set DUCKDB_NODE_DIR to a directory where `npm install @duckdb/node-api` ran (.ci/run does)")
	}
	script, err := filepath.Abs("testdata/duckdb.mjs")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, s := range sql {
		args = append(args, strings.ReplaceAll(s, "EXPORT", exportDir))
	}
	cmd := exec.Command("node", append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "DUCKDB_NODE_DIR="+dir)
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("duckdb: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("duckdb: %v", err)
	}
	var res [][]map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rows []map[string]any
		if err := json.Unmarshal([]byte(line), &rows); err != nil {
			t.Fatalf("duckdb printed %q: %v", line, err)
		}
		res = append(res, rows)
	}
	return res
}

// fleetData is a node's data directory for the fleet tests: two fixture
// tables of keyspace shop (an nc one, which savings can shrink, and an oa
// one) and a generated nc table with deletions and TTLs.
func fleetData(t *testing.T) string {
	data := filepath.Join(t.TempDir(), "data")
	copyInto(t, fixtures.Table(t, "nc", "legacy_nc_clust"), filepath.Join(data, "shop", "orders-4a4e3f70c67c11eeb4a4d93dc8a1f6a2"))
	copyInto(t, fixtures.Table(t, "oa", "legacy_oa_simple"), filepath.Join(data, "shop", "customers-5b5e3f70c67c11eeb4a4d93dc8a1f6a2"))
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 60
	if _, err := generate.Generate(p, filepath.Join(data, "iot", "sensors-6c6e3f70c67c11eeb4a4d93dc8a1f6a2"), generate.Options{Version: nc.Version}); err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDuckDBReadsTwoNodesAsOneDataset exports one data directory as two
// nodes into one place and has DuckDB read each dataset whole, with Hive
// partitioning: every query's answer must be what the files hold, read
// with parquet-go, for both nodes.
func TestDuckDBReadsTwoNodesAsOneDataset(t *testing.T) {
	data := fleetData(t)
	out := t.TempDir()
	for _, node := range []string{"n1", "n2"} {
		if code, _, errOut := runCommand("export", "--out", out, "--node", node, "-u", exportNow, "-r", data); code != 0 {
			t.Fatalf("export --node %s: exit %d: %s", node, code, errOut)
		}
	}
	res := duckdb(t, out, largestPartitions, tombstonesPerTable, savingsPerTable, cellsPerKind)

	// What the files hold, by the independent reader.
	type part struct {
		node, ks, table, key string
		size, rows           int64
	}
	var parts []part
	tomb := map[string][5]int64{}
	savings := map[string][3]int64{}
	kinds := map[string][2]int64{}
	for _, f := range listParquet(t, out) {
		rel, _ := filepath.Rel(out, f)
		seg := strings.Split(rel, string(filepath.Separator))
		ks, table := strings.TrimPrefix(seg[1], "keyspace="), strings.TrimPrefix(seg[2], "table=")
		node := strings.Split(strings.TrimPrefix(seg[3], "part-"), "-")[0]
		switch seg[0] {
		case "partitions":
			for _, p := range readParquet[pqPartition](t, f, "partitions") {
				parts = append(parts, part{p.Node, ks, table, p.Key, *p.Size, p.Rows})
				v := tomb[ks+"."+table]
				tomb[ks+"."+table] = [5]int64{v[0] + p.Tombstones, v[1] + p.RowTombstones, v[2] + p.RangeTombstones, v[3] + p.CellTombstones, 2}
				if p.Node != node {
					t.Fatalf("%s: node %q", f, p.Node)
				}
			}
		case "sstables":
			for _, s := range readParquet[pqSSTable](t, f, "sstables") {
				v := savings[ks+"."+table]
				savings[ks+"."+table] = [3]int64{v[0] + 1, v[1] + s.Bytes, v[2] + *s.Savings}
			}
		case "cells":
			for _, c := range readParquet[pqCell](t, f, "cells") {
				k := ks + "." + table + "." + c.Kind + "." + c.Entry
				v := kinds[k]
				if c.Tombstone {
					v[1]++
				}
				kinds[k] = [2]int64{v[0] + 1, v[1]}
			}
		}
	}
	sort.Slice(parts, func(i, j int) bool {
		a, b := parts[i], parts[j]
		if a.size != b.size {
			return a.size > b.size
		}
		return a.node+"\x00"+a.ks+"\x00"+a.table+"\x00"+a.key < b.node+"\x00"+b.ks+"\x00"+b.table+"\x00"+b.key
	})
	num := func(v any) int64 {
		n, err := strconv.ParseInt(v.(string), 10, 64)
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		return n
	}
	var gotTop []part
	for _, r := range res[0] {
		gotTop = append(gotTop, part{r["node"].(string), r["keyspace"].(string), r["table"].(string), r["key"].(string), num(r["size"]), num(r["rows"])})
	}
	if d := cmp.Diff(parts[:20], gotTop, cmp.AllowUnexported(part{})); d != "" {
		t.Errorf("20 largest partitions (-files +duckdb):\n%s", d)
	}
	gotTomb := map[string][5]int64{}
	for _, r := range res[1] {
		gotTomb[r["keyspace"].(string)+"."+r["table"].(string)] = [5]int64{num(r["tombstones"]), num(r["rows"]), num(r["ranges"]), num(r["cells"]), num(r["nodes"])}
	}
	if d := cmp.Diff(tomb, gotTomb); d != "" {
		t.Errorf("tombstones per table (-files +duckdb):\n%s", d)
	}
	gotSavings := map[string][3]int64{}
	for _, r := range res[2] {
		gotSavings[r["keyspace"].(string)+"."+r["table"].(string)] = [3]int64{num(r["sstables"]), num(r["bytes"]), num(r["savings"])}
	}
	if d := cmp.Diff(savings, gotSavings); d != "" {
		t.Errorf("savings per table (-files +duckdb):\n%s", d)
	}
	gotKinds := map[string][2]int64{}
	for _, r := range res[3] {
		gotKinds[r["keyspace"].(string)+"."+r["table"].(string)+"."+r["kind"].(string)+"."+r["entry"].(string)] = [2]int64{num(r["n"]), num(r["tombstones"])}
	}
	if d := cmp.Diff(kinds, gotKinds); d != "" {
		t.Errorf("cells per kind (-files +duckdb):\n%s", d)
	}
	if savings["shop.orders"][2] <= 0 || tomb["iot.sensors"][0] == 0 {
		t.Errorf("the fleet shows no savings (%v) or no tombstones (%v): the test would prove little", savings, tomb)
	}
}
