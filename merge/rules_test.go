package merge_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/clustering"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/writer"
	"github.com/sstabletool/sstabletool/merge"
)

// Small sstables the project's writer makes, for the rules a generated
// history does not reach (shadowable deletions, counter shard kinds,
// boundaries of two sstables' ranges).
//
// The table: pk text, ck int, v text, tags set<text> (columns 0 and 1),
// or with counter, pk text, ck int, n counter.

const m = "org.apache.cassandra.db.marshal."

type testTable struct {
	header *stats.Header
	schema *rows.Schema
}

func typeName(class string) stats.TypeName {
	t, err := cqltype.Parse(class)
	if err != nil {
		panic(err)
	}
	return stats.TypeName{Class: class, Type: t}
}

func newTestTable(counter bool) testTable {
	h := &stats.Header{MinTimestamp: 1000, MinLocalDeletionTime: 100, KeyType: typeName(m + "UTF8Type"),
		ClusteringTypes: []stats.TypeName{typeName(m + "Int32Type")}}
	sch := &rows.Schema{Version: format.MustVersion("oa"), ClusteringFixed: []int{4}, MinTimestamp: 1000, MinLocalDeletionTime: 100}
	if counter {
		h.RegularColumns = []stats.Column{{Name: []byte("n"), Type: typeName(m + "CounterColumnType")}}
		sch.Regular = []rows.Column{{Name: "n", Type: m + "CounterColumnType", Fixed: -1, Counter: true}}
	} else {
		h.RegularColumns = []stats.Column{{Name: []byte("v"), Type: typeName(m + "UTF8Type")}, {Name: []byte("tags"), Type: typeName(m + "SetType(" + m + "UTF8Type)")}}
		sch.Regular = []rows.Column{{Name: "v", Type: m + "UTF8Type", Fixed: -1}, {Name: "tags", Type: m + "SetType(" + m + "UTF8Type)", Fixed: -1, Complex: true}}
	}
	return testTable{h, sch}
}

type testPartition struct {
	key   string
	del   deletiontime.DeletionTime
	items []*rows.Unfiltered
}

// writeSSTables writes one sstable per list of partitions into a table
// directory and returns their paths, oldest first.
func writeSSTables(t *testing.T, tt testTable, sstables ...[]testPartition) []string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ks", "t-0123456789abcdef0123456789abcdef")
	var paths []string
	for g, parts := range sstables {
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: tt.schema.Version, Generation: strconv.Itoa(g + 1),
			Header: tt.header, Schema: tt.schema, Partitioner: stats.Murmur3Partitioner})
		if err != nil {
			t.Fatal(err)
		}
		parts = slices.Clone(parts)
		slices.SortFunc(parts, func(a, b testPartition) int { return token.Murmur3.CompareKeys([]byte(a.key), []byte(b.key)) })
		for _, p := range parts {
			d := p.del
			if d == (deletiontime.DeletionTime{}) {
				d = deletiontime.Live
			}
			if err := w.StartPartition([]byte(p.key), d); err != nil {
				t.Fatal(err)
			}
			for _, u := range p.items {
				if err := w.Add(u); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.EndPartition(); err != nil {
				t.Fatal(err)
			}
		}
		p, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

func ck(n int) [][]byte { return [][]byte{binary.BigEndian.AppendUint32(nil, uint32(n))} }

func dt(ts, ldt int64) deletiontime.DeletionTime {
	return deletiontime.DeletionTime{MarkedForDeleteAt: ts, LocalDeletionTime: ldt}
}

func row(n int, cells ...rows.Cell) *rows.Unfiltered {
	return &rows.Unfiltered{Kind: rows.KindRow, Clustering: ck(n), Deletion: deletiontime.Live, Cells: cells}
}

func value(ts int64, v string) rows.Cell {
	return rows.Cell{Column: 0, Timestamp: ts, Value: []byte(v)}
}

func marker(kind clustering.Kind, n int, d deletiontime.DeletionTime) *rows.Unfiltered {
	return &rows.Unfiltered{Kind: rows.KindMarker, Bound: clustering.Prefix{Kind: kind, Values: ck(n)}, Deletion: d}
}

// merged is what a scan writes: each partition's unfiltereds (copies).
func merged(t *testing.T, paths []string, o merge.Options) map[string][]*rows.Unfiltered {
	t.Helper()
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	if o.Now == 0 {
		o.Now = 1_000_000
	}
	sc, err := tbl.Scan(o)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*rows.Unfiltered{}
	for {
		p, err := sc.Next()
		if err != nil {
			t.Fatal(err)
		}
		if p == nil {
			return out
		}
		k := string(p.Header.Key)
		out[k] = []*rows.Unfiltered{}
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
				c.Deletion = deletiontime.Live // the decoder's two spellings of none
			}
			out[k] = append(out[k], c)
		}
	}
}

