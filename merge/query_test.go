package merge_test

// The query command's results held to the independent reconciliation: the
// live rows of the reconciled dumps, filtered by the same predicate
// written here in Go, against what internal/query returns (its JSON).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/cql"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/query"
	"github.com/sstabletool/sstabletool/merge"
)

// queryCase is a SELECT and the same selection in Go.
type queryCase struct {
	cql string
	// match selects a row by its partition key (as stored) and printed
	// clustering values; full says the query restricts no clustering
	// column (a partition with only static data live gives one row).
	match func(key []byte, clust []json.RawMessage) bool
	full  bool
	limit int
	// byKey: the query restricts the partition key, whose partitions come
	// in the key's order (not the token order of a range).
	byKey bool
	cols  []string // nil: *
}

// runQuery is what internal/query returns, decoded.
func runQuery(t *testing.T, tbl *merge.Table, names query.Names, o merge.Options, stmt string) []map[string]any {
	t.Helper()
	sel, err := cql.Parse(stmt)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	plan, err := query.NewPlan(sel, tbl, names)
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	var out []map[string]any
	err = plan.Run(o, func(r query.Row) error {
		out = append(out, decodeJSON(t, query.AppendJSON(nil, r)).(map[string]any))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
	return out
}

func decodeJSON(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}

// expectedRows is the reconciliation's live rows that c selects, in token
// then clustering order, as column -> JSON value.
func expectedRows(t *testing.T, tbl *merge.Table, names query.Names, o merge.Options, parts map[string]*jPartition, c queryCase) []map[string]any {
	t.Helper()
	type keyed struct {
		key []byte
		p   *jPartition
	}
	var ps []keyed
	for _, p := range parts {
		ps = append(ps, keyed{keyBytes(t, tbl, p.Partition.Key), p})
	}
	slices.SortFunc(ps, func(a, b keyed) int {
		if c.byKey {
			return tbl.KeyType().Compare(a.key, b.key)
		}
		return tbl.Partitioner().CompareKeys(a.key, b.key)
	})
	colType := map[string]*cqltype.Type{}
	static := map[string]bool{}
	for i, col := range tbl.Schema().Static {
		colType[col.Name], static[col.Name] = tbl.StaticTypes()[i], true
	}
	for i, col := range tbl.Schema().Regular {
		colType[col.Name] = tbl.RegularTypes()[i]
	}
	var all []string
	all = append(all, names.PartitionKey...)
	all = append(all, names.Clustering...)
	var rest []string
	for n := range colType {
		rest = append(rest, n)
	}
	slices.Sort(rest)
	all = append(all, rest...)
	cols := c.cols
	if cols == nil {
		cols = all
	}
	keyJSON := func(key []byte) []any {
		kt := tbl.KeyType()
		if kt.Kind != cqltype.Composite {
			b, err := kt.AppendJSON(nil, key)
			if err != nil {
				t.Fatal(err)
			}
			return []any{decodeJSON(t, b)}
		}
		comps, _, err := kt.Components(key)
		if err != nil {
			t.Fatal(err)
		}
		var out []any
		for i, cp := range comps {
			b, _ := kt.Params[i].AppendJSON(nil, cp.Value)
			out = append(out, decodeJSON(t, b))
		}
		return out
	}
	var out []map[string]any
	for _, kp := range ps {
		var st *jRow
		var rowsOut []map[string]any
		for i := range kp.p.Rows {
			r := &kp.p.Rows[i]
			switch r.Type {
			case "static_block":
				st = r
				continue
			case "row":
			default:
				continue
			}
			if !c.match(kp.key, r.Clustering) || !rowLive(r) {
				continue
			}
			rowsOut = append(rowsOut, buildRow(t, cols, names, keyJSON(kp.key), r, st, colType, static))
		}
		if len(rowsOut) == 0 && c.full && st != nil && anyLive(st) && c.match(kp.key, nil) {
			rowsOut = append(rowsOut, buildRow(t, cols, names, keyJSON(kp.key), nil, st, colType, static))
		}
		out = append(out, rowsOut...)
	}
	if c.limit > 0 && len(out) > c.limit {
		out = out[:c.limit]
	}
	return out
}

func keyBytes(t *testing.T, tbl *merge.Table, key []string) []byte {
	t.Helper()
	var esc []string
	for _, k := range key {
		esc = append(esc, strings.ReplaceAll(k, ":", `\:`))
	}
	b, err := tbl.KeyType().FromString(strings.Join(esc, ":"))
	if err != nil {
		t.Fatalf("key %v: %v", key, err)
	}
	return b
}

// Live as Cassandra's isLive says: a TTL runs out when now reaches its
// expiration (sstabledump's "expired" flag says so only once now is past
// it).
var queryNow int64

func notExpired(at *string) bool {
	if at == nil {
		return true
	}
	n, err := strconv.ParseInt(*at, 10, 64)
	return err == nil && queryNow < n
}

func cellLive(c *jCell) bool { return c.Deletion == nil && notExpired(c.ExpiresAt) }

func anyLive(r *jRow) bool {
	for i := range r.Cells {
		if cellLive(&r.Cells[i]) {
			return true
		}
	}
	return false
}

func rowLive(r *jRow) bool {
	if l := r.Liveness; l != nil && l.Tstamp != "" && notExpired(l.ExpiresAt) {
		return true
	}
	return anyLive(r)
}

func buildRow(t *testing.T, cols []string, names query.Names, key []any, r, st *jRow, colType map[string]*cqltype.Type, static map[string]bool) map[string]any {
	row := map[string]any{}
	for _, name := range cols {
		if i := slices.Index(names.PartitionKey, name); i >= 0 {
			row[name] = key[i]
			continue
		}
		if i := slices.Index(names.Clustering, name); i >= 0 {
			row[name] = nil
			if r != nil {
				row[name] = decodeJSON(t, r.Clustering[i])
			}
			continue
		}
		src := r
		if static[name] {
			src = st
		}
		row[name] = nil
		if src == nil {
			continue
		}
		typ := colType[name]
		var parts []string
		var listPaths [][]byte
		found := false
		for i := range src.Cells {
			c := &src.Cells[i]
			if c.Name != name || !cellLive(c) {
				continue
			}
			found = true
			switch {
			case !typ.IsMultiCell():
				parts = append(parts, string(c.Value))
			case typ.Kind == cqltype.Set:
				parts = append(parts, string(c.Path[0]))
			case typ.Kind == cqltype.List:
				// In the order of the paths (timeuuids), which the
				// reconciliation does not keep.
				var u string
				_ = json.Unmarshal(c.Path[0], &u)
				pb, err := typ.ElementPathType().FromString(u)
				if err != nil {
					t.Fatal(err)
				}
				at, _ := slices.BinarySearchFunc(listPaths, pb, typ.ElementPathType().Compare)
				listPaths = slices.Insert(listPaths, at, pb)
				parts = slices.Insert(parts, at, string(c.Value))
			case typ.Kind == cqltype.Map:
				k := string(c.Path[0])
				if !strings.HasPrefix(k, `"`) {
					k = strconv.Quote(k)
				}
				parts = append(parts, k+": "+string(c.Value))
			default:
				t.Fatalf("column %s: the test does not build %s values", name, typ.CQL())
			}
		}
		if !found {
			continue
		}
		var s string
		switch {
		case !typ.IsMultiCell():
			s = parts[0]
		case typ.Kind == cqltype.Map:
			s = "{" + strings.Join(parts, ", ") + "}"
		default:
			s = "[" + strings.Join(parts, ", ") + "]"
		}
		row[name] = decodeJSON(t, []byte(s))
	}
	return row
}

func checkQueries(t *testing.T, paths []string, names query.Names, opts []merge.Options, cases []queryCase) {
	t.Helper()
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	for _, o := range opts {
		parts, _ := reconcile(t, tbl, paths, o, nil)
		queryNow = o.Now
		for _, c := range cases {
			got := sortSets(tbl, runQuery(t, tbl, names, o, c.cql))
			want := sortSets(tbl, expectedRows(t, tbl, names, o, parts, c))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("now %d: %s (-reconciled +query):\n%s", o.Now, c.cql, diff)
			}
			if len(got) == 0 && (strings.Contains(c.cql, "LIMIT") || !strings.Contains(c.cql, "WHERE")) {
				t.Errorf("now %d: %s: no rows; the case tests nothing", o.Now, c.cql)
			}
		}
	}
}

// sortSets orders the elements of set columns: the reconciliation keeps
// a collection's elements in no particular order (the merge's is checked
// against each sstable's by checkCellOrder).
func sortSets(tbl *merge.Table, rows []map[string]any) []map[string]any {
	sets := map[string]bool{}
	for i, c := range tbl.Schema().Static {
		sets[c.Name] = tbl.StaticTypes()[i].Kind == cqltype.Set
	}
	for i, c := range tbl.Schema().Regular {
		sets[c.Name] = tbl.RegularTypes()[i].Kind == cqltype.Set
	}
	for _, r := range rows {
		for name, v := range r {
			if a, ok := v.([]any); ok && sets[name] {
				slices.SortFunc(a, func(x, y any) int { return strings.Compare(fmt.Sprint(x), fmt.Sprint(y)) })
			}
		}
	}
	return rows
}

func intAt(c []json.RawMessage, i int) int64 {
	n, _ := strconv.ParseInt(string(c[i]), 10, 64)
	return n
}

// Generated histories at several times: before the TTLs run out, at the
// history's end and long after, with point lookups (= and IN on keys that
// exist and one that does not), clustering slices, token ranges, LIMIT and
// column lists.
func TestQueryMatchesReconciledDumpsOnHistories(t *testing.T) {
	for _, seed := range []uint64{1, 3} {
		paths, now := history(t, generate.HistoryProfile, 4, seed, 80)
		names := query.Names{Keyspace: "ks", Table: "history", PartitionKey: []string{"key"}, Clustering: []string{"clustering1"}}
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// Some keys of the table, in token order.
		var keys [][]byte
		sc, err := tbl.Scan(merge.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := sc.Next()
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				break
			}
			keys = append(keys, bytes.Clone(p.Header.Key))
		}
		tbl.Close()
		if len(keys) < 20 {
			t.Fatalf("%d partitions", len(keys))
		}
		keyText := func(k []byte) string { return strconv.FormatInt(int64(uint64FromBytes(k)), 10) }
		is := func(ks ...[]byte) func([]byte, []json.RawMessage) bool {
			return func(k []byte, _ []json.RawMessage) bool {
				for _, x := range ks {
					if bytes.Equal(k, x) {
						return true
					}
				}
				return false
			}
		}
		k1, k2, k3 := keys[3], keys[11], keys[17]
		tokOf := func(k []byte) int64 { return tbl.Partitioner().Token(k).Int64() }
		lo, hi := tokOf(keys[5]), tokOf(keys[14])
		cases := []queryCase{
			{cql: "SELECT * FROM ks.history", match: func([]byte, []json.RawMessage) bool { return true }, full: true},
			{cql: "SELECT * FROM history WHERE key = " + keyText(k1), match: is(k1), full: true},
			{cql: "SELECT * FROM ks.history WHERE key = 42", match: is([]byte{0, 0, 0, 0, 0, 0, 0, 42}), full: true},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE key IN (%s, %s, %s, %s)", keyText(k3), keyText(k1), keyText(k2), keyText(k1)), match: is(k1, k2, k3), full: true, byKey: true},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE key IN (%s, %s) AND clustering1 >= 3", keyText(k1), keyText(k2)),
				match: func(k []byte, c []json.RawMessage) bool { return is(k1, k2)(k, c) && c != nil && intAt(c, 0) >= 3 }, byKey: true},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE key = %s AND clustering1 > 1 AND clustering1 <= 5", keyText(k2)),
				match: func(k []byte, c []json.RawMessage) bool {
					return is(k2)(k, c) && c != nil && intAt(c, 0) > 1 && intAt(c, 0) <= 5
				}},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE key = %s AND clustering1 < 2", keyText(k3)),
				match: func(k []byte, c []json.RawMessage) bool { return is(k3)(k, c) && c != nil && intAt(c, 0) < 2 }},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE key = %s AND clustering1 = 0", keyText(k1)),
				match: func(k []byte, c []json.RawMessage) bool { return is(k1)(k, c) && c != nil && intAt(c, 0) == 0 }},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE token(key) > %d AND token(key) <= %d", lo, hi),
				match: func(k []byte, _ []json.RawMessage) bool { return tokOf(k) > lo && tokOf(k) <= hi }, full: true},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE token(key) >= %d", hi),
				match: func(k []byte, _ []json.RawMessage) bool { return tokOf(k) >= hi }, full: true},
			{cql: fmt.Sprintf("SELECT * FROM ks.history WHERE token(key) < %d LIMIT 7", lo),
				match: func(k []byte, _ []json.RawMessage) bool { return tokOf(k) < lo }, full: true, limit: 7},
			{cql: "SELECT score, key, tags, owner FROM ks.history LIMIT 25", match: func([]byte, []json.RawMessage) bool { return true }, full: true, limit: 25,
				cols: []string{"score", "key", "tags", "owner"}},
		}
		checkQueries(t, paths, names, []merge.Options{
			{Now: now - 3*86400, GCGraceSeconds: merge.DefaultGCGraceSeconds},
			{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds},
			{Now: now + 60*86400, GCGraceSeconds: merge.DefaultGCGraceSeconds},
		}, cases)
	}
}

