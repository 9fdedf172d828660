package cqltype

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// canonical rebuilds the AbstractType string Cassandra would write for t.
func canonical(t *Type) string {
	var b strings.Builder
	t.appendClass(&b, false, false)
	return b.String()
}

func TestParseCQL(t *testing.T) {
	cases := []struct{ in, cql, class string }{
		{"int", "int", m + "Int32Type"},
		{"VARCHAR", "text", m + "UTF8Type"},
		{"list<int>", "list<int>", m + "ListType(" + m + "Int32Type)"},
		{"frozen<list<int>>", "frozen<list<int>>", m + "FrozenType(" + m + "ListType(" + m + "Int32Type))"},
		{"list<frozen<list<int>>>", "list<frozen<list<int>>>", m + "ListType(" + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)))"},
		{"frozen<list<list<int>>>", "frozen<list<frozen<list<int>>>>", m + "FrozenType(" + m + "ListType(" + m + "ListType(" + m + "Int32Type)))"},
		{"map< text , frozen<set<uuid>> >", "map<text, frozen<set<uuid>>>", m + "MapType(" + m + "UTF8Type," + m + "FrozenType(" + m + "SetType(" + m + "UUIDType)))"},
		{"tuple<int, list<text>>", "frozen<tuple<int, frozen<list<text>>>>", m + "TupleType(" + m + "Int32Type," + m + "ListType(" + m + "UTF8Type))"},
		{"frozen<tuple<int>>", "frozen<tuple<int>>", m + "TupleType(" + m + "Int32Type)"},
		{"vector<float, 3>", "vector<float, 3>", m + "VectorType(" + m + "FloatType , 3)"},
		{"'" + m + "LexicalUUIDType'", "'" + m + "LexicalUUIDType'", m + "LexicalUUIDType"},
		{"address", "address", ""},
		{"frozen<ks.\"Addr\">", `frozen<"Addr">`, ""},
	}
	for _, c := range cases {
		typ, err := ParseCQL(c.in)
		if err != nil {
			t.Errorf("ParseCQL(%q): %v", c.in, err)
			continue
		}
		if typ.CQL() != c.cql {
			t.Errorf("ParseCQL(%q).CQL() = %q, want %q", c.in, typ.CQL(), c.cql)
		}
		if c.class == "" {
			continue
		}
		if typ.String() != c.class {
			t.Errorf("ParseCQL(%q).String() = %q, want %q", c.in, typ.String(), c.class)
		}
		back, err := Parse(typ.String())
		if err != nil {
			t.Errorf("Parse(%q): %v", typ.String(), err)
			continue
		}
		if back.CQL() != typ.CQL() || back.IsMultiCell() != typ.IsMultiCell() || back.FixedLength() != typ.FixedLength() {
			t.Errorf("Parse(%q) = %q multi %v, want %q multi %v", typ.String(), back.CQL(), back.IsMultiCell(), typ.CQL(), typ.IsMultiCell())
		}
	}
	for _, bad := range []string{"", "list<", "list<int", "map<int>", "vector<float>", "vector<float, 0>",
		"vector<float, 1000000000>", "frozen<int, int>", "tuple<>", "int int", "list<int>>", "'nope(", "'" + m + "ListType'"} {
		if typ, err := ParseCQL(bad); err == nil {
			t.Errorf("ParseCQL(%q) = %s, want an error", bad, typ.CQL())
		}
	}
}

// TestCanonicalClassOfFixtures checks that the class strings in the
// fixtures are what this package would write for the parsed types.
func TestCanonicalClassOfFixtures(t *testing.T) {
	for _, s := range fixtureTypeStrings(t) {
		typ, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonical(typ); got != s {
			t.Errorf("canonical(Parse(%q)) = %q", s, got)
		}
	}
	// And for hand-written strings in Cassandra's own spelling.
	for _, s := range []string{
		m + "ReversedType(" + m + "FrozenType(" + m + "ListType(" + m + "Int32Type)))",
		m + "FrozenType(" + m + "UserType(ks,61,62:" + m + "ListType(" + m + "Int32Type)))",
		m + "SetType(" + m + "FrozenType(" + m + "UserType(ks,61,62:" + m + "Int32Type)))",
		m + "VectorType(" + m + "FloatType , 3)",
		m + "TupleType(" + m + "Int32Type," + m + "ListType(" + m + "UTF8Type))",
	} {
		typ, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := canonical(typ); got != s {
			t.Errorf("canonical(Parse(%q)) = %q", s, got)
		}
	}
}

