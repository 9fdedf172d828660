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

func TestTableDirsIn(t *testing.T) {
	data := t.TempDir()
	for _, d := range []string{
		"shop/orders-0f3e4a70c67c11eeb4a4d93dc8a1f6a2", // dropped, then created again:
		"shop/orders-1a2b3c70c67c11eeb4a4d93dc8a1f6a2",
		"shop/orders_by_day-2b3c4d70c67c11eeb4a4d93dc8a1f6a2", // another table, a longer name
		"shop/orders-not-an-id",
		"shop/orders", // before 2.1
		"other/orders-3c4d5e70c67c11eeb4a4d93dc8a1f6a2",
	} {
		if err := os.MkdirAll(filepath.Join(data, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	got, err := TableDirsIn(data, "shop", "orders")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range got {
		if d.Keyspace != "shop" || d.Table != "orders" {
			t.Errorf("%+v", d)
		}
		names = append(names, filepath.Base(d.Dir)+"|"+d.ID)
	}
	want := "orders|,orders-0f3e4a70c67c11eeb4a4d93dc8a1f6a2|0f3e4a70c67c11eeb4a4d93dc8a1f6a2,orders-1a2b3c70c67c11eeb4a4d93dc8a1f6a2|1a2b3c70c67c11eeb4a4d93dc8a1f6a2"
	if strings.Join(names, ",") != want {
		t.Fatalf("got %s\nwant %s", strings.Join(names, ","), want)
	}
	if got, err := TableDirsIn(data, "nokeyspace", "orders"); err != nil || len(got) != 0 {
		t.Fatalf("missing keyspace: %v %v", got, err)
	}
}

// TestTableOf reads what each place Cassandra puts sstables in says
// (Descriptor.java's SSTABLE_DIR_PATTERN: <keyspace>/<table>-<id>
// [/backups|/snapshots/<tag>][/.<index>]/): a secondary index's own table
// is "<table>.<index>" with its base table's id, in its .<index>
// directory, whether it is live or in a snapshot or backup; a hidden
// directory outside a <table>-<id> one is no index's.
func TestTableOf(t *testing.T) {
	const id = "5bc52802de2535edaeab188eecebb090"
	td := "/data/ks/t-" + id
	for _, c := range []struct {
		dir  string
		want TableDir
	}{
		{td, TableDir{Dir: td, Keyspace: "ks", Table: "t", ID: id}},
		{td + "/snapshots/s1", TableDir{Dir: td, Keyspace: "ks", Table: "t", ID: id}},
		{td + "/backups", TableDir{Dir: td, Keyspace: "ks", Table: "t", ID: id}},
		{td + "/.t_val_idx", TableDir{Dir: td + "/.t_val_idx", Keyspace: "ks", Table: "t.t_val_idx", ID: id, Index: "t_val_idx"}},
		{td + "/snapshots/pre-split-17/.t_val_idx", TableDir{Dir: td + "/.t_val_idx", Keyspace: "ks", Table: "t.t_val_idx", ID: id, Index: "t_val_idx"}},
		{td + "/backups/.t_val_idx", TableDir{Dir: td + "/.t_val_idx", Keyspace: "ks", Table: "t.t_val_idx", ID: id, Index: "t_val_idx"}},
		{"/home/u/.sstables", TableDir{Dir: "/home/u/.sstables", Keyspace: "u", Table: ".sstables"}},
		{td + "/.sstabletool-staging-oa-1-big-123", TableDir{Dir: td + "/.sstabletool-staging-oa-1-big-123", Keyspace: "t-" + id, Table: ".sstabletool-staging-oa-1-big-123"}},
	} {
		got := TableOf(c.dir)
		if got != c.want {
			t.Errorf("TableOf(%s) = %+v, want %+v", c.dir, got, c.want)
		}
		if got.Index != "" && (got.BaseTable() != "t" || got.BaseDir() != td) {
			t.Errorf("TableOf(%s): base %s in %s", c.dir, got.BaseTable(), got.BaseDir())
		}
	}
}
