package main

import (
	"bytes"
	"os"
	"path/filepath"
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