func TestParseCreateTableDescribe(t *testing.T) {
	src := `CREATE TABLE ks."Events" (
    id uuid,
    day date,
    "At" timestamp,
    seq int,
    tags set<text>,
    owner text static,
    payload frozen<map<text, blob>> MASKED WITH default(),
    v vector<float, 2>,
    PRIMARY KEY ((id, day), "At", seq)
) WITH CLUSTERING ORDER BY ("At" DESC, seq ASC)
    AND additional_write_policy = '99p'
    AND bloom_filter_fp_chance = 0.01
    AND caching = {'keys': 'ALL', 'rows_per_partition': 'NONE'}
    AND comment = 'it''s a comment; with a semicolon'
    AND compaction = {'class': 'org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy', 'max_threshold': '32'}
    AND default_time_to_live = 0
    AND speculative_retry = '99p';`
	ts, err := ParseCreateTable(src)
	if err != nil {
		t.Fatal(err)
	}
	if ts.Keyspace != "ks" || ts.Table != "Events" {
		t.Errorf("name %q.%q", ts.Keyspace, ts.Table)
	}
	if strings.Join(ts.PartitionKey, ",") != "id,day" {
		t.Errorf("partition key %q", ts.PartitionKey)
	}
	if len(ts.Clustering) != 2 || ts.Clustering[0] != (ClusteringColumn{"At", true}) || ts.Clustering[1] != (ClusteringColumn{"seq", false}) {
		t.Errorf("clustering %+v", ts.Clustering)
	}
	at := ts.Column("At")
	if at == nil || !at.Type.Reversed || at.Type.String() != m+"ReversedType("+m+"TimestampType)" {
		t.Errorf("At column %+v", at)
	}
	if c := ts.Column("owner"); c == nil || !c.Static {
		t.Errorf("owner should be static: %+v", c)
	}
	if c := ts.Column("tags"); c == nil || !c.Type.IsMultiCell() || c.Type.String() != m+"SetType("+m+"UTF8Type)" {
		t.Errorf("tags %+v", c)
	}
	if c := ts.Column("payload"); c == nil || c.Type.CQL() != "frozen<map<text, blob>>" {
		t.Errorf("payload %+v", c)
	}
	if len(ts.Columns) != 8 {
		t.Errorf("%d columns", len(ts.Columns))
	}

	ts, err = ParseCreateTable(`CREATE TABLE IF NOT EXISTS t (k int PRIMARY KEY, v text) WITH COMPACT STORAGE`)
	if err != nil || ts.Keyspace != "" || ts.Table != "t" || ts.PartitionKey[0] != "k" || !ts.CompactStorage {
		t.Errorf("inline key: %+v %v", ts, err)
	}
	for _, bad := range []string{
		`CREATE TABLE t (k int)`,
		`CREATE TABLE t (k int, PRIMARY KEY (x))`,
		`CREATE TABLE t (k int, c int, PRIMARY KEY (k, c)) WITH CLUSTERING ORDER BY (z DESC)`,
		`CREATE TABLE t (k int PRIMARY KEY`,
		`CREATE TABLE t (k 'unterminated PRIMARY KEY)`,
		`SELECT * FROM t`,
	} {
		if _, err := ParseCreateTable(bad); err == nil {
			t.Errorf("ParseCreateTable(%q) should fail", bad)
		}
	}
}

