package workload

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/cqltype"
)

// The example profiles of Cassandra's repository (testdata/stress/README.md).
var stressExamples = []string{
	"cqlstress-example.yaml", "cqlstress-counter-example.yaml", "cqlstress-insanity-example.yaml",
	"cqlstress-lwt-example.yaml", "stress-example.yaml", "stress-lwt-example.yaml",
}

func loadStress(t testing.TB, name string) *Profile {
	t.Helper()
	p, err := LoadProfile(filepath.Join("testdata", "stress", name))
	if err != nil {
		t.Fatal(err)
	}
	if p.Stress == nil {
		t.Fatalf("%s: not read as a cassandra-stress profile", name)
	}
	return p
}

// stressYAMLOf writes a small profile around a table.
func stressYAMLOf(table, columnspec, insert string) string {
	var b strings.Builder
	b.WriteString("keyspace: ks\ntable: t\ntable_definition: |\n  " + strings.ReplaceAll(table, "\n", "\n  ") + "\n")
	if columnspec != "" {
		b.WriteString("columnspec:\n" + columnspec + "\n")
	}
	if insert != "" {
		b.WriteString("insert:\n" + insert + "\n")
	}
	b.WriteString("queries:\n  q:\n    cql: select * from t\n    fields: samerow\n")
	return b.String()
}

func parseStressYAML(t *testing.T, src string) *Profile {
	t.Helper()
	p, err := ParseProfile([]byte(src), "p.yaml")
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return p
}

// drain replays n ops and calls fn with each.
func drain(t testing.TB, p *Profile, n int64, fn func(i int64, op *Op)) {
	t.Helper()
	g, err := NewGenerator(p, n)
	if err != nil {
		t.Fatal(err)
	}
	var op Op
	for i := int64(0); ; i++ {
		ok, err := g.Next(&op)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if i != n {
				t.Fatalf("%d ops, want %d", i, n)
			}
			return
		}
		fn(i, &op)
	}
}

// Every example profile is read as a cassandra-stress profile of its table,
// lists the fields it ignores, and replays 20,000 ops whose keys, clustering
// values and cells fit the table.
func TestStressExamples(t *testing.T) {
	want := map[string]struct {
		name, table string
		ignored     []string
		ck          int
	}{
		"cqlstress-example.yaml":         {"stresscql.typestest", "stresscql.typestest", []string{"keyspace_definition", "insert.batchtype", "queries", "token_range_queries"}, 6},
		"cqlstress-counter-example.yaml": {"stresscql.counttest", "stresscql.counttest", []string{"keyspace_definition", "insert.batchtype", "queries"}, 0},
		"cqlstress-insanity-example.yaml": {"stresscql.insanitytest", "stresscql.insanitytest",
			[]string{"keyspace_definition", "insert.batchtype", "queries"}, 1},
		"cqlstress-lwt-example.yaml": {"cqlstress_lwt_example.blogposts", "cqlstress_lwt_example.blogposts",
			[]string{"keyspace_definition", "insert.batchtype", "insert.condition", "queries"}, 1},
		"stress-example.yaml":     {"example", "example.staff_activities", []string{"spacenam", "keyspace_definition", "insert.batchtype", "queries"}, 1},
		"stress-lwt-example.yaml": {"stresscql.blogposts", "stresscql.blogposts", []string{"keyspace_definition", "insert.batchtype", "queries"}, 1},
	}
	for _, name := range stressExamples {
		p := loadStress(t, name)
		w := want[name]
		st := p.Stress
		if p.Name != w.name || st.QualifiedName() != w.table || !slices.Equal(st.Ignored, w.ignored) || st.File != filepath.Join("testdata", "stress", name) {
			t.Errorf("%s: name %q table %q ignored %v file %q; want %q %q %v", name, p.Name, st.QualifiedName(), st.Ignored, st.File, w.name, w.table, w.ignored)
		}
		g, err := NewGenerator(p, 20000)
		if err != nil {
			t.Fatal(err)
		}
		sch := g.Schema()
		if len(sch.Clustering) != w.ck {
			t.Errorf("%s: %d clustering columns, want %d", name, len(sch.Clustering), w.ck)
		}
		keys := map[string]bool{}
		drain(t, p, 20000, func(i int64, op *Op) {
			if op.Kind != OpWrite || len(op.Key) == 0 || len(op.Clustering) != w.ck || len(op.Cells) == 0 {
				t.Fatalf("%s: op %d: %+v", name, i, op)
			}
			for _, c := range op.Cells {
				if c.Column < 0 || c.Column >= len(sch.Columns) {
					t.Fatalf("%s: op %d: cell of column %d", name, i, c.Column)
				}
			}
			keys[string(op.Key)] = true
		})
		t.Logf("%s: %d partitions in 20000 ops", name, len(keys))
	}
}