// content is what a merged unfiltered says, without the framing the
// merge does not decide (positions, sizes).
var content = cmp.Options{cmpopts.IgnoreFields(rows.Unfiltered{}, "Offset", "Size", "PrevSize", "Flags", "ExtFlags", "ColumnsPresent"),
	cmpopts.EquateEmpty()}

// A shadowable row deletion (views, before CASSANDRA-11500) is void once
// the row's liveness is newer: merged with such a version, the row's older
// cells come back. A regular deletion would shadow them.
func TestShadowableRowDeletion(t *testing.T) {
	tt := newTestTable(false)
	shadowable := row(1)
	shadowable.Deletion, shadowable.Shadowable = dt(5000, 200), true
	regular := row(1)
	regular.Deletion = dt(5000, 200)
	newer := row(1)
	newer.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: 6000}
	old := row(1, value(4000, "old"))
	paths := writeSSTables(t, tt, []testPartition{{key: "a", items: []*rows.Unfiltered{old}}, {key: "b", items: []*rows.Unfiltered{old}}},
		[]testPartition{{key: "a", items: []*rows.Unfiltered{shadowable}}, {key: "b", items: []*rows.Unfiltered{regular}}},
		[]testPartition{{key: "a", items: []*rows.Unfiltered{newer}}, {key: "b", items: []*rows.Unfiltered{newer}}})
	got := merged(t, paths, merge.Options{})
	want := row(1, value(4000, "old"))
	want.Liveness = newer.Liveness
	if diff := cmp.Diff([]*rows.Unfiltered{want}, got["a"], content); diff != "" {
		t.Errorf("shadowable deletion (-want +got):\n%s", diff)
	}
	want = row(1)
	want.Liveness, want.Deletion = newer.Liveness, regular.Deletion
	if diff := cmp.Diff([]*rows.Unfiltered{want}, got["b"], content); diff != "" {
		t.Errorf("regular deletion (-want +got):\n%s", diff)
	}
}

