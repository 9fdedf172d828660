package inspect

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/testtables"
)

func loadUDTSchema(t *testing.T, path, udtSchema string) *sstable.SSTable {
	t.Helper()
	s, err := sstable.Open(path, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := filepath.Join(t.TempDir(), "schema.cql")
	if err := os.WriteFile(f, []byte(udtSchema), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSchema(s, f); err != nil {
		t.Fatalf("a frozen<ut> schema for a header that records UserType(...) was refused: %v", err)
	}
	return s
}

// With --schema, the schema's frozen<ut> wins over the header's plain
// UserType, as SSTableHeaderFix does, even where no cell tells them apart.
func TestSchemaFreezesUDTTheHeaderRecordsAsMultiCell(t *testing.T) {
	s := loadUDTSchema(t, testtables.UDTTable(t, true, false), "CREATE TYPE ks.ut (a int, b int);\nCREATE TABLE ks.t (key int PRIMARY KEY, info frozen<ut>);\n")
	fixes := s.HeaderFixes()
	if len(fixes) != 1 || fixes[0].Column != "info" || !strings.Contains(fixes[0].Why, "schema") {
		t.Fatalf("fixes %+v", fixes)
	}
	if got := CreateTable(s, DefaultNames(s)); !strings.Contains(got, "info frozen<ut>") || !strings.Contains(got, "-- header corrected: column info") {
		t.Errorf("CREATE TABLE does not show the corrected column:\n%s", got)
	}
	m, err := ReadMetadata(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Header.Notes) != 1 || !strings.Contains(m.Header.Notes[0], "CASSANDRA-15035") {
		t.Errorf("metadata notes %q", m.Header.Notes)
	}
}

// Where the cells already told (frozen values, no paths), the schema agrees.
func TestSchemaAgreesWithCellsOnFrozenUDT(t *testing.T) {
	s := loadUDTSchema(t, testtables.UDTTable(t, true, true), "CREATE TYPE ks.ut (a int, b int);\nCREATE TABLE ks.t (key int PRIMARY KEY, info frozen<ut>, name text);\n")
	if fixes := s.HeaderFixes(); len(fixes) != 1 || !strings.Contains(fixes[0].Why, "single cell") {
		t.Fatalf("fixes %+v", fixes)
	}
}