// TestParseSchemaFixture reads the real CQL script the me-collections
// fixtures were made from, and checks its tables against the type strings
// Cassandra wrote into those tables' Statistics.db.
func TestParseSchemaFixture(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "cassandra", "me-collections")
	src, err := os.ReadFile(filepath.Join(dir, "populate_test_schema.cql"))
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseSchema(string(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"table_with_map":           {"k", m + "Int32Type", "m", m + "MapType(" + m + "Int32Type," + m + "Int32Type)"},
		"table_with_set":           {"k", m + "Int32Type", "s", m + "SetType(" + m + "Int32Type)"},
		"table_with_boolean_set":   {"k", m + "Int32Type", "s", m + "SetType(" + m + "BooleanType)"},
		"table_with_list":          {"k", m + "Int32Type", "l", m + "ListType(" + m + "Int32Type)"},
		"ascii_with_special_chars": {"k", m + "Int32Type", "val", m + "AsciiType"},
		"utf8_with_special_chars":  {"k", m + "Int32Type", "val", m + "UTF8Type"},
	}
	entries, _ := os.ReadDir(dir)
	for name, cols := range want {
		ts := sc.Table(name)
		if ts == nil {
			t.Errorf("table %s not parsed", name)
			continue
		}
		if ts.Keyspace != "sina_test" {
			t.Errorf("%s keyspace %q (USE sina_test)", name, ts.Keyspace)
		}
		var stats []byte
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), name+"-") {
				stats, _ = os.ReadFile(filepath.Join(dir, e.Name(), "me-1-big-Statistics.db"))
			}
		}
		for i := 0; i < len(cols); i += 2 {
			c := ts.Column(cols[i])
			if c == nil || c.Type.String() != cols[i+1] {
				t.Errorf("%s.%s = %+v, want %s", name, cols[i], c, cols[i+1])
				continue
			}
			if stats != nil && !strings.Contains(string(stats), c.Type.String()) {
				t.Errorf("%s.%s: %q is not in the table's Statistics.db", name, cols[i], c.Type.String())
			}
		}
	}
	users := sc.Table("users")
	if users == nil {
		t.Fatal("users not parsed")
	}
	addr := users.Column("addresses").Type
	wantAddr := m + "SetType(" + m + "FrozenType(" + m + "UserType(sina_test,61646472657373,63697479:" + m + "UTF8Type,61646472657373:" + m + "UTF8Type,7a6970:" + m + "UTF8Type)))"
	if addr.String() != wantAddr || addr.CQL() != "set<frozen<address>>" {
		t.Errorf("users.addresses = %s (%s)\nwant %s", addr.String(), addr.CQL(), wantAddr)
	}
	songs := sc.Table("songs")
	info := songs.Column("info").Type
	if info.CQL() != "frozen<band_info_type>" || info.Params[1].CQL() != "frozen<set<text>>" ||
		!strings.Contains(info.String(), "6d656d62657273:"+m+"SetType("+m+"UTF8Type)") {
		t.Errorf("songs.info = %s %s", info.CQL(), info.String())
	}
	if dyn := sc.Table("dynamic_columns"); dyn == nil || !dyn.CompactStorage || dyn.Clustering[0].Name != "column1" {
		t.Errorf("dynamic_columns = %+v", dyn)
	}
	if s := sc.Table("sina_table"); s == nil || len(s.Columns) != 69 || s.Clustering[0].Name != "name" {
		t.Errorf("sina_table = %+v", s)
	}
	if len(sc.Tables) != 16 {
		t.Errorf("%d tables parsed", len(sc.Tables))
	}
}

func TestParseSchemaUnknownType(t *testing.T) {
	if _, err := ParseSchema(`CREATE TABLE t (k int PRIMARY KEY, a frozen<nothere>);`); err == nil {
		t.Errorf("an undefined user type should fail")
	}
}

