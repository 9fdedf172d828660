// Package testtables writes small sstables with the project's own writer
// for tests that need a shape no real fixture has (each is checked by the
// reader in the test that uses it).
package testtables

import (
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/writer"
)

// The UDT of the realworld legacy_udt_in_collection table (ks.ut: a int,
// b int), as Cassandra 3.x spells it in a serialization header.
const UDTClass = "org.apache.cassandra.db.marshal.UserType(ks,7574,61:org.apache.cassandra.db.marshal.Int32Type,62:org.apache.cassandra.db.marshal.Int32Type)"

// UDTTable writes an mc sstable whose header records column "info" as
// UDTClass (the same string for frozen and non-frozen UDTs in 3.x) beside
// a text column "name". frozen says how the cells are really stored.
// Without withInfo the table has no "name" column and no row carries
// "info" (rows hold only their liveness), so nothing in Data.db tells a
// frozen column from a non-frozen one.
func UDTTable(t testing.TB, frozen, withInfo bool) string {
	t.Helper()
	v := format.MustVersion("mc")
	const m = "org.apache.cassandra.db.marshal."
	h := &stats.Header{MinTimestamp: stats.TimestampEpoch, MinLocalDeletionTime: stats.DeletionTimeEpoch,
		KeyType:        stats.TypeName{Class: m + "Int32Type"},
		RegularColumns: []stats.Column{{Name: []byte("info"), Type: stats.TypeName{Class: UDTClass}}, {Name: []byte("name"), Type: stats.TypeName{Class: m + "UTF8Type"}}}}
	// How 3.x wrote the cells: with the schema's types, so a frozen UDT is
	// a simple column (and sorts before... nothing here: both simple).
	cols := []rows.Column{{Name: "info", Type: UDTClass, Fixed: -1, Complex: !frozen}, {Name: "name", Type: m + "UTF8Type", Fixed: -1}}
	if !withInfo {
		h.RegularColumns, cols = h.RegularColumns[:1], cols[:1]
	}
	rows.SortColumns(cols)
	sch := &rows.Schema{Version: v, Regular: cols, MinTimestamp: h.MinTimestamp, MinLocalDeletionTime: h.MinLocalDeletionTime}
	info, name := 0, 1
	if cols[0].Name == "name" {
		info, name = 1, 0
	}
	if !withInfo {
		name = -1
	}
	dir := filepath.Join(t.TempDir(), "ks", "t-00000000000000000000000000000000")
	w, err := writer.NewSSTableWriter(dir, writer.Config{Version: v, Header: h, Schema: sch, Partitioner: stats.Murmur3Partitioner})
	if err != nil {
		t.Fatal(err)
	}
	i32 := func(x int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(x)) }
	keys := [][]byte{i32(1), i32(2), i32(3)}
	// Murmur3 order of the three keys.
	p := sortByToken(t, keys)
	for n, key := range p {
		if err := w.StartPartition(key, deletiontime.Live); err != nil {
			t.Fatal(err)
		}
		u := &rows.Unfiltered{Kind: rows.KindRow, Liveness: rows.Liveness{HasTimestamp: true, Timestamp: stats.TimestampEpoch + 10}}
		a, b := int32(n), int32(10*n)
		switch {
		case !withInfo:
		case frozen:
			var val []byte
			val = append(append(val, i32(4)...), i32(a)...)
			val = append(append(val, i32(4)...), i32(b)...)
			u.Cells = append(u.Cells, rows.Cell{Column: info, Flags: rows.CellFlagUseRowTS, Timestamp: u.Liveness.Timestamp, Value: val})
		default:
			// One cell per field, the path is the field's position as a short.
			u.Cells = append(u.Cells, rows.Cell{Column: info, Flags: rows.CellFlagUseRowTS, Timestamp: u.Liveness.Timestamp, Path: []byte{0, 0}, Value: i32(a)})
			u.Cells = append(u.Cells, rows.Cell{Column: info, Flags: rows.CellFlagUseRowTS, Timestamp: u.Liveness.Timestamp, Path: []byte{0, 1}, Value: i32(b)})
		}
		if name >= 0 {
			u.Cells = append(u.Cells, rows.Cell{Column: name, Flags: rows.CellFlagUseRowTS, Timestamp: u.Liveness.Timestamp, Value: []byte("row")})
		}
		if name >= 0 && info > name {
			u.Cells[0], u.Cells[len(u.Cells)-1] = u.Cells[len(u.Cells)-1], u.Cells[0]
		}
		u.ColumnsPresent = 2
		u.Flags = rows.FlagHasTimestamp | rows.FlagHasAllColumns
		if !withInfo {
			u.ColumnsPresent = 0
			u.Flags = rows.FlagHasTimestamp
		}
		if err := w.Add(u); err != nil {
			t.Fatal(err)
		}
		if err := w.EndPartition(); err != nil {
			t.Fatal(err)
		}
	}
	out, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sortByToken(t testing.TB, keys [][]byte) [][]byte {
	t.Helper()
	p, err := token.ForName(stats.Murmur3Partitioner)
	if err != nil {
		t.Fatal(err)
	}
	out := append([][]byte(nil), keys...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if p.CompareKeys(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
