package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// On the real 3.11 node, every table of sina_test round-trips through
// write with no --schema, no --like and no --to: its dump -t, written into
// a table directory of a data directory that holds a copy of the node's
// system_schema, takes the table's columns and types from that
// system_schema (said on stderr), its version from the node's sstables
// there (me) and its compression and bloom filter from the table's
// options (uncompressed), dumps to the same bytes and is verified before
// it is committed (the summary says so); and what
// Cassandra wrote from the data alone (Data.db, CRC.db, Index.db,
// Summary.db, Filter.db) is the same, byte for byte.
func TestWriteFromNodeSchema(t *testing.T) {
	node := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11")
	data := filepath.Join(t.TempDir(), "data")
	if err := os.CopyFS(filepath.Join(data, "system_schema"), os.DirFS(filepath.Join(node, "system_schema"))); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(node, "sina_test"))
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, e := range ents {
		src := filepath.Join(node, "sina_test", e.Name())
		if !e.IsDir() || !format.TableOf(src).HasID() {
			continue
		}
		tables++
		t.Run(e.Name(), func(t *testing.T) {
			code, doc, errOut := runCaptured(t, "dump", "-t", src)
			if code != exitOK {
				t.Fatalf("dump: exit %d: %s", code, errOut)
			}
			in := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(in, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(data, "sina_test", e.Name())
			code, out, errOut := runCaptured(t, "write", in, "--out", dest)
			if code != exitOK {
				t.Fatalf("write: exit %d: %s%s", code, out, errOut)
			}
			if want := "schema: system_schema of " + data + "\n"; errOut != want {
				t.Errorf("write's stderr is %q, want %q", errOut, want)
			}
			if !strings.Contains(out, "positions: kept; verified;") {
				t.Errorf("write: %s", out)
			}
			code, again, errOut := runCaptured(t, "dump", "-t", dest)
			if code != exitOK {
				t.Fatalf("dump of the written sstable: exit %d: %s", code, errOut)
			}
			if again != doc {
				t.Errorf("dump -t of the written sstable differs from its input:\n%s\n--- input ---\n%s", again, doc)
			}
			for _, comp := range []string{"Data.db", "CRC.db", "Index.db", "Summary.db", "Filter.db"} {
				want, err := os.ReadFile(filepath.Join(src, "me-1-big-"+comp))
				if err != nil {
					t.Fatal(err)
				}
				got, err := os.ReadFile(filepath.Join(dest, "me-1-big-"+comp))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from the node's (%d bytes, the node's %d)", comp, len(got), len(want))
				}
			}
		})
	}
	if tables < 6 {
		t.Fatalf("only %d tables in %s", tables, node)
	}
}