// TestParseDescribeKeyspace reads DESCRIBE KEYSPACE output as cqlsh prints
// it: a keyspace, user types (one quoted), functions whose bodies hold
// semicolons in $$ blocks and '...' strings, an aggregate, tables with
// every WITH option, indexes (plain and custom), materialized views, the
// ALTER TABLE DROP/ADD of DESCRIBE ... WITH INTERNALS, a second keyspace
// with a table of the same name, and a virtual table in a comment.
func TestParseDescribeKeyspace(t *testing.T) {
	src, err := os.ReadFile("testdata/describe_legacy_tables.cql")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseSchema(string(src))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ts := range sc.Tables {
		names = append(names, ts.Name())
	}
	want := "legacy_tables.legacy_nc_clust legacy_tables.legacy_nc_clust_by_val legacy_tables.legacy_nc_clust_counter " +
		"legacy_tables.legacy_nc_simple legacy_tables.legacy_nc_simple_counter legacy_tables.legacy_oa_clust " +
		"legacy_tables.legacy_oa_clust_counter legacy_tables.legacy_oa_simple_counter " +
		"legacy_tables.legacy_oa_simple legacy_tables.Users legacy_tables.users_by_who other.legacy_nc_simple"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("tables\n got %s\nwant %s", got, want)
	}
	if m := sc.Lookup("", "legacy_nc_simple"); len(m) != 2 {
		t.Errorf("Lookup of a name in two keyspaces: %d", len(m))
	}
	if m := sc.Lookup("other", "legacy_nc_simple"); len(m) != 1 || m[0].Column("val").Type.CQL() != "blob" {
		t.Errorf("Lookup(other): %+v", m)
	}

	// The view takes its types from the base, its order from its own WITH.
	v := sc.Lookup("legacy_tables", "legacy_nc_clust_by_val")[0]
	if v.ViewOf != "legacy_tables.legacy_nc_clust" || strings.Join(v.PartitionKey, ",") != "val" ||
		len(v.Clustering) != 2 || !v.Clustering[0].Descending || v.Column("pk").Type.String() != m+"ReversedType("+m+"UTF8Type)" ||
		v.Column("ck").Type.Reversed || len(v.Columns) != 3 {
		t.Errorf("view %+v", v)
	}
	w := sc.Lookup("legacy_tables", "users_by_who")[0]
	if w.Column("addr") != nil || w.Column("who") == nil || w.PartitionKey[0] != "who" || w.Column("seen").Type.Reversed != true {
		t.Errorf("view with a column list %+v", w)
	}

	// Dropped columns stay, marked; a column added later is there.
	oa := sc.Lookup("legacy_tables", "legacy_oa_simple")[0]
	if c := oa.Column("gone"); c == nil || !c.Dropped {
		t.Errorf("dropped column: %+v", c)
	}
	if c := oa.Column("notes"); c == nil || c.Dropped || c.Type.String() != m+"ListType("+m+"UTF8Type)" {
		t.Errorf("added column: %+v", c)
	}
	if oa.Column("val").Dropped {
		t.Error("val marked dropped")
	}
	// gc_grace_seconds is kept where the statement sets it (the merge's
	// --purge reads it).
	if nc := sc.Lookup("legacy_tables", "legacy_nc_clust")[0]; !nc.HasGCGrace || nc.GCGraceSeconds != 864000 {
		t.Errorf("gc_grace_seconds: %v %d", nc.HasGCGrace, nc.GCGraceSeconds)
	}
	if oa.HasGCGrace {
		t.Errorf("gc_grace_seconds of a table without it: %d", oa.GCGraceSeconds)
	}

	// Frozen-ness is kept for columns and for the fields of user types: a
	// frozen<udt> column is frozen (one cell), a bare udt column is not
	// (a cell per field, Cassandra 3.6+), and each field keeps its own.
	u := sc.Lookup("legacy_tables", "Users")[0]
	if u.Table != "Users" || strings.Join(u.PartitionKey, ",") != "id,Day" {
		t.Errorf("quoted names: %q %q", u.Table, u.PartitionKey)
	}
	who, addr, prior := u.Column("who").Type, u.Column("addr").Type, u.Column("prior").Type
	if !who.Frozen || who.Name != "Person" || len(who.FieldNames) != 2 || !who.Params[1].Frozen || who.Params[1].Name != "address" {
		t.Errorf("who = %+v", who)
	}
	if addr.Frozen || !addr.IsMultiCell() || len(addr.FieldNames) != 5 {
		t.Errorf("addr = %s frozen=%v", addr.CQL(), addr.Frozen)
	}
	if !prior.Frozen || prior.IsMultiCell() {
		t.Errorf("prior = %s frozen=%v", prior.CQL(), prior.Frozen)
	}
	def := sc.Types["legacy_tables.address"]
	if def == nil || def.Frozen || !def.Params[3].Frozen || def.Params[4].Frozen {
		t.Errorf("type address as defined: %+v", def)
	}
	if c := u.Column("vec"); c.Type.CQL() != "vector<float, 3>" {
		t.Errorf("vec %s", c.Type.CQL())
	}
}