// Values have the table's types: every key component, clustering value and
// cell value decodes as its column's type (format/cqltype's decoder).
func TestStressValuesHaveTheTablesTypes(t *testing.T) {
	for _, name := range stressExamples {
		p := loadStress(t, name)
		ts := p.Stress.Schema
		var keyType *cqltype.Type
		if len(ts.PartitionKey) == 1 {
			keyType = ts.Column(ts.PartitionKey[0]).Type
		} else {
			class := "org.apache.cassandra.db.marshal.CompositeType("
			for i, k := range ts.PartitionKey {
				if i > 0 {
					class += ","
				}
				class += ts.Column(k).Type.Class
			}
			var err error
			if keyType, err = cqltype.Parse(class + ")"); err != nil {
				t.Fatal(err)
			}
		}
		cols := p.Stress.Columns()
		drain(t, p, 2000, func(i int64, op *Op) {
			if _, err := keyType.Format(op.Key); err != nil {
				t.Fatalf("%s: key %x: %v", name, op.Key, err)
			}
			for d, v := range op.Clustering {
				if _, err := ts.Column(ts.Clustering[d].Name).Type.Format(v); err != nil {
					t.Fatalf("%s: clustering %d %x: %v", name, d, v, err)
				}
			}
			for _, c := range op.Cells {
				typ := ts.Column(cols[c.Column].Name).Type
				if typ.IsCounter() {
					if _, err := cqltype.CounterTotal(c.Value); err != nil {
						t.Fatalf("%s: counter %x: %v", name, c.Value, err)
					}
					continue
				}
				if _, err := typ.Format(c.Value); err != nil {
					t.Fatalf("%s: %s value %x: %v", name, cols[c.Column].Name, c.Value, err)
				}
			}
		})
	}
}

// rowsOf is the number of rows of the partition of seed s.
func rowsOf(st *StressTable, sp *StressPartition, s int64, profileSeed uint64) int {
	st.Load(sp, s, profileSeed)
	n := 1
	for _, l := range sp.Levels() {
		n *= len(l)
	}
	return n
}

// Rows per partition follow the cluster distributions: for
// cqlstress-example, date uniform(20..40) times lval uniform(1..4) (the
// other clustering columns fixed(1)) is 20..160 rows, 75 on average (a
// little less: lval's four draws from gaussian(1..1000) can repeat); for
// the documentation's staff example, when uniform(20..500) is 20..500 rows.
// Every bound is reached over enough partitions (the profile seed varies
// them: name's population of 10 leaves few partitions per seed).
func TestStressRowsPerPartitionFollowCluster(t *testing.T) {
	for _, c := range []struct {
		file           string
		keys           int64 // distinct partitions of the profile per seed
		profileSeeds   uint64
		min, max       int
		meanLo, meanHi float64
	}{
		{"cqlstress-example.yaml", 40, 100, 20, 160, 72, 76},
		{"stress-example.yaml", 10, 600, 20, 500, 255, 265},
		{"cqlstress-insanity-example.yaml", 40, 200, 1, 20, 9.5, 10.5},
		{"cqlstress-lwt-example.yaml", 40, 2, 1000, 1000, 1000, 1000},
		{"cqlstress-counter-example.yaml", 40, 2, 1, 1, 1, 1},
	} {
		p := loadStress(t, c.file)
		var sp StressPartition
		lo, hi, sum, n := math.MaxInt, 0, 0, 0
		for ps := uint64(0); ps < c.profileSeeds; ps++ {
			for s := int64(1); s <= c.keys; s++ {
				r := rowsOf(p.Stress, &sp, s, ps)
				lo, hi, sum, n = min(lo, r), max(hi, r), sum+r, n+1
			}
		}
		mean := float64(sum) / float64(n)
		if lo != c.min || hi != c.max || mean < c.meanLo || mean > c.meanHi {
			t.Errorf("%s: %d partitions of %d..%d rows, %.1f on average; want %d..%d, %.0f..%.0f", c.file, n, lo, hi, mean, c.min, c.max, c.meanLo, c.meanHi)
		}
	}
}

