package format

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestTableOfDir(t *testing.T) {
	for name, want := range map[string]string{
		"users-5bc52802de2535edaeab188eecebb090":      "users",
		"wide_rows2-00000000000000000000000000000000": "wide_rows2",
		"users-5bc52802de2535edaeab188eecebb09":       "", // 31 digits
		"users-5BC52802DE2535EDAEAB188EECEBB090":      "", // TableId.toHexString is lower case
		"users":                                       "",
		"my-table-5bc52802de2535edaeab188eecebb090":   "", // table names are word characters
		".idx": "",
	} {
		got, ok := TableOfDir(name)
		if got != want || ok != (want != "") {
			t.Errorf("TableOfDir(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

// TableDirIn finds a table's directory by its name, prefers the one with
// sstables when a dropped table left another, and refuses to guess
// between two that hold sstables.
func TestTableDirIn(t *testing.T) {
	data := t.TempDir()
	mk := func(rel string, withData bool) string {
		d := filepath.Join(data, rel)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if withData {
			os.WriteFile(filepath.Join(d, "nc-1-big-Data.db"), nil, 0o644)
		}
		return d
	}
	users := mk("ks/users-5bc52802de2535edaeab188eecebb090", false)
	mk("ks/users_archive-6bc52802de2535edaeab188eecebb090", true)
	if got, err := TableDirIn(data, "ks", "users"); err != nil || got != users {
		t.Fatalf("%q %v", got, err)
	}
	live := mk("ks/users-7bc52802de2535edaeab188eecebb090", true)
	if got, err := TableDirIn(data, "ks", "users"); err != nil || got != live {
		t.Fatalf("%q %v, want the directory with sstables", got, err)
	}
	mk("ks/users-8bc52802de2535edaeab188eecebb090", true)
	if _, err := TableDirIn(data, "ks", "users"); err == nil || !strings.Contains(err.Error(), "2 directories holding sstables") {
		t.Fatalf("two live directories: %v", err)
	}
	for _, c := range [][2]string{{"ks", "nope"}, {"nope", "users"}} {
		if _, err := TableDirIn(data, c[0], c[1]); err == nil {
			t.Errorf("%s.%s found", c[0], c[1])
		}
	}
}
