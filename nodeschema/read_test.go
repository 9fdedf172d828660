package nodeschema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/testtables"
	"github.com/sstabletool/sstabletool/nodeschema"
)

// shape is what a test compares of a table: names, types (CQL and the
// AbstractType a header would record), kinds, key and clustering order,
// drops.
type shape struct {
	Name         string
	PartitionKey []string
	Clustering   []cqltype.ClusteringColumn
	Columns      []colShape
	GC           int64
	Compact      bool
}

type colShape struct {
	Name, CQL, Class string
	Static, Dropped  bool
	DroppedTime      int64
}

func shapeOf(t *cqltype.TableSchema, byName bool) shape {
	s := shape{Name: t.Name(), PartitionKey: t.PartitionKey, Clustering: t.Clustering, GC: t.GCGraceSeconds, Compact: t.CompactStorage}
	for _, c := range t.Columns {
		s.Columns = append(s.Columns, colShape{c.Name, c.Type.CQL(), c.Type.Class, c.Static, c.Dropped, c.DroppedTime})
	}
	if byName {
		// A script declares columns in its own order; system_schema keeps
		// no order beyond the key's.
		sortCols(s.Columns)
	}
	return s
}

func sortCols(cs []colShape) {
	for i := range cs {
		for j := i + 1; j < len(cs); j++ {
			if cs[j].Name < cs[i].Name {
				cs[i], cs[j] = cs[j], cs[i]
			}
		}
	}
}

