package rows

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/corrupt"
	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
)

// table_with_set (k int PRIMARY KEY, s set<int>), Cassandra 3.11, uncompressed:
// rows (0, {1,2,3}) and (1, {10,20,30}); every INSERT of a collection also
// writes a complex deletion just before its cells (timestamp - 1).
func setSchema() *Schema {
	return &Schema{Version: format.MustVersion("me"), Regular: []Column{{Name: "s", Fixed: 4, Complex: true}}}
}

func readFixture(t testing.TB, name string) []byte {
	dir := fixtures.Table(t, "me-collections", name)
	b, err := os.ReadFile(filepath.Join(dir, "me-1-big-Data.db"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeSetTable(t *testing.T) {
	b := readFixture(t, "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	d := NewDecoder(NewBytesSource(b, 0), setSchema())
	want := map[int32][]int32{0: {1, 2, 3}, 1: {10, 20, 30}}
	var h PartitionHeader
	n := 0
	for {
		err := d.ReadPartitionHeader(&h)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		if !h.Deletion.IsLive() || h.Size != 2+4+12 {
			t.Fatalf("header %+v", h)
		}
		key := int32(h.Key[0])<<24 | int32(h.Key[1])<<16 | int32(h.Key[2])<<8 | int32(h.Key[3])
		u, err := d.Next(false)
		if err != nil || u == nil {
			t.Fatalf("row: %v", err)
		}
		if u.PrevSize != uint64(h.Size) {
			t.Errorf("first row's previous size %d, want the header size %d", u.PrevSize, h.Size)
		}
		if len(u.ComplexDeletions) != 1 || u.ComplexDeletions[0].Deletion.MarkedForDeleteAt != u.Cells[0].Timestamp-1 {
			t.Errorf("complex deletion %+v, cells at %d", u.ComplexDeletions, u.Cells[0].Timestamp)
		}
		var got []int32
		for _, c := range u.Cells {
			if len(c.Value) != 0 {
				t.Errorf("set cells carry their element in the path, value %x", c.Value)
			}
			got = append(got, int32(c.Path[0])<<24|int32(c.Path[1])<<16|int32(c.Path[2])<<8|int32(c.Path[3]))
		}
		if len(got) != 3 || got[0] != want[key][0] || got[1] != want[key][1] || got[2] != want[key][2] {
			t.Errorf("key %d: elements %v, want %v", key, got, want[key])
		}
		if u, err := d.Next(false); u != nil || err != nil {
			t.Fatalf("expected end of partition, got %v %v", u, err)
		}
	}
	if n != 2 {
		t.Fatalf("%d partitions, want 2", n)
	}
}

func TestTruncatedPartitionIsDecodeError(t *testing.T) {
	b := readFixture(t, "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91")
	for cut := 1; cut < len(b); cut += 7 {
		d := NewDecoder(NewBytesSource(b[:cut], 0), setSchema())
		var h PartitionHeader
		var err error
		for err == nil {
			if err = d.ReadPartitionHeader(&h); err != nil {
				break
			}
			err = d.SkipRestDecoding()
		}
		var de *corrupt.Error
		if !errors.As(err, &de) {
			t.Fatalf("cut at %d: want a *corrupt.Error, got %v", cut, err)
		}
		if de.Offset < 0 || de.Offset > int64(cut) {
			t.Fatalf("cut at %d: error offset %d", cut, de.Offset)
		}
	}
}

func TestCompactDeletionTimeCorruptFlag(t *testing.T) {
	// An oa partition header whose DeletionTime flag byte is 0x81.
	b := []byte{0, 1, 'k', 0x81, 1}
	d := NewDecoder(NewBytesSource(b, 0), &Schema{Version: format.MustVersion("oa")})
	var h PartitionHeader
	err := d.ReadPartitionHeader(&h)
	var cf *deletiontime.CorruptFlagError
	if !errors.As(err, &cf) {
		t.Fatalf("want CorruptFlagError, got %v", err)
	}
}

func TestColumnOrder(t *testing.T) {
	cols := []Column{{Name: "b"}, {Name: "m", Complex: true}, {Name: "a"}, {Name: "ab"}, {Name: "c", Complex: true}}
	SortColumns(cols)
	got := ""
	for _, c := range cols {
		got += c.Name + " "
	}
	if got != "a ab b c m " {
		t.Fatalf("order %q: simple columns first, then complex, each by name", got)
	}
}

// FuzzDecodePartition feeds arbitrary bytes to the partition decoder under
// a schema with every kind of column: it must return errors, never panic
// or allocate beyond the input.
func FuzzDecodePartition(f *testing.F) {
	if r := fixtures.Root(); r != "" {
		for _, n := range []string{"table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91", "table_with_map-901f2c70a1c711eeae8c6d2c86545d91"} {
			if b, err := os.ReadFile(filepath.Join(r, "cassandra", "me-collections", n, "me-1-big-Data.db")); err == nil {
				f.Add(b, false)
			}
		}
	}
	f.Add([]byte{0, 1, 'k', 0x80, 0x24, 0, 4, 0, 0, 0, 0, 1}, true)
	f.Fuzz(func(t *testing.T, b []byte, oa bool) {
		v := "me"
		if oa {
			v = "oa"
		}
		clusteringFixed := []int{-1, 4}
		if len(b)%2 == 1 {
			clusteringFixed = []int{8, 4} // all fixed-width: the skip scan's shortcut
		}
		s := &Schema{
			Version:         format.MustVersion(v),
			ClusteringFixed: clusteringFixed,
			Static:          []Column{{Name: "st", Fixed: -1}},
			Regular:         []Column{{Name: "a", Fixed: 4}, {Name: "b", Fixed: -1}, {Name: "s", Fixed: 4, Complex: true}},
		}
		d := NewDecoder(NewBytesSource(b, 0), s)
		var h PartitionHeader
		for i := 0; i < 100; i++ {
			if err := d.ReadPartitionHeader(&h); err != nil {
				return
			}
			for {
				u, err := d.Next(len(b)%3 == 0)
				if err != nil {
					return
				}
				if u == nil {
					break
				}
				if u.Offset < 0 || u.Offset+u.Size > int64(len(b)) {
					t.Fatalf("unfiltered at %d size %d beyond %d bytes", u.Offset, u.Size, len(b))
				}
			}
		}
	})
}

// FuzzSkimMatchesNext checks the skim loop against Next(true): for any
// bytes both see the same partitions, rows and markers, or both fail.
func FuzzSkimMatchesNext(f *testing.F) {
	if r := fixtures.Root(); r != "" {
		if b, err := os.ReadFile(filepath.Join(r, "cassandra", "me-collections", "table_with_set-8fe7efd0a1c711eeae8c6d2c86545d91", "me-1-big-Data.db")); err == nil {
			f.Add(b, false)
		}
	}
	f.Add([]byte{0, 1, 'k', 0x80, 0x24, 0, 4, 0, 0, 0, 0, 1}, true)
	// Fixed-width clustering rows whose sizes take two vint bytes: a row
	// of 200 bytes (size 0x80 0xC8), then one whose previous-size vint is
	// two bytes (0x80 0xD3 = 211), then a small row, then the end byte.
	big := []byte{0, 1, 'k', 0x80, 0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x80, 0xC8, 0x05}
	big = append(big, make([]byte, 199)...)
	big = append(big, 0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 0x80, 0xD3, 0, 0, 0, 0, 0, 0, 0, 0)
	big = append(big, 0x20, 0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 21, 0, 0, 1)
	f.Add(big, true)
	f.Fuzz(func(t *testing.T, b []byte, fixedClustering bool) {
		cf := []int{-1}
		if fixedClustering {
			cf = []int{8}
		}
		s := &Schema{Version: format.MustVersion("oa"), ClusteringFixed: cf,
			Static:  []Column{{Name: "st", Fixed: -1}},
			Regular: []Column{{Name: "a", Fixed: 4}, {Name: "s", Fixed: 4, Complex: true}}}
		type count struct {
			rows, markers int64
			static        bool
			end           int64
		}
		walk := func(skim bool) ([]count, error) {
			d := NewDecoder(NewBytesSource(b, 0), s)
			var out []count
			var h PartitionHeader
			for i := 0; i < 50; i++ {
				if err := d.ReadPartitionHeader(&h); err != nil {
					if err == io.EOF {
						return out, nil
					}
					return out, err
				}
				var c count
				if skim {
					sk, err := d.SkimRest()
					if err != nil {
						return out, err
					}
					c = count{sk.Rows, sk.Markers, sk.HasStatic, d.Pos()}
				} else {
					for {
						u, err := d.Next(true)
						if err != nil {
							return out, err
						}
						if u == nil {
							break
						}
						switch u.Kind {
						case KindMarker:
							c.markers++
						case KindStaticRow:
							c.static = true
							c.rows++
						default:
							c.rows++
						}
					}
					c.end = d.Pos()
				}
				out = append(out, c)
			}
			return out, nil
		}
		a, errA := walk(false)
		c, errC := walk(true)
		if (errA == nil) != (errC == nil) {
			// The skim does not re-check what Next would reject inside a
			// plain row's body; it may only accept more, never less.
			if errC != nil {
				t.Fatalf("skim failed where Next succeeded: %v", errC)
			}
			return
		}
		if errA == nil && fmt.Sprint(a) != fmt.Sprint(c) {
			t.Fatalf("Next %v, skim %v", a, c)
		}
	})
}