// Ranges of two sstables meeting at one clustering merge into a boundary
// when their deletions differ and into one range when they are the same;
// a range the partition deletion supersedes is not written.
func TestRangeTombstonesOfTwoSSTables(t *testing.T) {
	tt := newTestTable(false)
	a, b := dt(5000, 200), dt(6000, 300)
	paths := writeSSTables(t, tt,
		[]testPartition{
			{key: "differ", items: []*rows.Unfiltered{marker(clustering.InclStartBound, 1, a), marker(clustering.ExclEndBound, 5, a)}},
			{key: "same", items: []*rows.Unfiltered{marker(clustering.InclStartBound, 1, a), marker(clustering.ExclEndBound, 5, a)}},
			{key: "under", del: dt(7000, 400), items: []*rows.Unfiltered{}},
		},
		[]testPartition{
			{key: "differ", items: []*rows.Unfiltered{marker(clustering.InclStartBound, 5, b), marker(clustering.InclEndBound, 9, b)}},
			{key: "same", items: []*rows.Unfiltered{marker(clustering.InclStartBound, 5, a), marker(clustering.InclEndBound, 9, a)}},
			{key: "under", items: []*rows.Unfiltered{marker(clustering.InclStartBound, 1, b), marker(clustering.InclEndBound, 9, b), row(12, value(8000, "x"))}},
		})
	got := merged(t, paths, merge.Options{})
	boundary := &rows.Unfiltered{Kind: rows.KindMarker, Bound: clustering.Prefix{Kind: clustering.ExclEndInclStartBoundary, Values: ck(5)},
		EndDeletion: a, StartDeletion: b}
	for key, want := range map[string][]*rows.Unfiltered{
		"differ": {marker(clustering.InclStartBound, 1, a), boundary, marker(clustering.InclEndBound, 9, b)},
		"same":   {marker(clustering.InclStartBound, 1, a), marker(clustering.InclEndBound, 9, a)},
		"under":  {row(12, value(8000, "x"))},
	} {
		if diff := cmp.Diff(want, got[key], content); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
}

func counterCell(ts int64, ctx []byte) rows.Cell {
	return rows.Cell{Column: 0, Timestamp: ts, Value: ctx}
}

// counterCtx builds a context: each shard is id byte, clock, count, kind
// ('g'lobal, 'l'ocal, 'r'emote).
func counterCtx(shards ...[4]int64) []byte {
	var header, body []byte
	n := 0
	for i, s := range shards {
		switch s[3] {
		case 'g':
			header = binary.BigEndian.AppendUint16(header, uint16(int16(i-32768)))
			n++
		case 'l':
			header = binary.BigEndian.AppendUint16(header, uint16(i))
			n++
		}
		id := [16]byte{15: byte(s[0])}
		body = append(body, id[:]...)
		body = binary.BigEndian.AppendUint64(body, uint64(s[1]))
		body = binary.BigEndian.AppendUint64(body, uint64(s[2]))
	}
	return append(append(binary.BigEndian.AppendUint16(nil, uint16(n)), header...), body...)
}

// Counter cells merge by shard as CounterContext.merge does; a counter
// tombstone wins whatever the timestamps.
func TestCounterMergeRules(t *testing.T) {
	tt := newTestTable(true)
	cases := []struct {
		name   string
		a, b   rows.Cell
		want   rows.Cell
		source int // the merged cell's provenance
	}{
		{"global: higher clock", counterCell(2000, counterCtx([4]int64{1, 5, 50, 'g'})), counterCell(3000, counterCtx([4]int64{1, 4, 40, 'g'})),
			counterCell(3000, counterCtx([4]int64{1, 5, 50, 'g'})), merge.Merged},
		{"superset: the cell as it is", counterCell(3000, counterCtx([4]int64{1, 5, 50, 'g'}, [4]int64{2, 1, 1, 'g'})), counterCell(2000, counterCtx([4]int64{1, 4, 40, 'g'})),
			counterCell(3000, counterCtx([4]int64{1, 5, 50, 'g'}, [4]int64{2, 1, 1, 'g'})), 0},
		{"locals add up", counterCell(2000, counterCtx([4]int64{1, 1, 3, 'l'})), counterCell(2500, counterCtx([4]int64{1, 2, 4, 'l'})),
			counterCell(2500, counterCtx([4]int64{1, 3, 7, 'l'})), merge.Merged},
		{"global beats local", counterCell(2000, counterCtx([4]int64{1, 1, 3, 'g'})), counterCell(2500, counterCtx([4]int64{1, 9, 9, 'l'})),
			counterCell(2500, counterCtx([4]int64{1, 1, 3, 'g'})), merge.Merged},
		{"remote: higher clock, ids joined", counterCell(2000, counterCtx([4]int64{1, 7, 3, 'r'})), counterCell(2500, counterCtx([4]int64{1, 6, 9, 'r'}, [4]int64{3, 1, 2, 'g'})),
			counterCell(2500, counterCtx([4]int64{1, 7, 3, 'r'}, [4]int64{3, 1, 2, 'g'})), merge.Merged},
		{"tombstone wins", counterCell(9000, counterCtx([4]int64{1, 7, 3, 'g'})), rows.Cell{Timestamp: 1500, Flags: rows.CellFlagDeleted, LocalDeletionTime: 300, Value: []byte{}},
			rows.Cell{Timestamp: 1500, Flags: rows.CellFlagDeleted | rows.CellFlagEmptyValue, LocalDeletionTime: 300, Value: []byte{}}, 1},
	}
	for _, c := range cases {
		paths := writeSSTables(t, tt, []testPartition{{key: "k", items: []*rows.Unfiltered{row(1, c.a)}}}, []testPartition{{key: "k", items: []*rows.Unfiltered{row(1, c.b)}}})
		tbl, err := merge.Open(paths, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p, err := tbl.Get([]byte("k"), merge.Options{Now: 1_000_000})
		if err != nil || p == nil {
			t.Fatalf("%s: %v %v", c.name, p, err)
		}
		u, err := p.Next()
		if err != nil || u == nil {
			t.Fatalf("%s: %v %v", c.name, u, err)
		}
		if diff := cmp.Diff([]rows.Cell{c.want}, u.Cells, cmpopts.IgnoreFields(rows.Cell{}, "Flags"), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
		if got := p.Provenance().Cells[0]; got != c.source {
			t.Errorf("%s: provenance %d, want %d", c.name, got, c.source)
		}
		tbl.Close()
	}
}

// Two tables given together, columns of one name with two types, and a
// damaged sstable are each refused, the error naming the sstables.
func TestRefusals(t *testing.T) {
	tt := newTestTable(false)
	one := writeSSTables(t, tt, []testPartition{{key: "a", items: []*rows.Unfiltered{row(1, value(2000, "x"))}}})
	other := writeSSTables(t, tt, []testPartition{{key: "a", items: []*rows.Unfiltered{row(1, value(2000, "x"))}}})
	// other lives in a second table directory of the same name pattern.
	if _, err := merge.Open([]string{one[0], other[0]}, sstable.Options{}); err == nil || !containsAll(err.Error(), one[0], other[0], "two tables") {
		t.Errorf("two tables: %v", err)
	}
	bad := newTestTable(false)
	bad.header = &stats.Header{MinTimestamp: 1000, MinLocalDeletionTime: 100, KeyType: typeName(m + "UTF8Type"),
		ClusteringTypes: []stats.TypeName{typeName(m + "Int32Type")}, RegularColumns: []stats.Column{{Name: []byte("v"), Type: typeName(m + "Int32Type")}}}
	bad.schema = &rows.Schema{Version: tt.schema.Version, ClusteringFixed: []int{4}, MinTimestamp: 1000, MinLocalDeletionTime: 100,
		Regular: []rows.Column{{Name: "v", Type: m + "Int32Type", Fixed: 4}}}
	inDir := writeSSTables(t, tt, []testPartition{{key: "a", items: []*rows.Unfiltered{row(1, value(2000, "x"))}}},
		[]testPartition{{key: "b", items: []*rows.Unfiltered{row(1, value(2000, "y"))}}})
	dir := filepath.Dir(inDir[0])
	w, err := writer.NewSSTableWriter(dir, writer.Config{Version: tt.schema.Version, Generation: "3", Header: bad.header, Schema: bad.schema, Partitioner: stats.Murmur3Partitioner})
	if err != nil {
		t.Fatal(err)
	}
	w.StartPartition([]byte("c"), deletiontime.Live)
	w.Add(row(1, rows.Cell{Column: 0, Timestamp: 2000, Value: []byte{0, 0, 0, 1}}))
	w.EndPartition()
	third, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := merge.Open([]string{inDir[0], third}, sstable.Options{}); err == nil || !containsAll(err.Error(), inDir[0], third, "column v", "text", "int") {
		t.Errorf("incompatible headers: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// ScyllaDB's shadowable row deletion (its own extended flag, beside a
// regular deletion) follows ScyllaDB's row_tombstone: a newer row marker
// makes it void; an older one does not, and the deletion shadows it.
func TestScyllaShadowableDeletion(t *testing.T) {
	src := filepath.Join(fixtures.Dir(t), "realworld", "scylla", "3.x", "uncompressed", "write_shadowable_deletion")
	const shadowTS = 1540230874370065
	for _, c := range []struct {
		name string
		ts   int64
	}{{"newer liveness", shadowTS + 1}, {"older liveness", shadowTS - 1}} {
		dir := fixtures.CopyTable(t, src)
		base, err := sstable.Open(filepath.Join(dir, "mc-1-big-Data.db"), sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := writer.NewSSTableWriter(dir, writer.Config{Version: base.Version(), Generation: "2", Header: base.Stats().Header,
			Schema: base.Schema(), Partitioner: base.Partitioner().Name()})
		if err != nil {
			t.Fatal(err)
		}
		key := []byte{0, 0, 0, 0}
		w.StartPartition(key, deletiontime.Live)
		u := row(1)
		u.Liveness = rows.Liveness{HasTimestamp: true, Timestamp: c.ts}
		if err := w.Add(u); err != nil {
			t.Fatal(err)
		}
		w.EndPartition()
		second, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		base.Close()
		got := merged(t, []string{filepath.Join(dir, "mc-1-big-Data.db"), second}, merge.Options{})[string(key)]
		if len(got) != 1 {
			t.Fatalf("%s: %d rows", c.name, len(got))
		}
		r := got[0]
		switch c.name {
		case "newer liveness":
			if r.Liveness.Timestamp != c.ts || r.HasDeletion() || r.ExtFlags&rows.ExtFlagScyllaShadowable != 0 {
				t.Errorf("%s: %+v", c.name, r)
			}
		default:
			if r.Liveness.HasTimestamp || r.ExtFlags&rows.ExtFlagScyllaShadowable == 0 || r.ScyllaShadowable.MarkedForDeleteAt != shadowTS {
				t.Errorf("%s: %+v", c.name, r)
			}
		}
	}
}

// A damaged sstable in the set is an error that names it.
func TestDamagedSSTableNamed(t *testing.T) {
	paths, now := history(t, generate.HistoryProfile, 3, 1, 60)
	b, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(paths[1], b, 0o644); err != nil {
		t.Fatal(err)
	}
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		if !strings.Contains(err.Error(), paths[1]) {
			t.Fatalf("open: %v does not name %s", err, paths[1])
		}
		return
	}
	defer tbl.Close()
	sc, err := tbl.Scan(merge.Options{Now: now})
	for err == nil {
		var p *merge.Partition
		if p, err = sc.Next(); err != nil || p == nil {
			break
		}
		for {
			var u *rows.Unfiltered
			if u, err = p.Next(); err != nil || u == nil {
				break
			}
		}
	}
	if err == nil || !strings.Contains(err.Error(), paths[1]) {
		t.Fatalf("a damaged Data.db merged without an error naming it: %v", err)
	}
}
