package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// A one-table --schema file speaks for its own table's directory, for a
// directory that names no table (a copy of the sstable), and for any
// directory with --table; never for a directory that names another
// table, whose sstables would take its names and gc_grace_seconds. The
// sstable is node-3.11's sina_test.table_with_map (k int, m map<int, int>);
// the file's ks.other has the same layout, so only the directory can
// tell them apart.
func TestOneTableSchemaFileOnlyForItsTable(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11", "sina_test", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91")
	s, err := sstable.Open(filepath.Join(dir, "me-1-big-Data.db"), sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	write := func(cql string) string {
		f := filepath.Join(t.TempDir(), "schema.cql")
		if err := os.WriteFile(f, []byte(cql), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	other := write("CREATE TABLE ks.other (k int PRIMARY KEY, m map<int, int>) WITH gc_grace_seconds = 60;\n")

	sf, err := ReadSchemaFile(other, "")
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	sf.OnWarning = func(msg string) { warned = append(warned, msg) }
	if n, err := sf.Apply(s); err != nil || n.Table == "other" || n.PartitionKey[0] != "key" {
		t.Errorf("ks.other given to table_with_map's directory: names %+v, err %v", n, err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "defines ks.other, not sina_test.table_with_map, which its directory names") {
		t.Errorf("warnings %q", warned)
	}
	if ts, err := sf.Table(s); ts != nil || err != nil || sf.Resolves(s) || sf.DroppedTimes(s) != nil {
		t.Errorf("Table %v, %v; Resolves %v", ts, err, sf.Resolves(s))
	}
	if _, _, err := sf.TableForDir(dir); err == nil {
		t.Error("writing into table_with_map's directory with ks.other's schema")
	}
	if ts, _, err := sf.TableForDir(t.TempDir()); err != nil || ts.Name() != "ks.other" {
		t.Errorf("a directory naming no table: %v, %v", ts, err)
	}

	sf, err = ReadSchemaFile(other, "ks.other")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sf.Apply(s); err != nil || n.Table != "other" || n.PartitionKey[0] != "k" {
		t.Errorf("--table ks.other: names %+v, err %v", n, err)
	}

	sf, err = ReadSchemaFile(write("CREATE TABLE sina_test.table_with_map (key int PRIMARY KEY, m map<int, int>);\n"), "")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := sf.Apply(s); err != nil || n.Table != "table_with_map" || n.PartitionKey[0] != "key" {
		t.Errorf("its own table: names %+v, err %v", n, err)
	}
}