func uint64FromBytes(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// The two sstables of a Cassandra 3.11 node's system_schema.types (text
// key and clustering, frozen and list columns).
func TestQueryMatchesReconciledDumpsOnRealTable(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11", "system_schema", "types-5a8b1ca866023f77a0459273d308917a")
	paths, err := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	if err != nil || len(paths) != 2 {
		t.Fatalf("want the two sstables of %s, found %v (%v)", dir, paths, err)
	}
	names := query.Names{Keyspace: "system_schema", Table: "types", PartitionKey: []string{"keyspace_name"}, Clustering: []string{"type_name"}}
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ks [][]byte
	sc, _ := tbl.Scan(merge.Options{Now: 1703358890})
	for {
		p, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			break
		}
		ks = append(ks, bytes.Clone(p.Header.Key))
	}
	tbl.Close()
	if len(ks) == 0 {
		t.Fatal("no partition")
	}
	str := func(c []json.RawMessage) string {
		var s string
		_ = json.Unmarshal(c[0], &s)
		return s
	}
	k := ks[0]
	cases := []queryCase{
		{cql: "SELECT * FROM system_schema.types", match: func([]byte, []json.RawMessage) bool { return true }, full: true},
		{cql: "SELECT * FROM system_schema.types WHERE keyspace_name = '" + string(k) + "'", match: func(b []byte, _ []json.RawMessage) bool { return bytes.Equal(b, k) }, full: true},
		{cql: "SELECT type_name, field_names FROM system_schema.types WHERE keyspace_name = '" + string(k) + "' AND type_name > 'a'",
			match: func(b []byte, c []json.RawMessage) bool { return bytes.Equal(b, k) && c != nil && str(c) > "a" }, cols: []string{"type_name", "field_names"}},
		{cql: "SELECT * FROM system_schema.types WHERE keyspace_name = 'no_such_keyspace'", match: func([]byte, []json.RawMessage) bool { return false }, full: true},
	}
	checkQueries(t, paths, names, []merge.Options{
		{Now: 1703358890, GCGraceSeconds: merge.DefaultGCGraceSeconds},
		{Now: 1800000000, GCGraceSeconds: merge.DefaultGCGraceSeconds},
	}, cases)
}