// The replay writes exactly the rows the model gives each partition: after
// enough ops every row of each of the staff example's ten partitions (a
// population of 10 names) has been written, and no other.
func TestStressReplayFillsThePartitions(t *testing.T) {
	p := loadStress(t, "stress-example.yaml")
	want := map[string]map[string]bool{}
	var sp StressPartition
	for s := int64(1); s <= 1000; s++ {
		p.Stress.Load(&sp, s, p.Seed)
		if want[string(sp.Key())] == nil {
			rows := map[string]bool{}
			for _, v := range sp.Levels()[0] {
				rows[string(v)] = true
			}
			want[string(sp.Key())] = rows
		}
	}
	if len(want) != 10 {
		t.Fatalf("%d names, want the population's 10", len(want))
	}
	got := map[string]map[string]bool{}
	drain(t, p, 100000, func(i int64, op *Op) {
		if got[string(op.Key)] == nil {
			got[string(op.Key)] = map[string]bool{}
		}
		got[string(op.Key)][string(op.Clustering[0])] = true
		if len(op.Cells) != 1 || op.HasLiveness {
			t.Fatalf("op %d: want an UPDATE of what (no row marker), got %+v", i, op)
		}
		if l := len(op.Cells[0].Value); l < 10 || l > 100 {
			t.Fatalf("op %d: what of %d characters, want normal(10..100,50)", i, l)
		}
	})
	for k, rows := range want {
		if len(got[k]) != len(rows) {
			t.Errorf("partition %x: %d rows written, want its %d", k, len(got[k]), len(rows))
		}
		for r := range got[k] {
			if !rows[r] {
				t.Errorf("partition %x: row %x is not one of its rows", k, r)
			}
		}
	}
}

// insert.partitions is the partitions of one operation, whose rows share a
// timestamp; insert.select is rolled for each value of the first
// clustering level, which brings every row below it.
func TestStressInsertPartitionsAndSelect(t *testing.T) {
	p := parseStressYAML(t, stressYAMLOf("CREATE TABLE t (k bigint PRIMARY KEY, v int)", "  - {name: k, population: uniform(1..1B)}", "  partitions: uniform(1..50)"))
	perOp := map[int64]int{}
	keys := map[string]bool{}
	drain(t, p, 100000, func(i int64, op *Op) {
		perOp[op.Cells[0].Timestamp]++
		keys[string(op.Key)] = true
	})
	lo, hi := math.MaxInt, 0
	for _, n := range perOp {
		lo, hi = min(lo, n), max(hi, n)
	}
	// the last operation may be cut short by the op count
	if mean := 100000 / float64(len(perOp)); lo != 1 || hi != 50 || math.Abs(mean-25.5) > 1 || len(keys) < 99990 {
		t.Errorf("%d operations of %d..%d partitions, %.1f on average (%d distinct); want 1..50, 25.5", len(perOp), lo, hi, mean, len(keys))
	}

	table := "CREATE TABLE t (k bigint, a int, b int, v text, PRIMARY KEY (k, a, b))"
	spec := "  - {name: a, cluster: fixed(10)}\n  - {name: b, cluster: fixed(5)}\n  - {name: k, population: uniform(1..1B)}"
	p = parseStressYAML(t, stressYAMLOf(table, spec, "  partitions: fixed(1)\n  select: fixed(1)/4"))
	type visit struct {
		rows int
		as   map[string]int
	}
	byOp := map[int64]*visit{}
	drain(t, p, 200000, func(i int64, op *Op) {
		v := byOp[op.Cells[0].Timestamp]
		if v == nil {
			v = &visit{as: map[string]int{}}
			byOp[op.Cells[0].Timestamp] = v
		}
		v.rows++
		v.as[string(op.Clustering[0])]++
	})
	var rows float64
	for _, v := range byOp {
		rows += float64(v.rows)
		for a, n := range v.as {
			if n != 5 {
				t.Fatalf("a=%x brought %d rows, want all 5 below it", a, n)
			}
		}
	}
	// 10 values of a chosen with chance 1/4 each, an empty choice skipped:
	// 2.5 / (1 - 0.75^10) values of 5 rows per operation.
	if mean, want := rows/float64(len(byOp)), 5*2.5/(1-math.Pow(0.75, 10)); math.Abs(mean-want) > 0.2 {
		t.Errorf("%.2f rows per operation, want %.2f", mean, want)
	}
}

