package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	pq "github.com/parquet-go/parquet-go"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/nodeschema"
)

// runCaptured runs the command line and returns its exit code, stdout and
// stderr.
func runCaptured(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	savedOut, savedErr := stdout, stderr
	defer func() { stdout, stderr = savedOut, savedErr }()
	var out, errOut bytes.Buffer
	stdout, stderr = &out, &errOut
	code := run(append([]string{"sstabletool"}, args...))
	return code, out.String(), errOut.String()
}

// On the real 3.11 node, a query with the table's real column names (no
// --schema: the node's system_schema names them) returns the rows dump
// --merge shows, value for value, for each of sina_test's tables.
func TestNodeQueryMatchesDumpMerge(t *testing.T) {
	node := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11")
	s, err := nodeschema.Read(node, nodeschema.Options{Keyspaces: []string{"sina_test"}})
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(node, "sina_test"))
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, e := range ents {
		dir := filepath.Join(node, "sina_test", e.Name())
		td := format.TableOf(dir)
		if !e.IsDir() || !td.HasID() {
			continue
		}
		tables++
		ts := s.Table("sina_test", td.Table).Schema
		var names []string
		for _, c := range ts.Columns {
			names = append(names, c.Name)
		}
		code, out, errOut := runCaptured(t, "query", "--json", "SELECT "+strings.Join(names, ", ")+" FROM sina_test."+td.Table, dir)
		if code != 0 {
			t.Fatalf("%s: query exit %d: %s", td.Table, code, errOut)
		}
		if !strings.Contains(errOut, "schema: system_schema of "+node) {
			t.Errorf("%s: stderr does not name the schema: %q", td.Table, errOut)
		}
		var queried []map[string]any
		if err := json.Unmarshal([]byte(out), &queried); err != nil {
			t.Fatalf("%s: %v\n%s", td.Table, err, out)
		}
		code, out, errOut = runCaptured(t, "dump", "--merge", dir)
		if code != 0 {
			t.Fatalf("%s: dump exit %d: %s", td.Table, code, errOut)
		}
		var dumped []mergedDumpPartition
		if err := json.Unmarshal([]byte(out), &dumped); err != nil {
			t.Fatal(err)
		}
		want := rowsOfDump(t, ts, dumped)
		got := map[string]map[string]string{}
		for _, r := range queried {
			key := canonical(r[ts.PartitionKey[0]])
			got[key] = map[string]string{}
			for _, name := range names {
				if v := r[name]; v != nil && name != ts.PartitionKey[0] {
					got[key][name] = canonical(v)
				}
			}
		}
		if len(want) == 0 {
			t.Errorf("%s: dump --merge shows no rows", td.Table)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-dump --merge +query):\n%s", td.Table, d)
		}
	}
	if tables != 6 {
		t.Errorf("%d tables", tables)
	}
}

type mergedDumpPartition struct {
	Partition struct {
		Key []string `json:"key"`
	} `json:"partition"`
	Rows []struct {
		Cells []struct {
			Name         string          `json:"name"`
			Path         []string        `json:"path"`
			Value        json.RawMessage `json:"value"`
			DeletionInfo any             `json:"deletion_info"`
		} `json:"cells"`
	} `json:"rows"`
}

// rowsOfDump reads each partition's (one-row) cells as the query shows
// them: a simple value as is, a set as its paths, a list as its values in
// order, a map as path: value.
func rowsOfDump(t *testing.T, ts *cqltype.TableSchema, parts []mergedDumpPartition) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, p := range parts {
		row := map[string]string{}
		out[canonical(p.Partition.Key[0])] = row
		coll := map[string][]any{}
		maps := map[string]map[string]any{}
		for _, r := range p.Rows {
			for _, c := range r.Cells {
				if c.Value == nil {
					continue // a collection's deletion
				}
				var v any
				if err := json.Unmarshal(c.Value, &v); err != nil {
					t.Fatal(err)
				}
				switch ts.Column(c.Name).Type.Kind {
				case cqltype.Set:
					coll[c.Name] = append(coll[c.Name], c.Path[0])
				case cqltype.List:
					coll[c.Name] = append(coll[c.Name], v)
				case cqltype.Map:
					if maps[c.Name] == nil {
						maps[c.Name] = map[string]any{}
					}
					maps[c.Name][c.Path[0]] = v
				default:
					row[c.Name] = canonical(v)
				}
			}
		}
		for name, es := range coll {
			row[name] = canonical(es)
		}
		for name, m := range maps {
			row[name] = canonical(m)
		}
	}
	return out
}

// canonical is a value as text both outputs agree on: numbers and
// booleans as sstabledump prints set elements (strings), collections as
// JSON with their elements so.
func canonical(v any) string {
	switch x := v.(type) {
	case []any:
		var parts []string
		for _, e := range x {
			parts = append(parts, canonical(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		var keys []string
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var parts []string
		for _, k := range keys {
			parts = append(parts, k+":"+canonical(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// The export names the key and clustering columns of each file's table
// in its key-value metadata when the node's system_schema gives them
// (read back with parquet-go, not the arrow-go writer), merged or not,
// and leaves them out for a copy outside any data directory, whose
// header does not name them.
func TestExportKeyColumnsFromNodeSchema(t *testing.T) {
	node := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11")
	mapDir := filepath.Join(node, "sina_test", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91")
	copyDir := filepath.Join(t.TempDir(), "copy")
	if err := os.MkdirAll(copyDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(mapDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(mapDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(copyDir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type kv struct{ Key, Clustering *string }
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		args []string
		want kv
	}{
		{"sstable", []string{mapDir}, kv{str(`["k"]`), str(`[]`)}},
		{"merged", []string{"--merge", filepath.Join(node, "system_schema", "columns-24101c25a2ae3af787c1b40ee1aca33f")},
			kv{str(`["keyspace_name"]`), str(`["table_name","column_name"]`)}},
		{"copy", []string{copyDir}, kv{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, errOut := runCaptured(t, append([]string{"export", "--out", out, "--node", "n1"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("export: exit %d: %s", code, errOut)
			}
			files := listParquet(t, out)
			if len(files) < 3 {
				t.Fatalf("files %v", files)
			}
			for _, p := range files {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				f, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				var got kv
				if v, ok := f.Lookup("sstabletool.key_columns"); ok {
					got.Key = &v
				}
				if v, ok := f.Lookup("sstabletool.clustering_columns"); ok {
					got.Clustering = &v
				}
				if d := cmp.Diff(tc.want, got); d != "" {
					t.Errorf("%s (-want +got):\n%s", p, d)
				}
			}
		})
	}
}