// On the real 3.11 node, every table of sina_test reads as the CQL that
// created it (sina_test/populate_test_schema.cql, parsed on its own)
// declares it: the same columns, types, key and clustering order.
func TestRealNodeMatchesItsCreateStatements(t *testing.T) {
	node := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11")
	src, err := os.ReadFile(filepath.Join(node, "sina_test", "populate_test_schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := cqltype.ParseSchema(string(src))
	if err != nil {
		t.Fatal(err)
	}
	s, err := nodeschema.Read(node, nodeschema.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Warnings) > 0 {
		t.Errorf("warnings: %v", s.Warnings)
	}
	if s.Layout != "3.0/3.11" {
		t.Errorf("layout %q", s.Layout)
	}
	if len(want.Tables) != 16 {
		t.Fatalf("the script defines %d tables", len(want.Tables))
	}
	for _, wt := range want.Tables {
		got := s.Table("sina_test", wt.Table)
		if got == nil {
			t.Errorf("no table %s", wt.Table)
			continue
		}
		w := shapeOf(wt, true)
		w.Name = "sina_test." + wt.Table
		if !wt.HasGCGrace {
			w.GC = 864000 // the default the node stores
		}
		if d := cmp.Diff(w, shapeOf(got.Schema, true)); d != "" {
			t.Errorf("%s (-script +system_schema):\n%s", wt.Table, d)
		}
	}
	// The directories of the six tables on disk carry the ids system_schema gives.
	ents, err := os.ReadDir(filepath.Join(node, "sina_test"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range ents {
		td := format.TableOf(filepath.Join(node, "sina_test", e.Name()))
		if !e.IsDir() || !td.HasID() {
			continue
		}
		dirs++
		tb := s.Table("sina_test", td.Table)
		if tb == nil || strings.ReplaceAll(tb.Schema.ID, "-", "") != td.ID {
			t.Errorf("%s: system_schema id %v", e.Name(), tb)
		}
	}
	if dirs != 6 {
		t.Errorf("%d table directories", dirs)
	}
	// The keyspace and its user types.
	var ks *nodeschema.Keyspace
	for _, k := range s.Keyspaces {
		if k.Name == "sina_test" {
			ks = k
		}
	}
	if ks == nil || ks.Replication["replication_factor"] != "1" || !ks.DurableWrites || len(ks.Types) != 4 {
		t.Fatalf("keyspace sina_test: %+v", ks)
	}
}

// DESCRIBE of a real table: what a 4.0+ server prints for it, options as
// the 3.11 node stored them.
func TestRealNodeDescribe(t *testing.T) {
	node := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11")
	s, err := nodeschema.Read(node, nodeschema.Options{Keyspaces: []string{"sina_test"}})
	if err != nil {
		t.Fatal(err)
	}
	users := s.Table("sina_test", "users").Schema
	want := `CREATE TYPE sina_test.address (
    city text,
    address text,
    zip text
);

CREATE TYPE sina_test.phone_number (
    country text,
    number text
);

CREATE TABLE sina_test.users (
    login text PRIMARY KEY,
    name text,
    addresses set<frozen<address>>,
    phone_numbers set<frozen<phone_number>>
) WITH bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND comment = ''
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32', 'min_threshold': '4'}
    AND compression = {'enabled': 'false'}
    AND crc_check_chance = 1.0
    AND dclocal_read_repair_chance = 0.1
    AND default_time_to_live = 0
    AND extensions = {}
    AND gc_grace_seconds = 864000
    AND max_index_interval = 2048
    AND memtable_flush_period_in_ms = 0
    AND min_index_interval = 128
    AND read_repair_chance = 0.0
    AND speculative_retry = '99PERCENTILE';
`
	if got := users.DescribeTypes() + users.Describe(false); got != want {
		t.Errorf("DESCRIBE:\n%s\nwant:\n%s", got, want)
	}
	// Only the keyspace asked for was read.
	if len(s.Keyspaces) != 1 {
		t.Errorf("%d keyspaces read", len(s.Keyspaces))
	}
}

// roundTripSchema is a schema with every shape the columns table holds:
// composite partition keys, clustering in both orders, statics,
// collections, frozen and non-frozen user types (one inside another),
// tuples, a dropped column and one dropped and added again, an index.
const roundTripSchema = `
CREATE TYPE shop.addr (street text, zip int);
CREATE TYPE shop.person (name text, home frozen<addr>);
CREATE TABLE shop.orders (
    region text, bucket int, placed timestamp, id uuid,
    owner frozen<person> static,
    total decimal,
    items map<text, int>,
    tags set<text>,
    via addr,
    pair frozen<tuple<int, text>>,
    old text,
    note text,
    PRIMARY KEY ((region, bucket), placed, id)
) WITH CLUSTERING ORDER BY (placed DESC, id ASC) AND gc_grace_seconds = 3600;
ALTER TABLE shop.orders DROP old USING TIMESTAMP 1700000000123000;
ALTER TABLE shop.orders DROP note USING TIMESTAMP 1700000000456000;
ALTER TABLE shop.orders ADD note text;
CREATE TABLE shop.customers (id int PRIMARY KEY, name text);
`

// Every layout (3.11, 4.0, 4.1, 5.0) and format version reads back the
// schema it was written from.
func TestLayoutsRoundTrip(t *testing.T) {
	want, err := cqltype.ParseSchema(roundTripSchema)
	if err != nil {
		t.Fatal(err)
	}
	want.Tables[0].Indexes = []cqltype.Index{{Name: "orders_total", Kind: "COMPOSITES", Options: map[string]string{"target": "total"}}}
	for _, c := range []struct{ layout, version string }{{"3.11", "me"}, {"4.0", "nb"}, {"4.1", "nb"}, {"5.0", "oa"}} {
		t.Run(c.layout, func(t *testing.T) {
			dir := t.TempDir()
			if err := testtables.SystemSchema(dir, want, testtables.SystemSchemaOptions{Layout: c.layout, Version: format.MustVersion(c.version), Timestamp: 1_700_000_100_000_000}); err != nil {
				t.Fatal(err)
			}
			s, err := nodeschema.Read(dir, nodeschema.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Warnings) > 0 {
				t.Errorf("warnings: %v", s.Warnings)
			}
			wantLayout := map[string]string{"3.11": "3.0/3.11"}[c.layout]
			if wantLayout == "" {
				wantLayout = c.layout
			}
			if s.Layout != wantLayout {
				t.Errorf("layout %q", s.Layout)
			}
			for _, wt := range want.Tables {
				got := s.Table(wt.Keyspace, wt.Table)
				if got == nil {
					t.Fatalf("no table %s", wt.Name())
				}
				// the drop time is kept in milliseconds, as Cassandra keeps it
				ws := shapeOf(wt, true)
				for i := range ws.Columns {
					ws.Columns[i].DroppedTime = ws.Columns[i].DroppedTime / 1000 * 1000
				}
				if !wt.HasGCGrace {
					ws.GC = 864000
				}
				if d := cmp.Diff(ws, shapeOf(got.Schema, true)); d != "" {
					t.Errorf("%s (-written +read):\n%s", wt.Name(), d)
				}
			}
			orders := s.Table("shop", "orders")
			if d := cmp.Diff([]nodeschema.DroppedColumn{{Name: "note", Type: "text", Kind: "regular", Time: 1700000000456000},
				{Name: "old", Type: "text", Kind: "regular", Time: 1700000000123000}}, orders.Dropped); d != "" {
				t.Errorf("dropped columns:\n%s", d)
			}
			desc := orders.Schema.Describe(true)
			for _, line := range []string{
				"CREATE TABLE shop.orders (\n    region text,\n    bucket int,\n    placed timestamp,\n    id uuid,\n    owner frozen<person> static,\n",
				"    PRIMARY KEY ((region, bucket), placed, id)\n) WITH ID = ",
				"    AND CLUSTERING ORDER BY (placed DESC, id ASC)\n",
				"    AND gc_grace_seconds = 3600\n",
				"\nALTER TABLE shop.orders DROP note USING TIMESTAMP 1700000000456000;\nALTER TABLE shop.orders ADD note text;",
				"\nALTER TABLE shop.orders DROP old USING TIMESTAMP 1700000000123000;",
				"\n\nCREATE INDEX orders_total ON shop.orders (total);\n",
			} {
				if !strings.Contains(desc, line) {
					t.Errorf("DESCRIBE lacks %q:\n%s", line, desc)
				}
			}
			if strings.Contains(orders.Schema.Describe(false), "    old text") {
				t.Errorf("DESCRIBE without internals shows the dropped column")
			}
		})
	}
}

// FuzzReadDamaged damages one system_schema sstable's file of a node
// written by the project's writer (bytes changed at an offset, or the
// file cut short) and reads the schema: never a panic, never a failure
// (the damage is a warning), and what the damaged sstable held is left
// out or read.
func FuzzReadDamaged(f *testing.F) {
	src := f.TempDir()
	sch, err := cqltype.ParseSchema(roundTripSchema)
	if err != nil {
		f.Fatal(err)
	}
	if err := testtables.SystemSchema(src, sch, testtables.SystemSchemaOptions{Layout: "4.0", Version: format.MustVersion("nb"), Timestamp: 1_700_000_000_000_000}); err != nil {
		f.Fatal(err)
	}
	var files []string
	err = filepath.WalkDir(filepath.Join(src, "system_schema"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return err
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint16(0), uint32(100), byte(0xff), false)
	f.Add(uint16(1), uint32(10), byte(0x01), true)
	f.Add(uint16(7), uint32(0), byte(0x80), false)
	f.Fuzz(func(t *testing.T, which uint16, at uint32, xor byte, cut bool) {
		dst := t.TempDir()
		var damaged string
		for i, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if i == int(which)%len(files) && len(b) > 0 {
				damaged = p
				off := int(at) % len(b)
				if cut {
					b = b[:off]
				} else {
					b[off] ^= xor | 1
				}
			}
			rel, _ := filepath.Rel(src, p)
			out := filepath.Join(dst, rel)
			if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		s, err := nodeschema.Read(dst, nodeschema.Options{})
		if err != nil {
			t.Fatalf("%s damaged: %v", damaged, err)
		}
		for _, tb := range s.Keyspaces {
			for _, x := range tb.Tables {
				_ = x.Schema.Describe(true)
			}
		}
	})
}
