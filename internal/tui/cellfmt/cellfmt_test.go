package cellfmt

import (
	"math"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
)

func TestNumbers(t *testing.T) {
	if got, want := Bytes(67194), "67,194 B"; got != want {
		t.Errorf("Bytes(67194) = %q, want %q", got, want)
	}
	for n, want := range map[int64]string{1023: "1023 B", 1024: "1.0 KiB", 67194: "65.6 KiB", 1 << 30: "1.0 GiB"} {
		if got := Human(n); got != want {
			t.Errorf("Human(%d) = %q, want %q", n, got, want)
		}
	}
	if got := Truncate("größer als", 5); got != "größ…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("abc", 3); got != "abc" {
		t.Errorf("Truncate = %q", got)
	}
	// Wide characters take two cells: the cut keeps the column's width.
	if got := Truncate("日本語のテキスト", 5); got != "日本…" {
		t.Errorf("Truncate = %q", got)
	}
	if got := Truncate("abcdef", 1); got != Ellipsis {
		t.Errorf("Truncate = %q", got)
	}
}

func mustParse(t *testing.T, class string) *cqltype.Type {
	t.Helper()
	ty, err := cqltype.Parse(class)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// Values render as sstabledump's JSON; bytes that are not the type fall
// back to hex with a note.
func TestValue(t *testing.T) {
	text := mustParse(t, "org.apache.cassandra.db.marshal.UTF8Type")
	i32 := mustParse(t, "org.apache.cassandra.db.marshal.Int32Type")
	if got := Value(text, []byte("foo bar baz"), 0); got != `"foo bar baz"` {
		t.Errorf("text: %s", got)
	}
	if got := Value(i32, []byte{0, 0, 0, 20}, 0); got != "20" {
		t.Errorf("int: %s", got)
	}
	if got := Value(i32, []byte{1, 2}, 0); got != "0x0102 (not a valid int)" {
		t.Errorf("bad int: %s", got)
	}
	if got := Value(text, nil, 0); got != "null" {
		t.Errorf("null: %s", got)
	}
}

// Cell names of multi-cell columns carry their element.
func TestCellName(t *testing.T) {
	m := mustParse(t, "org.apache.cassandra.db.marshal.MapType(org.apache.cassandra.db.marshal.Int32Type,org.apache.cassandra.db.marshal.Int32Type)")
	name, vt := CellName(&rows.Column{Name: "m", Complex: true}, m, []byte{0, 0, 0, 10})
	if name != "m[10]" || vt == nil || Value(vt, []byte{0, 0, 0, 20}, 0) != "20" {
		t.Errorf("map cell %q %v", name, vt)
	}
	set := mustParse(t, "org.apache.cassandra.db.marshal.SetType(org.apache.cassandra.db.marshal.UTF8Type)")
	if name, _ := CellName(&rows.Column{Name: "s", Complex: true}, set, []byte("x")); name != `s{"x"}` {
		t.Errorf("set cell %q", name)
	}
	if name, _ := CellName(&rows.Column{Name: "v"}, mustParse(t, "org.apache.cassandra.db.marshal.UTF8Type"), nil); name != "v" {
		t.Errorf("simple cell %q", name)
	}
}

func TestDeletionAndFlags(t *testing.T) {
	if Deletion(deletiontime.Live) != "LIVE" {
		t.Error("live")
	}
	d := deletiontime.DeletionTime{MarkedForDeleteAt: 1700000000000000, LocalDeletionTime: 1700000000}
	if got := Deletion(d); got != "deleted ts=2023-11-14T22:13:20.000000Z local=2023-11-14T22:13:20Z" {
		t.Errorf("deletion %q", got)
	}
	if Micros(math.MinInt64) != "none" || Seconds(math.MaxInt32) != "never" {
		t.Error("sentinels")
	}
	if got := RowFlags(0x24); got != "HAS_TIMESTAMP|HAS_ALL_COLUMNS" {
		t.Errorf("row flags %q", got)
	}
	if got := CellFlags(0x0c); got != "HAS_EMPTY_VALUE|USE_ROW_TIMESTAMP" {
		t.Errorf("cell flags %q", got)
	}
}
