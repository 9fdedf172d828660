package nodeschema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/nodeschema"
)

// BenchmarkRead reads the schema of a node with 1,000 tables in one
// keyspace (a 5.0 layout written by the project's writer): the whole
// keyspace, and one table of it (what a command on one table reads
// first). cmd/sstabletool's BenchmarkNodeSchema measures what it adds to
// a command.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	var cql strings.Builder
	cql.WriteString("CREATE TYPE ks.addr (street text, zip int, tags frozen<set<text>>);\n")
	for i := 0; i < 1000; i++ {
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
	if err := testtables.SystemSchema(dir, sch, testtables.SystemSchemaOptions{Layout: "5.0", Version: format.MustVersion("oa"), Timestamp: 1_700_000_000_000_000}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		o    nodeschema.Options
		want int
	}{
		{"keyspace", nodeschema.Options{Keyspaces: []string{"ks"}}, 1000},
		{"table", nodeschema.Options{Keyspaces: []string{"ks"}, Table: "t0500"}, 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				s, err := nodeschema.Read(dir, c.o)
				if err != nil || len(s.Warnings) > 0 || len(s.Keyspaces) != 1 || len(s.Keyspaces[0].Tables) != c.want {
					b.Fatalf("%v %v", err, s)
				}
			}
		})
	}
}