// A view whose base table is not in the script is left out and said why;
// the rest of the script is read.
func TestParseSchemaViewWithoutBase(t *testing.T) {
	sc, err := ParseSchema(`CREATE MATERIALIZED VIEW ks.v AS SELECT * FROM ks.t WHERE k IS NOT NULL PRIMARY KEY (k);
CREATE TABLE ks.u (k int PRIMARY KEY);`)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Tables) != 1 || sc.Unresolved["ks.v"] == nil || !strings.Contains(sc.Unresolved["ks.v"].Error(), "ks.t") {
		t.Errorf("tables %d, unresolved %v", len(sc.Tables), sc.Unresolved)
	}
}

// TestParseSchemaIndexes reads CREATE INDEX and CREATE CUSTOM INDEX as
// cqlsh's DESCRIBE prints them (the fixture: a regular index and an SAI
// one) and in the other shapes Cassandra's grammar takes: each joins its
// table's Indexes as system_schema.indexes would hold it, and Describe
// prints the fixture's statements back as they were.
func TestParseSchemaIndexes(t *testing.T) {
	src, err := os.ReadFile("testdata/describe_legacy_tables.cql")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := ParseSchema(string(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, stmt, impl string }{
		{"legacy_nc_clust", "CREATE INDEX legacy_nc_clust_val_idx ON legacy_tables.legacy_nc_clust (val);", IndexRegular},
		{"legacy_nc_simple", "CREATE CUSTOM INDEX legacy_nc_simple_val_sai ON legacy_tables.legacy_nc_simple (val) USING 'StorageAttachedIndex' WITH OPTIONS = {'case_sensitive': 'false', 'normalize': 'true'};", IndexSAI},
	} {
		ts := sc.Lookup("legacy_tables", c.table)[0]
		if len(ts.Indexes) != 1 || ts.Indexes[0].Target() != "val" || ts.Indexes[0].Implementation() != c.impl {
			t.Errorf("%s: indexes %+v", c.table, ts.Indexes)
		}
		if d := ts.Describe(false); !strings.Contains(d, "\n"+c.stmt+"\n") || !strings.Contains(string(src), c.stmt) {
			t.Errorf("%s: Describe does not print %s:\n%s", c.table, c.stmt, d)
		}
	}
	if ix := sc.Lookup("other", "legacy_nc_simple")[0].Indexes; len(ix) != 0 {
		t.Errorf("an index of legacy_tables.legacy_nc_simple went to other.legacy_nc_simple: %+v", ix)
	}

	sc, err = ParseSchema(`USE ks;
CREATE TABLE t (k int PRIMARY KEY, v text, m map<text, int>, "Quoted" int, l frozen<list<int>>);
CREATE INDEX ON t (v);
CREATE INDEX IF NOT EXISTS by_key ON ks.t (KEYS(m));
CREATE INDEX by_val ON t (m);
CREATE INDEX full_l ON t (full(l));
CREATE CUSTOM INDEX sasi ON t ("Quoted") USING 'org.apache.cassandra.index.sasi.SASIIndex' WITH OPTIONS = {'mode': 'CONTAINS'};
CREATE INDEX s ON t (v) USING 'sai';
CREATE INDEX legacy ON t (entries(m)) USING 'legacy_local_table';
CREATE INDEX by_key ON t ("Quoted");
CREATE INDEX IF NOT EXISTS again ON t (v);
CREATE INDEX "t_Quoted_idx" ON t (keys(m)) USING 'sai';
CREATE CUSTOM INDEX ON t ("Quoted") USING 'StorageAttachedIndex';
CREATE INDEX ON other.x (v);
CREATE TABLE u (k int PRIMARY KEY);`)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ix := range sc.Lookup("ks", "t")[0].Indexes {
		got[ix.Name] = fmt.Sprintf("%s %s %s %v", ix.Kind, ix.Target(), ix.Implementation(), ix.Options)
	}
	want := map[string]string{
		"t_v_idx": "COMPOSITES v 2i map[target:v]",
		"by_key":  "COMPOSITES keys(m) 2i map[target:keys(m)]",
		"by_val":  "COMPOSITES values(m) 2i map[target:values(m)]",
		"full_l":  "COMPOSITES full(l) 2i map[target:full(l)]",
		"sasi":    `CUSTOM "Quoted" SASI map[class_name:org.apache.cassandra.index.sasi.SASIIndex mode:CONTAINS target:"Quoted"]`,
		"s":       "CUSTOM v SAI map[class_name:sai target:v]",
		"legacy":  "COMPOSITES entries(m) 2i map[target:entries(m)]",
		// a name the keyspace has (by_key) or an index equal but for its
		// name (again, t_v_idx's) is refused; an unnamed index takes the
		// next free name
		"t_Quoted_idx":   "CUSTOM keys(m) SAI map[class_name:sai target:keys(m)]",
		"t_Quoted_idx_1": `CUSTOM "Quoted" SAI map[class_name:StorageAttachedIndex target:"Quoted"]`,
	}
	if !maps.Equal(got, want) {
		t.Errorf("indexes\n got %v\nwant %v", got, want)
	}
	if len(sc.Tables) != 2 {
		t.Errorf("the statement after an index of an undefined table was not read: %d tables", len(sc.Tables))
	}

	for _, bad := range []struct{ src, want string }{
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE CUSTOM INDEX x ON t (v);", "without USING"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE INDEX x ON t (nope);", "no column nope"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE INDEX x ON t (k, v);", "only a CUSTOM index"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE INDEX x ON t (sum(v));", "expected KEYS, VALUES, ENTRIES or FULL"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE INDEX x t (v);", "expected ON"},
		{"CREATE TABLE t (k int PRIMARY KEY, v text); CREATE CUSTOM INDEX x ON t (v) USING 'sai' WITH OPTIONS = {'a' 'b'};", "'option': 'value'"},
	} {
		if _, err := ParseSchema(bad.src); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: %v, want %q", bad.src, err, bad.want)
		}
	}
}