// The command's round trips, run in the test's process (an exec of the
// race-instrumented binary costs a second each): dump -t of a real
// sstable, written back with the columns from --like, a CQL file, a
// node's system_schema (--schema-from) or `schema`'s output, dumps to the
// same bytes; data verify flags is not committed unless --no-verify.
func TestWriteRoundTrips(t *testing.T) {
	root := fixtures.Dir(t)
	fix := func(rel string) string { return filepath.Join(root, "cassandra", rel) }
	real := func(rel string) string { return filepath.Join(root, "realworld", rel) }
	work := t.TempDir()
	countersCQL := filepath.Join(work, "counters.cql")
	code, cql, errOut := runCaptured(t, "schema", real("scylla/3.x/uncompressed/counters"))
	if code != exitOK {
		t.Fatalf("schema: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(countersCQL, []byte(cql), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, src string
		args      []string // write's, after the input and --out DIR
		out       string   // a regexp write's stdout matches
		errOut    string   // a regexp its stderr matches
		file      string   // a component the output has
	}{
		{"like-counters", fix("nc/legacy_nc_clust_counter"), []string{"--like", fix("nc/legacy_nc_clust_counter")},
			`^wrote .*nc-1-big-Data.db \(nc, 5 partitions, 250 rows, 0 range tombstone markers, 250 cells\)\n  positions: kept; verified; 2 passes over the input\n$`, `^$`, "nc-1-big-CompressionInfo.db"},
		{"schema-file", fix("me-collections/table_with_map-901f2c70a1c711eeae8c6d2c86545d91"),
			[]string{"--schema", fix("me-collections/populate_test_schema.cql"), "--table", "sina_test.table_with_map", "--to", "me", "--compression", "none"},
			`positions: kept; verified`, `^schema: .*populate_test_schema.cql\n$`, "me-1-big-CRC.db"},
		{"schema-from", real("cassandra/node-3.11/sina_test/table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91"),
			[]string{"--schema-from", real("cassandra/node-3.11"), "--table", "sina_test.table_with_set", "--to", "me"},
			`positions: kept; verified`, `^schema: system_schema of .*node-3.11\n$`, "me-1-big-Data.db"},
		// The header's minimum timestamp is below the data's: searched for.
		{"schema-min-below", real("scylla/3.x/uncompressed/counters"), []string{"--schema", countersCQL, "--to", "mc"},
			`positions: kept; verified; 3 passes over the input`, `^schema: .*counters.cql\n$`, "mc-1-big-Data.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, doc, errOut := runCaptured(t, "dump", "-t", tc.src)
			if code != exitOK {
				t.Fatalf("dump: exit %d: %s", code, errOut)
			}
			in := filepath.Join(t.TempDir(), "in.json")
			if err := os.WriteFile(in, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			dest := filepath.Join(t.TempDir(), "out")
			code, out, errOut := runCaptured(t, append([]string{"write", in, "--out", dest}, tc.args...)...)
			if code != exitOK {
				t.Fatalf("write: exit %d: %s%s", code, out, errOut)
			}
			if !regexp.MustCompile(tc.out).MatchString(out) || !regexp.MustCompile(tc.errOut).MatchString(errOut) {
				t.Errorf("write printed %q, %q on stderr; want %q, %q", out, errOut, tc.out, tc.errOut)
			}
			if _, err := os.Stat(filepath.Join(dest, tc.file)); err != nil {
				t.Error(err)
			}
			if code, again, errOut := runCaptured(t, "dump", "-t", dest); code != exitOK || again != doc {
				t.Errorf("dump -t of the written sstable (exit %d, %s) differs from its input:\n%s\n--- input ---\n%s", code, errOut, again, doc)
			}
		})
	}

	// Data that verify flags is not committed (exit 1), unless --no-verify.
	neg := real("cassandra/negative-local-expiration/table3")
	code, doc, errOut := runCaptured(t, "dump", "-t", neg)
	if code != exitOK {
		t.Fatalf("dump: exit %d: %s", code, errOut)
	}
	in := filepath.Join(work, "negative.json")
	if err := os.WriteFile(in, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(work, "neg")
	code, _, errOut = runCaptured(t, "write", in, "--like", neg, "--out", dest)
	if want := regexp.MustCompile(`the written sstable does not verify, so nothing was committed: .*cell local deletion time: stored delta 0, read as -2146700400`); code != exitProblem || !want.MatchString(errOut) {
		t.Errorf("write of data verify flags: exit %d, %q; want %d and %q", code, errOut, exitProblem, want)
	}
	if _, err := os.Stat(filepath.Join(dest, "mc-1-big-Data.db")); !os.IsNotExist(err) {
		t.Errorf("an sstable that did not verify was committed (%v)", err)
	}
	if code, out, errOut := runCaptured(t, "write", in, "--like", neg, "--no-verify", "--out", dest); code != exitOK {
		t.Fatalf("write --no-verify: exit %d: %s%s", code, out, errOut)
	}
	if code, again, errOut := runCaptured(t, "dump", "-t", dest); code != exitOK || again != doc {
		t.Errorf("dump -t of the --no-verify sstable (exit %d, %s) differs from its input", code, errOut)
	}
}

// Bad input exits 2, naming the file, line, column and byte, and what was
// expected, and leaves nothing in the output directory.
func TestWriteBadInput(t *testing.T) {
	work := t.TempDir()
	cql := filepath.Join(work, "t.cql")
	files := map[string]string{
		"t.cql":          "CREATE TABLE ks.t (pk text, ck int, v text, s set<int>, PRIMARY KEY (pk, ck));\n",
		"bad.json":       "[\n  {\"partition\":{\"key\":[\"a\"]},\n   \"rows\":[{\"type\":\"row\",\"clustering\":[\"one\"]}]}\n]\n",
		"badcol.json":    `{"partition":{"key":["a"]},"rows":[{"type":"row","clustering":[1],"cells":[{"name":"w","value":"x","tstamp":"1"}]}]}` + "\n",
		"unordered.json": `{"partition":{"key":["a"]},"rows":[{"type":"row","clustering":[2],"cells":[]},{"type":"row","clustering":[1],"cells":[]}]}` + "\n",
		"good.json":      `{"partition":{"key":["a"]},"rows":[{"type":"row","clustering":[2],"cells":[{"name":"v","value":"y","tstamp":"1"}]}]}` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dest := filepath.Join(work, "out")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bad.json"}, `bad.json:3:40: byte 71: clustering value 0: expected a 32-bit integer for a int value, found "one"`},
		{[]string{"badcol.json"}, `badcol.json:1:84: byte 83: expected one of the table's columns \(v, s\), found "w"`},
		{[]string{"unordered.json"}, `unordered.json:1:79: byte 78: expected rows and range tombstone markers in clustering order`},
		{[]string{"good.json", "--partitioner", "Nope"}, `partitioner "Nope" is not supported`},
		{[]string{"missing.json"}, `missing.json: no such file`},
	} {
		args := append([]string{"write", filepath.Join(work, tc.args[0]), "--schema", cql, "--out", dest}, tc.args[1:]...)
		code, out, errOut := runCaptured(t, args...)
		if code != exitBadData || !regexp.MustCompile(tc.want).MatchString(errOut) {
			t.Errorf("%v: exit %d, %q%q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	if ents, err := os.ReadDir(dest); err == nil && len(ents) > 0 || err != nil && !os.IsNotExist(err) {
		t.Errorf("bad input left %v in the output directory (%v)", ents, err)
	}
}
