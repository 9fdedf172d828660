package merge_test

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/merge"
)

// The dropped-column rule (DeserializationHelper.isDropped and
// isDroppedComplexDeletion on cassandra-4.0, 4.1 and 5.0; 3.x's
// SerializationHelper has the same two methods): while an sstable is
// read, a cell of a dropped column whose timestamp is at or before the
// drop time is not read, nor a collection deletion whose markedForDeleteAt
// is; a column added again keeps what was written after its drop.
//
// The table: pk text, ck int, st text static, v text, tags set<text>,
// two sstables written by the project's writer; v, tags and st were
// dropped at 2000 (and v added again: its later cells stay).

const dropAt = 2000

func droppedTable() testTable {
	set := m + "SetType(" + m + "UTF8Type)"
	h := &stats.Header{MinTimestamp: 1000, MinLocalDeletionTime: 100, KeyType: typeName(m + "UTF8Type"),
		ClusteringTypes: []stats.TypeName{typeName(m + "Int32Type")},
		StaticColumns:   []stats.Column{{Name: []byte("st"), Type: typeName(m + "UTF8Type")}},
		RegularColumns:  []stats.Column{{Name: []byte("v"), Type: typeName(m + "UTF8Type")}, {Name: []byte("tags"), Type: typeName(set)}}}
	tt := newTestTable(false)
	tt.header = h
	tt.schema.Static = []rows.Column{{Name: "st", Type: m + "UTF8Type", Fixed: -1}}
	return tt
}

func staticRow(ts int64, v string) *rows.Unfiltered {
	return &rows.Unfiltered{Kind: rows.KindStaticRow, Deletion: deletiontime.Live, Cells: []rows.Cell{{Column: 0, Timestamp: ts, Value: []byte(v)}}}
}

func tag(ts int64, v string) rows.Cell {
	return rows.Cell{Column: 1, Timestamp: ts, Path: []byte(v), Value: []byte{}}
}

func withLiveness(u *rows.Unfiltered, ts int64) *rows.Unfiltered {
	u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: ts}
	return u
}

func withTagsDeleted(u *rows.Unfiltered, ts int64) *rows.Unfiltered {
	u.ComplexDeletions = []rows.ComplexDeletion{{Column: 1, Deletion: dt(ts, 100)}}
	return u
}

// droppedHistory writes the two sstables.
func droppedHistory(t *testing.T) []string {
	tt := droppedTable()
	older := []*rows.Unfiltered{
		staticRow(1000, "s1"),                          // st@1000 <= 2000: dropped
		withLiveness(row(1, value(1000, "old")), 1000), // v@1000 dropped; the row lives on (liveness)
		row(2, value(dropAt, "edge")),                  // v@2000: at the drop, dropped; nothing left of the row
		withTagsDeleted(row(3, tag(1500, "x")), 1499),  // the set's deletion and cell, both before: dropped
	}
	newer := []*rows.Unfiltered{
		staticRow(3000, "s2"),                         // after the drop: kept
		row(1, value(2001, "new")),                    // after: kept (the column was added again)
		withTagsDeleted(row(3, tag(2500, "y")), 2499), // after: kept
		row(4, value(1999, "late")),                   // flushed later but written before the drop: dropped
	}
	return writeSSTables(t, tt, []testPartition{{key: "a", items: older}}, []testPartition{{key: "a", items: newer}})
}

// scanWithDrops is the merged partition "a" with the drops (or without).
func scanWithDrops(t *testing.T, paths []string, drops map[string]int64) []*rows.Unfiltered {
	t.Helper()
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	tbl.DropColumns(drops)
	o := merge.Options{Now: 1_000_000}
	sc, err := tbl.Scan(o)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sc.Next()
	if err != nil || p == nil {
		t.Fatalf("scan: %v, %v", p, err)
	}
	var out []*rows.Unfiltered
	for {
		u, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if u == nil {
			break
		}
		c := u.Clone()
		if c.Kind != rows.KindMarker && !c.HasDeletion() {
			c.Deletion = deletiontime.Live
		}
		out = append(out, c)
	}
	// Get reads the same through the index.
	g, err := tbl.Get([]byte("a"), o)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		u, err := g.Next()
		if err != nil {
			t.Fatal(err)
		}
		if u == nil {
			if i != len(out) {
				t.Errorf("Get gave %d unfiltereds, Scan %d", i, len(out))
			}
			break
		}
		if i >= len(out) || u.Kind != out[i].Kind || len(u.Cells) != len(out[i].Cells) {
			t.Errorf("Get's unfiltered %d differs from Scan's", i)
		}
	}
	return out
}