// Every write of a row sets the statics; insert.row-population leaves the
// value columns past its share null (cell tombstones); a table of key
// columns only is written with INSERT, a row marker and no cell.
func TestStressRowShapes(t *testing.T) {
	table := "CREATE TABLE t (k int, c int, s text static, a int, b int, d int, PRIMARY KEY (k, c))"
	p := parseStressYAML(t, stressYAMLOf(table, "  - {name: c, cluster: fixed(3)}", "  row-population: fixed(1)/2"))
	cols := p.Stress.Columns()
	if names := fmt.Sprint(cols); names != "[{a false false} {b false false} {d false false} {s true false}]" {
		t.Fatalf("columns %s", names)
	}
	drain(t, p, 300, func(i int64, op *Op) {
		var set, null []string
		for _, c := range op.Cells {
			if c.Tombstone {
				null = append(null, cols[c.Column].Name)
			} else {
				set = append(set, cols[c.Column].Name)
			}
		}
		if fmt.Sprint(set, null) != "[a b] [d s]" || op.HasLiveness {
			t.Fatalf("op %d sets %v and nulls %v (marker %v); want a, b set, d and s null, no marker", i, set, null, op.HasLiveness)
		}
	})
	p = parseStressYAML(t, stressYAMLOf("CREATE TABLE t (k int, c int, PRIMARY KEY (k, c))", "", ""))
	drain(t, p, 100, func(i int64, op *Op) {
		if !op.HasLiveness || len(op.Cells) != 0 {
			t.Fatalf("op %d of a key-only table: marker %v, %d cells", i, op.HasLiveness, len(op.Cells))
		}
	})
}

// The counter profile writes counter cells: the context of one global
// shard a counter update leaves in the memtable, of count 1 (the column's
// population is fixed(1)).
func TestStressCounterCells(t *testing.T) {
	p := loadStress(t, "cqlstress-counter-example.yaml")
	drain(t, p, 1000, func(i int64, op *Op) {
		if len(op.Cells) != 1 || op.HasLiveness {
			t.Fatalf("op %d: %+v", i, op)
		}
		c := op.Cells[0]
		shards, err := cqltype.CounterShards(c.Value)
		if err != nil || len(c.Value) != 36 || len(shards) != 1 || !shards[0].Global || shards[0].Count != 1 || shards[0].Clock != 1 {
			t.Fatalf("op %d: counter cell %x: %+v %v", i, c.Value, shards, err)
		}
		if l := len(op.Key); l < 1 || l > 4 {
			t.Fatalf("op %d: name of %d characters, want uniform(1..4)", i, l)
		}
	})
}

