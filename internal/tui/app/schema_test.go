package app

import (
	"path/filepath"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/inspect"
	"github.com/sstabletool/sstabletool/internal/tui/catalog"
	"github.com/sstabletool/sstabletool/internal/tui/theme"
	"github.com/sstabletool/sstabletool/reader"
)

// With a schema, the browser names the key and clustering columns: the
// partition lists' key header, and each row's clustering (a real 3.11
// node's system_schema.types, two flushes, merged and alone).
func TestSchemaNames(t *testing.T) {
	dir := filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11", "system_schema", "types-5a8b1ca866023f77a0459273d308917a")
	paths, err := filepath.Glob(filepath.Join(dir, "*-Data.db"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("%v %v", paths, err)
	}
	tables, errs := Open(paths, reader.Mmap)
	t.Cleanup(func() {
		for _, tb := range tables {
			tb.Close()
		}
	})
	for _, tb := range tables {
		tb.Schema = &catalog.Schema{Names: inspect.Names{Keyspace: "system_schema", Table: "types",
			PartitionKey: []string{"keyspace_name"}, Clustering: []string{"type_name"}}}
	}
	a := New(tables, errs, theme.Plain())
	a.StartMerged()
	d := &driver{t: t, a: a}
	d.send(tea.WindowSizeMsg{Width: 100, Height: 30})
	d.run(a.Init())
	t.Cleanup(func() { a.quit() })
	d.expect("keyspace_name", "sina_test")
	d.keys("down", "down", "enter")
	d.expect(`row (type_name="address")`)
	d.keys("esc", "M", "enter")
	d.expect("keyspace_name", "TOKEN")
	d.keys("enter")
	d.expect("(type_name=")
}