// BenchmarkQueryPointVsScan: a point query (WHERE key = ...) and one with
// a clustering slice, against a SELECT * over the whole table (the floor,
// in the same run): x-scan is each one's time over the scan's.
func BenchmarkQueryPointVsScan(b *testing.B) {
	paths, now := history(b, generate.HistoryProfile, 4, 1, 3000)
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer tbl.Close()
	names := query.Names{Keyspace: "ks", Table: "history", PartitionKey: []string{"key"}, Clustering: []string{"clustering1"}}
	sc, err := tbl.Scan(merge.Options{Now: now})
	if err != nil {
		b.Fatal(err)
	}
	var keys []string
	for len(keys) < 50 {
		p, err := sc.Next()
		if err != nil || p == nil {
			b.Fatal(err)
		}
		keys = append(keys, strconv.FormatInt(int64(uint64FromBytes(p.Header.Key)), 10))
	}
	o := merge.Options{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}
	run := func(stmt string) int {
		sel, err := cql.Parse(stmt)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := query.NewPlan(sel, tbl, names)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := plan.Run(o, func(query.Row) error { n++; return nil }); err != nil {
			b.Fatal(err)
		}
		return n
	}
	var tScan, tPoint, tSlice time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		run("SELECT * FROM ks.history")
		t1 := time.Now()
		k := keys[i%len(keys)]
		run("SELECT * FROM ks.history WHERE key = " + k)
		t2 := time.Now()
		run("SELECT * FROM ks.history WHERE key = " + k + " AND clustering1 >= 3 AND clustering1 < 6")
		t3 := time.Now()
		tScan, tPoint, tSlice = tScan+t1.Sub(t0), tPoint+t2.Sub(t1), tSlice+t3.Sub(t2)
	}
	b.ReportMetric(float64(tPoint)/float64(tScan), "x-scan-point")
	b.ReportMetric(float64(tSlice)/float64(tScan), "x-scan-slice")
	b.ReportMetric(float64(tPoint.Microseconds())/float64(b.N), "µs/point")
}