var drops = map[string]int64{"st": dropAt, "v": dropAt, "tags": dropAt}

// cellContent compares cells by what they hold (the decoder sets the
// empty-value flag the hand-made cells leave out).
var cellContent = cmp.Options{content, cmpopts.IgnoreFields(rows.Cell{}, "Flags")}

func TestDroppedColumnsNotRead(t *testing.T) {
	paths := droppedHistory(t)
	got := scanWithDrops(t, paths, drops)
	// By hand: what is left once every cell and collection deletion at or
	// before 2000 is taken out of each sstable, then merged.
	want := []*rows.Unfiltered{
		{Kind: rows.KindStaticRow, Deletion: deletiontime.Live, Cells: []rows.Cell{{Column: 0, Timestamp: 3000, Value: []byte("s2")}}},
		withLiveness(row(1, value(2001, "new")), 1000),
		withTagsDeleted(row(3, tag(2500, "y")), 2499),
	}
	if d := cmp.Diff(want, got, cellContent); d != "" {
		t.Errorf("merged with the drops (-by hand +merge):\n%s", d)
	}
	// Without the drops, the same sstables merge as before: every row.
	all := scanWithDrops(t, paths, nil)
	wantAll := []*rows.Unfiltered{
		{Kind: rows.KindStaticRow, Deletion: deletiontime.Live, Cells: []rows.Cell{{Column: 0, Timestamp: 3000, Value: []byte("s2")}}},
		withLiveness(row(1, value(2001, "new")), 1000),
		row(2, value(dropAt, "edge")),
		withTagsDeleted(row(3, tag(2500, "y")), 2499),
		row(4, value(1999, "late")),
	}
	if d := cmp.Diff(wantAll, all, cellContent); d != "" {
		t.Errorf("merged without drops (-by hand +merge):\n%s", d)
	}
	// A drop one microsecond later takes v@2001 too: the boundary is "at or
	// before".
	later := scanWithDrops(t, paths, map[string]int64{"v": 2001})
	for _, u := range later {
		for _, c := range u.Cells {
			if u.Kind == rows.KindRow && c.Column == 0 {
				t.Errorf("v@%d read after a drop at 2001", c.Timestamp)
			}
		}
	}
}

// One sstable passes through the merge as it is, but for its dropped
// cells: a row left with its liveness only says it holds no columns.
func TestDroppedColumnsOneSSTable(t *testing.T) {
	paths := droppedHistory(t)
	got := scanWithDrops(t, paths[:1], drops)
	want := []*rows.Unfiltered{withLiveness(row(1), 1000)}
	if d := cmp.Diff(want, got, cellContent); d != "" {
		t.Errorf("(-by hand +merge):\n%s", d)
	}
	if len(got) == 1 && (got[0].Flags&rows.FlagHasAllColumns != 0 || got[0].ColumnsPresent != 0) {
		t.Errorf("row 1's flags %#x, %d columns present", got[0].Flags, got[0].ColumnsPresent)
	}
}

// Explain says "dropped column" of each version the drops took out, and
// the reclaimed bytes are charged to them.
func TestDroppedColumnsExplained(t *testing.T) {
	paths := droppedHistory(t)
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	tbl.DropColumns(drops)
	e, err := tbl.Explain([]byte("a"), merge.Options{Now: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var dropped []string
	for _, en := range e.Entries {
		for _, v := range en.Versions {
			if v.Verdict == merge.DroppedColumn {
				dropped = append(dropped, v.What.String()+"@"+strconv.FormatInt(max(v.Cell.Timestamp, v.Deletion.MarkedForDeleteAt), 10)+" sstable "+strconv.Itoa(v.SSTable+1))
			}
		}
	}
	want := []string{"cell@1000 sstable 1", "cell@1000 sstable 1", "cell@2000 sstable 1", "cell@1500 sstable 1",
		"collection deletion@1499 sstable 1", "cell@1999 sstable 2"}
	if d := cmp.Diff(want, dropped); d != "" {
		t.Errorf("versions explained as dropped (-want +got):\n%s", d)
	}
	if merge.DroppedColumn.String() != "dropped column" {
		t.Errorf("verdict %q", merge.DroppedColumn)
	}

	sc, err := tbl.Scan(merge.Options{Now: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	var acc merge.Reclaim
	sc.Account(&acc)
	for {
		p, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			break
		}
		for u, err := p.Next(); u != nil || err != nil; u, err = p.Next() {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if acc.DroppedColumns <= 0 || acc.Reasons()[0].Reason != "cells of dropped columns (before the drop)" {
		t.Errorf("reclaimed: %+v", acc)
	}
}