// Collections: `col = col + ?` of size elements each: a set or a map adds
// distinct elements (the same ones at each write of the row), a list
// appends new ones at every write.
func TestStressCollections(t *testing.T) {
	table := "CREATE TABLE t (k int PRIMARY KEY, l list<int>, m map<int, text>, s set<text>)"
	p := parseStressYAML(t, stressYAMLOf(table, "  - {name: k, population: fixed(1)}\n  - {name: l, size: fixed(3)}\n  - {name: m, size: fixed(3)}\n  - {name: s, size: uniform(2..4)}", ""))
	listPaths := map[string]bool{}
	var sets []string
	drain(t, p, 50, func(i int64, op *Op) {
		per := map[int]int{}
		paths := map[string]bool{}
		var set []string
		for _, c := range op.Cells {
			per[c.Column]++
			key := fmt.Sprint(c.Column, c.Path)
			if paths[key] {
				t.Fatalf("op %d: column %d has path %x twice", i, c.Column, c.Path)
			}
			paths[key] = true
			switch c.Column {
			case 0:
				listPaths[string(c.Path)] = true
				if len(c.Value) != 4 || len(c.Path) != 16 {
					t.Fatalf("op %d: list cell %x=%x", i, c.Path, c.Value)
				}
			case 2:
				set = append(set, string(c.Path))
				if len(c.Value) != 0 || len(c.Path) < 2 || len(c.Path) > 4 {
					t.Fatalf("op %d: set cell %x=%x", i, c.Path, c.Value)
				}
			}
		}
		if per[0] != 3 || per[1] != 3 || per[2] < 1 || per[2] > 4 {
			t.Fatalf("op %d: %v cells per column", i, per)
		}
		sets = append(sets, fmt.Sprint(set))
	})
	if len(listPaths) != 150 {
		t.Errorf("%d distinct list element paths in 50 writes of 3, want 150", len(listPaths))
	}
	for _, s := range sets {
		if s != sets[0] {
			t.Fatalf("the one row's set differs between writes: %s and %s", sets[0], s)
		}
	}
}

// The stream is a function of the profile and its seed.
func TestStressDeterministic(t *testing.T) {
	p := loadStress(t, "cqlstress-example.yaml")
	a, b := streamHash(t, p, 5000), streamHash(t, p, 5000)
	p.Seed = 2
	if c := streamHash(t, p, 5000); a != b || a == c {
		t.Errorf("stream hashes %x %x (seed 2: %x)", a, b, c)
	}
}

func TestStressNoAllocationPerOp(t *testing.T) {
	for _, name := range stressExamples {
		p := loadStress(t, name)
		g, err := NewGenerator(p, 1<<40)
		if err != nil {
			t.Fatal(err)
		}
		var op Op
		for i := 0; i < 5000; i++ {
			g.Next(&op)
		}
		if n := testing.AllocsPerRun(2000, func() { g.Next(&op) }); n != 0 {
			t.Errorf("%s: %.2f allocations per op", name, n)
		}
	}
}

