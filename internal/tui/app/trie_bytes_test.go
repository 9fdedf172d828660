package app

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/bti"
	"github.com/sstabletool/sstabletool/internal/tui/bytemap"
	"github.com/sstabletool/sstabletool/internal/tui/views"
)

func daTable(t *testing.T, name string) string {
	return filepath.Join(fixtures.Table(t, "da", name), "da-1-bti-Data.db")
}

// x on a partition of a da sstable, then t: the partition's bytes in
// Partitions.db (the whole 62-byte trie of legacy_da_clust: node types,
// transitions, pointers, each key's hash byte and position, the first and
// last keys, the footer), t again: its row index trie and entry in Rows.db,
// t again: back to Data.db as it was left.
func TestTrieBytesView(t *testing.T) {
	d := newDriver(t, 120, 30, daTable(t, "legacy_da_clust"))
	d.keys("s", "s", "s", "s", "g", "x")
	b, ok := d.a.Top().(*views.Bytes)
	if !ok {
		t.Fatalf("top view %T", d.a.Top())
	}
	d.expect("Data.db 0..", "t: Data.db/Partitions.db/Rows.db", "t index bytes")
	d.keys("tab", "tab")
	dataField := d.expect("field 3/")

	d.keys("t")
	if b.Component() != format.ComponentPartitions {
		t.Fatalf("component %s", b.Component())
	}
	s := d.expect("Partitions.db 0..62 (62 B) · da trie index of 62 B")
	// Every byte of this small trie is labelled: the spans tile the file.
	var at int64
	for i, sp := range b.Spans() {
		if sp.Off != at {
			t.Fatalf("span %d %+v starts at %d, the previous ended at %d", i, sp, sp.Off, at)
		}
		at = sp.End()
	}
	if at != 62 {
		t.Fatalf("spans end at %d", at)
	}
	// The selected field is partition 0's trie node; its payload follows
	// with the key's hash byte, the Rows.db position after it.
	sel := selected(t, s)
	if !strings.Contains(sel, "node header") {
		t.Fatalf("selected field %q, want partition 0's node", sel)
	}
	want := fmt.Sprintf("hash byte %#02x", bti.KeyHash([]byte("0")))
	d.keys("tab")
	s = d.screen()
	for !strings.Contains(selected(t, s), "hash byte") {
		d.keys("tab")
		s = d.screen()
	}
	if !strings.Contains(selected(t, s), want) {
		t.Fatalf("hash field %q, want %q", selected(t, s), want)
	}
	d.keys("tab")
	if sel := selected(t, d.screen()); !strings.Contains(sel, "position") || !strings.Contains(sel, "entry in Rows.db") {
		t.Fatalf("after the hash byte: %q", sel)
	}
	// The end of the file: keys and footer, on screen in short and in
	// full in the spans.
	d.keys("end")
	d.expect("first key length 1", "footer: root node position 30")
	classes := map[bytemap.Class]bool{}
	var labels []string
	for _, sp := range b.Spans() {
		classes[sp.Class] = true
		labels = append(labels, sp.Label)
	}
	all := strings.Join(labels, "\n")
	for _, l := range []string{"footer: key count 5", "footer: position of the first and last keys 32", "last key 34",
		"DENSE_12 node, no payload, transitions 0x30 '0'..0x34 '4'", "SINGLE_NOPAYLOAD_4 node, pointer in the low nibble: 0x40 '@'→@19 (back 11)"} {
		if !strings.Contains(all, l) {
			t.Errorf("no field %q in Partitions.db:\n%s", l, all)
		}
	}
	for _, c := range []bytemap.Class{bytemap.Flags, bytemap.Clustering, bytemap.Size, bytemap.CellHeader, bytemap.Liveness, bytemap.KeyLength, bytemap.Key, bytemap.EndOfPartition} {
		if !classes[c] {
			t.Errorf("no %s (%s) field in Partitions.db", bytemap.TrieClassName(c), c)
		}
	}

	d.keys("t")
	if b.Component() != format.ComponentRows {
		t.Fatalf("component %s", b.Component())
	}
	s = d.expect("Rows.db ", "da trie index of 508 B")
	if sel := selected(t, s); !strings.Contains(sel, "key length 1") {
		t.Fatalf("Rows.db selection %q, want the entry's key length", sel)
	}
	d.keys("tab")
	if sel := selected(t, d.screen()); !strings.Contains(sel, "partition key 30") {
		t.Fatalf("Rows.db after the key length: %q", sel)
	}
	d.keys("tab", "tab", "tab", "tab")
	d.expect("partition deletion LIVE (compact)")
	rowsClasses := map[bytemap.Class]bool{}
	labels = labels[:0]
	for _, sp := range b.Spans() {
		rowsClasses[sp.Class] = true
		labels = append(labels, sp.Label)
	}
	all = strings.Join(labels, "\n")
	for _, l := range []string{"Data.db position 0 (unsigned vint)", "root at 97 - 8 = @89", "index blocks (unsigned vint)", "block offset, 2 bytes"} {
		if !strings.Contains(all, l) {
			t.Errorf("no field %q in Rows.db:\n%s", l, all)
		}
	}
	for _, c := range []bytemap.Class{bytemap.Flags, bytemap.Size, bytemap.Liveness, bytemap.Columns, bytemap.Deletion} {
		if !rowsClasses[c] {
			t.Errorf("no %s field in Rows.db", bytemap.TrieClassName(c))
		}
	}

	d.keys("t")
	if b.Component() != format.ComponentData {
		t.Fatalf("component %s", b.Component())
	}
	if s := d.expect("Data.db 0.."); selected(t, s) != selected(t, dataField) {
		t.Fatalf("Data.db selection %q, was %q", selected(t, s), selected(t, dataField))
	}
}

// A partition of one index block has no Rows.db entry: the view says so.
func TestTrieBytesViewWithoutRowIndex(t *testing.T) {
	d := newDriver(t, 100, 24, daTable(t, "legacy_da_simple"))
	d.keys("x", "t")
	d.expect("Partitions.db 0..58")
	d.keys("t")
	b := d.a.Top().(*views.Bytes)
	if b.Component() != format.ComponentRows || !strings.Contains(b.Note(), "no row index") {
		t.Fatalf("%s: note %q", b.Component(), b.Note())
	}
	d.expect("no row index in Rows.db")
	d.keys("t")
	d.expect("Data.db 22..")
}

var fieldLine = regexp.MustCompile(`(?m)^ field \d+/\d+ @\d+ · .*$`)

func selected(t *testing.T, screen string) string {
	t.Helper()
	l := fieldLine.FindString(screen)
	if l == "" {
		t.Fatalf("no field line:\n%s", screen)
	}
	return l
}