// OptionMap reads a map option as a node's schema prints it (nodeschema's
// option text, DESCRIBE's), quotes doubled inside strings; a value that
// is not a map of strings is an error naming the option.
func TestOptionMap(t *testing.T) {
	ts := &TableSchema{Options: []Option{
		{Name: "compression", Value: "{'chunk_length_in_kb': '16', 'class': 'org.apache.cassandra.io.compress.LZ4Compressor'}"},
		{Name: "caching", Value: "{'keys': 'ALL', 'rows_per_partition': 'it''s'}"},
		{Name: "extensions", Value: "{}"},
		{Name: "bloom_filter_fp_chance", Value: "0.01"},
		{Name: "comment", Value: "{'a': 1}"},
	}}
	for name, want := range map[string]map[string]string{
		"compression": {"chunk_length_in_kb": "16", "class": "org.apache.cassandra.io.compress.LZ4Compressor"},
		"caching":     {"keys": "ALL", "rows_per_partition": "it's"},
		"extensions":  {},
	} {
		got, ok, err := ts.OptionMap(name)
		if !ok || err != nil || !maps.Equal(got, want) {
			t.Errorf("%s: %v %v %v, want %v", name, got, ok, err, want)
		}
	}
	for _, name := range []string{"bloom_filter_fp_chance", "comment"} {
		if _, ok, err := ts.OptionMap(name); !ok || err == nil || !strings.Contains(err.Error(), "option "+name) {
			t.Errorf("%s: ok %v, error %v; want an error naming it", name, ok, err)
		}
	}
	if _, ok, _ := ts.OptionMap("compaction"); ok {
		t.Error("an option the table does not have")
	}
	if v, ok := ts.Option("bloom_filter_fp_chance"); !ok || v != "0.01" {
		t.Errorf("Option: %q %v", v, ok)
	}
}