// Errors name the file and the field, and what was expected.
func TestStressProfileErrors(t *testing.T) {
	table := "CREATE TABLE t (k int, c int, v text, PRIMARY KEY (k, c))"
	ok := stressYAMLOf(table, "  - {name: c, cluster: uniform(1..5)}", "  partitions: fixed(1)")
	parseStressYAML(t, ok)
	for _, c := range []struct{ src, want string }{
		{ok + "bogus: 1\n", `profile p.yaml: bogus: line 13: unknown field of a cassandra-stress profile`},
		{ok + "partitions: 5\n", `profile p.yaml: partitions: line 13: unknown field of a cassandra-stress profile`},
		{strings.Replace(ok, "cluster:", "clustr:", 1), `columnspec[0].clustr: line 6: unknown column spec option`},
		{strings.Replace(ok, "name: c,", "name: x,", 1), `columnspec[0].name: table ks.t has no column "x" (columns: k, c, v)`},
		{strings.Replace(ok, "uniform(1..5)", "uniform(5..1)", 1), `columnspec[0].cluster: distribution "uniform(5..1)": min 5 is above max 1`},
		{strings.Replace(ok, "uniform(1..5)", "fixed(2M)", 1), `columnspec[0].cluster: fixed(2M) yields up to 2000000 values of c per partition level; at most 1048576`},
		{strings.Replace(ok, "partitions: fixed(1)", "partitons: fixed(1)", 1), `insert.partitons: line 8: unknown insert option`},
		{strings.Replace(ok, "partitions: fixed(1)", "partitions: fixed(0)", 1), `insert.partitions: fixed(0) never writes a partition`},
		{strings.Replace(ok, "partitions: fixed(1)", "select: fixed(0)/1", 1), `insert.select: fixed(0)/1 never selects a row`},
		{strings.Replace(ok, "partitions: fixed(1)", "select: fixed(1)", 1), `insert.select: ratio "fixed(1)": expected distribution/divisor`},
		{strings.Replace(ok, "partitions: fixed(1)", "batchtype: SOMETIMES", 1), `insert.batchtype: "SOMETIMES": want LOGGED, UNLOGGED or COUNTER`},
		{strings.Replace(ok, "table: t\n", "table: u\n", 1), `table_definition: creates table "t", but the profile's table is "u"`},
		{strings.Replace(ok, "keyspace: ks\n", "", 1), `keyspace: missing`},
		{strings.Replace(ok, "(k int,", "(k int, d duration,", 1), `column d: type duration is not supported`},
		{strings.Replace(ok, "(k int,", "(k int, f frozen<list<int>>,", 1), `column f: type frozen<list<int>> is not supported`},
		{strings.Replace(ok, "v text", "v counter", 1) + "", ``},
		{strings.Replace(ok, "(k int,", "(k int, n counter,", 1), `table_definition: a table cannot mix counter and non-counter columns`},
		{strings.Replace(ok, "PRIMARY KEY (k, c)", "PRIMARY KEY (k c)", 1), `table_definition: `},
		{strings.Replace(ok, "fields: samerow", "fields: somerow", 1), `queries: line 12: q.fields: "somerow", want samerow or multirow`},
		{"keyspace: ks\ntable: t\n", `table_definition: missing`},
		{strings.Replace(ok, "uniform(1..5)", "uniform(1..9000000000000000000)", 1), `bounds must be within`},
		{strings.Replace(strings.Replace(ok, "(k int,", "(k text, j text,", 1), "PRIMARY KEY (k, c)", "PRIMARY KEY ((k, j), c)", 1) +
			"", ``},
		{strings.Replace(strings.Replace(strings.Replace(ok, "(k int,", "(k text, j text,", 1), "PRIMARY KEY (k, c)", "PRIMARY KEY ((k, j), c)", 1),
			"name: c, cluster: uniform(1..5)}", "name: c}\n  - {name: k, size: fixed(40000)}\n  - {name: j, size: fixed(30000)}", 1),
			`columnspec: partition keys of up to 70006 bytes; Cassandra's limit is 65535`},
		{strings.Replace(ok, "name: c, cluster: uniform(1..5)}", "name: c, size: fixed(70000)}", 1), ``},
		{strings.Replace(strings.Replace(ok, "(k int, c int,", "(k int, c text,", 1), "name: c, cluster: uniform(1..5)}", "name: c, size: fixed(70000)}", 1),
			`columnspec[0].size: fixed(70000) allows values of 70000 bytes; a clustering value is at most 65535`},
	} {
		_, err := ParseProfile([]byte(c.src), "p.yaml")
		if c.want == "" {
			if err != nil {
				t.Errorf("%v\n%s", err, c.src)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// Fields with no effect are accepted and listed; a cluster on a column that
// is not a clustering column and a size on a fixed-width type among them.
func TestStressIgnoredFields(t *testing.T) {
	src := "specname: mine\n" + stressYAMLOf("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))",
		"  - {name: v, cluster: fixed(3), size: fixed(9)}\n  - {Name: c, SIZE: fixed(2)}",
		"  batchtype: UNLOGGED\n  condition: IF v = NULL") +
		"token_range_queries:\n  all:\n    columns: '*'\n    page_size: 10\nextra_definitions:\n  - CREATE INDEX ON t (v)\nkeyspace_definition: CREATE KEYSPACE ks\n"
	p := parseStressYAML(t, src)
	want := []string{"specname", "columnspec[0].size", "columnspec[0].cluster", "columnspec[1].size", "insert.batchtype", "insert.condition",
		"queries", "token_range_queries", "extra_definitions", "keyspace_definition"}
	got := slices.Clone(p.Stress.Ignored)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || p.Name != "mine" {
		t.Errorf("ignored %v, want %v (name %q)", p.Stress.Ignored, want, p.Name)
	}
}
