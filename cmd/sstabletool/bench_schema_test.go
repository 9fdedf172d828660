package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/benchbase"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

// nodeTables is the size of BenchmarkNodeSchema's node: its tables, all
// in one keyspace (a command reads its sstable's keyspace whole, so one
// keyspace is the worst case).
const nodeTables = 1000

// BenchmarkNodeSchema is what reading a node's own schema adds to a
// command: a query of one partition of a table that lies in a data
// directory whose system_schema (written by the project's writer as a
// 5.0 node writes it) describes 1,000 tables (4 to 8 columns each, a user
// type, collections, a dropped column per tenth table), against the same
// query of the same sstable outside any data directory, timed in the same
// loop; and metadata -r over two tables of the node (the first read
// alone, then the keyspace's 1,000 whole) against the same over two
// directories that are no node's. It reports query-added-ms/op and
// keyspace-added-ms/op (mean wall time), which docs/schema.md holds to
// 100 ms; the same from the shortest round of each (best-…-ms), which
// the other tenants of a busy machine disturb least, and in CPU time
// (cpu-…-ms/op), which they do not inflate.
func BenchmarkNodeSchema(b *testing.B) {
	root := b.TempDir()
	var cql strings.Builder
	cql.WriteString("CREATE TYPE ks.addr (street text, zip int, tags frozen<set<text>>);\n")
	// t0000 is the table on disk: legacy_nc_clust's (pk text, ck text, val text).
	cql.WriteString("CREATE TABLE ks.t0000 (pk text, ck text, val text, PRIMARY KEY (pk, ck)) WITH ID = 5a1c395e-b41f-11e5-9f22-ba0be0483c18;\n")
	for i := 1; i < nodeTables; i++ {
		fmt.Fprintf(&cql, "CREATE TABLE ks.t%04d (id uuid, at timestamp, seq int, owner text, home frozen<addr>, attrs map<text, int>", i)
		for c := 0; c < i%4; c++ {
			fmt.Fprintf(&cql, ", col%d bigint", c)
		}
		cql.WriteString(", PRIMARY KEY ((id, at), seq)) WITH CLUSTERING ORDER BY (seq DESC);\n")
		if i%10 == 0 {
			fmt.Fprintf(&cql, "ALTER TABLE ks.t%04d DROP owner USING TIMESTAMP 1700000000000000;\n", i)
		}
	}
	sch, err := cqltype.ParseSchema(cql.String())
	if err != nil {
		b.Fatal(err)
	}
	node := filepath.Join(root, "node")
	if err := testtables.SystemSchema(node, sch, testtables.SystemSchemaOptions{Layout: "5.0", Version: format.MustVersion("oa"), Timestamp: 1_700_000_000_000_000}); err != nil {
		b.Fatal(err)
	}
	src := fixtures.Table(b, "nc", "legacy_nc_clust")
	inNode := filepath.Join(node, "ks", "t0000-5a1c395eb41f11e59f22ba0be0483c18")
	alone := filepath.Join(root, "alone")
	copyInto(b, src, inNode)
	copyInto(b, src, alone)

	savedOut, savedErr := stdout, stderr
	defer func() { stdout, stderr = savedOut, savedErr }()
	var errs strings.Builder
	stdout, stderr = io.Discard, &errs
	query := func(stmt, dir string) benchbase.Times {
		return benchbase.Measure(func() {
			if code := run([]string{"sstabletool", "query", stmt, dir}); code != exitOK {
				b.Fatalf("%s: exit %d: %s", stmt, code, errs.String())
			}
		})
	}
	// The node's schema names the key pk; alone, the header's placeholder is key.
	query("SELECT * FROM ks.t0000 WHERE pk = '1'", inNode)
	if !strings.Contains(errs.String(), "schema: system_schema of") {
		b.Fatalf("the node's schema was not read: %s", errs.String())
	}
	// A command over two tables of the node (metadata -r) reads the first
	// table alone, then the keyspace whole: the worst a command pays.
	copyInto(b, src, filepath.Join(node, "ks", "t0001-"+strings.ReplaceAll(testtables.SystemTableID("x"), "-", "")))
	copyInto(b, src, filepath.Join(root, "two", "a"))
	copyInto(b, src, filepath.Join(root, "two", "b"))
	metadata := func(dir string) benchbase.Times {
		return benchbase.Measure(func() {
			if code := run([]string{"sstabletool", "metadata", "-r", dir}); code != exitOK {
				b.Fatalf("metadata -r %s: exit %d: %s", dir, code, errs.String())
			}
		})
	}
	var with, without, withAll, withoutAll benchbase.Times
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		with = with.Add(query("SELECT * FROM ks.t0000 WHERE pk = '1'", inNode))
		without = without.Add(query("SELECT * FROM alone WHERE key = '1'", alone))
		withAll = withAll.Add(metadata(filepath.Join(node, "ks")))
		withoutAll = withoutAll.Add(metadata(filepath.Join(root, "two")))
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	best := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(with.Wall), "query-ms/op")
	b.ReportMetric(ms(without.Wall), "query-alone-ms/op")
	b.ReportMetric(ms(with.Wall-without.Wall), "query-added-ms/op")
	b.ReportMetric(ms(withAll.Wall-withoutAll.Wall), "keyspace-added-ms/op")
	b.ReportMetric(best(with.BestWall-without.BestWall), "best-query-added-ms")
	b.ReportMetric(best(withAll.BestWall-withoutAll.BestWall), "best-keyspace-added-ms")
	b.ReportMetric(ms(with.CPU-without.CPU), "cpu-query-added-ms/op")
	b.ReportMetric(ms(withAll.CPU-withoutAll.CPU), "cpu-keyspace-added-ms/op")
}
