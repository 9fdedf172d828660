package scrub

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/sstabletool/sstabletool/deletiontime"
	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/cqltype"
	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/format/stats"
	"github.com/sstabletool/sstabletool/format/token"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/writer"
)

const marshal = "org.apache.cassandra.db.marshal."

func i32(x int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(x)) }

// testRow is one row of the hand-written table ks.t (k int, c int, v
// text, PRIMARY KEY (k, c)).
type testRow struct {
	c  int32
	ts int64
	v  string
}

// writeTable writes ks.t with the project's writer, rows as given (in any
// order, duplicates too: the writer does not check clustering order, as
// Cassandra 2.x's did not, CASSANDRA-12127/12144), partitions in token
// order. It returns the Data.db path.
func writeTable(t *testing.T, parts map[int32][]testRow, compressed bool) string {
	t.Helper()
	v := format.MustVersion("oa")
	intType, err := cqltype.Parse(marshal + "Int32Type")
	if err != nil {
		t.Fatal(err)
	}
	h := &stats.Header{MinTimestamp: stats.TimestampEpoch, MinLocalDeletionTime: stats.DeletionTimeEpoch,
		KeyType:         stats.TypeName{Class: marshal + "Int32Type"},
		ClusteringTypes: []stats.TypeName{{Class: marshal + "Int32Type", Type: intType}},
		RegularColumns:  []stats.Column{{Name: []byte("v"), Type: stats.TypeName{Class: marshal + "UTF8Type"}}}}
	sch := &rows.Schema{Version: v, ClusteringFixed: []int{4}, Regular: []rows.Column{{Name: "v", Type: marshal + "UTF8Type", Fixed: -1}},
		MinTimestamp: h.MinTimestamp, MinLocalDeletionTime: h.MinLocalDeletionTime}
	cfg := writer.Config{Version: v, Header: h, Schema: sch, Partitioner: stats.Murmur3Partitioner, ExpectedKeys: int64(len(parts))}
	if compressed {
		cfg.Compression = &writer.Compression{Class: "LZ4Compressor", Options: map[string]string{}, ChunkLength: 4096, MaxCompressedLength: 1<<31 - 1}
	}
	dir := filepath.Join(fastTemp(t), "ks", "t-00000000000000000000000000000000")
	w, err := writer.NewSSTableWriter(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var keys [][]byte
	for k := range parts {
		keys = append(keys, i32(k))
	}
	p := token.Murmur3
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if p.CompareKeys(keys[j], keys[i]) < 0 {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	for _, key := range keys {
		if err := w.StartPartition(key, deletiontime.Live); err != nil {
			t.Fatal(err)
		}
		for _, r := range parts[int32(binary.BigEndian.Uint32(key))] {
			u := &rows.Unfiltered{Kind: rows.KindRow, Clustering: [][]byte{i32(r.c)},
				Liveness: rows.Liveness{HasTimestamp: true, Timestamp: r.ts},
				Cells:    []rows.Cell{{Column: 0, Timestamp: r.ts, Value: []byte(r.v)}}}
			if err := w.Add(u); err != nil {
				t.Fatal(err)
			}
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

// tableRows reads every row of ks.t sstables: key -> clustering -> (ts, v).
func tableRows(t *testing.T, paths ...string) map[int32]map[int32]testRow {
	t.Helper()
	out := map[int32]map[int32]testRow{}
	for _, p := range paths {
		s, err := sstable.Open(p, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
			k := int32(binary.BigEndian.Uint32(h.Key))
			if out[k] == nil {
				out[k] = map[int32]testRow{}
			}
			var prev []byte
			for {
				u, err := dec.Next(false)
				if err != nil || u == nil {
					return err
				}
				if prev != nil && bytes.Compare(u.Clustering[0], prev) <= 0 {
					t.Errorf("%s: partition %d: row %x after %x", p, k, u.Clustering[0], prev)
				}
				prev = append(prev[:0], u.Clustering[0]...)
				c := int32(binary.BigEndian.Uint32(u.Clustering[0]))
				r := testRow{c: c, ts: u.Cells[0].Timestamp, v: string(u.Cells[0].Value)}
				if old, ok := out[k][c]; ok && old.ts >= r.ts {
					continue // the other sstable's version wins on read
				}
				out[k][c] = r
			}
		})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Duplicate rows are merged as Rows.merge reconciles them (the newer cell
// wins), and the rows of a partition from the first one out of order are
// written, sorted, to a second sstable: read together, the two sstables
// hold every row once, in order, with the winning version.
func TestDuplicateAndOutOfOrderRows(t *testing.T) {
	ts := stats.TimestampEpoch + 1000
	parts := map[int32][]testRow{
		1: {{1, ts, "a"}, {2, ts, "b"}, {2, ts + 5, "b-newer"}, {3, ts, "c"}},
		2: {{1, ts, "a"}, {5, ts, "e"}, {3, ts, "c"}, {4, ts, "d"}, {4, ts - 5, "d-older"}, {9, ts, "i"}},
		3: {{7, ts, "g"}},
	}
	src := writeTable(t, parts, true)
	out := t.TempDir()
	rep, err := Scrub(src, out, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Rewritten || len(rep.Outputs) != 2 || !rep.Verified {
		t.Fatalf("report: rewritten %v, outputs %v, verified %v, notes %v", rep.Rewritten, rep.Outputs, rep.Verified, rep.Notes)
	}
	for _, o := range rep.Outputs {
		mustVerify(t, o)
	}
	var merged int
	for _, r := range rep.Rows {
		if r.Action == "merged" {
			merged++
		}
	}
	if merged != 2 || len(rep.OutOfOrder) != 1 || !rep.OutOfOrder[0].Rows || rep.OutOfOrder[0].Key != "2" {
		t.Errorf("report: %d merged (want 2), out of order %+v", merged, rep.OutOfOrder)
	}
	got := tableRows(t, rep.Outputs...)
	want := map[int32]map[int32]testRow{
		1: {1: {1, ts, "a"}, 2: {2, ts + 5, "b-newer"}, 3: {3, ts, "c"}},
		2: {1: {1, ts, "a"}, 3: {3, ts, "c"}, 4: {4, ts, "d"}, 5: {5, ts, "e"}, 9: {9, ts, "i"}},
		3: {7: {7, ts, "g"}},
	}
	for k, rs := range want {
		for c, r := range rs {
			if got[k][c] != r {
				t.Errorf("partition %d row %d: %+v, want %+v", k, c, got[k][c], r)
			}
		}
		if len(got[k]) != len(rs) {
			t.Errorf("partition %d: %d rows, want %d", k, len(got[k]), len(rs))
		}
	}
	// The second sstable holds partition 2's rows from 3 on, sorted.
	second := tableRows(t, rep.Outputs[1])
	if len(second) != 1 || len(second[2]) != 3 {
		t.Errorf("second sstable: %+v", second)
	}
}

// Two partitions swapped in Data.db: the one that then comes out of token
// order goes, whole, to the second sstable; nothing is lost.
func TestOutOfOrderPartitions(t *testing.T) {
	ts := stats.TimestampEpoch + 1000
	parts := map[int32][]testRow{}
	for k := int32(1); k <= 6; k++ {
		parts[k] = []testRow{{1, ts, "x"}, {2, ts, "y"}}
	}
	src := writeTable(t, parts, false)
	dir := fixtures.CopyTable(t, filepath.Dir(src))
	src = filepath.Join(dir, filepath.Base(src))
	ps := contents(t, src)
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	a, b := ps[2], ps[3]
	swapped := append([]byte(nil), data[:a.start]...)
	swapped = append(swapped, data[b.start:b.end]...)
	swapped = append(swapped, data[a.start:a.end]...)
	swapped = append(swapped, data[b.end:]...)
	if err := os.WriteFile(src, swapped, 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures.ResealCRC(t, src)
	fixtures.RewriteDigest(t, src)
	rep, err := Scrub(src, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PartitionsLost != 0 || rep.PartitionsKept != 6 || len(rep.OutOfOrder) != 1 || rep.OutOfOrder[0].Rows || len(rep.Outputs) != 2 {
		t.Fatalf("report: %d kept, %d lost, out of order %+v, outputs %v, notes %v", rep.PartitionsKept, rep.PartitionsLost, rep.OutOfOrder, rep.Outputs, rep.Notes)
	}
	got := tableRows(t, rep.Outputs...)
	if len(got) != 6 {
		t.Errorf("%d partitions read back, want 6", len(got))
	}
	for k := range parts {
		if len(got[k]) != 2 {
			t.Errorf("partition %d: %d rows", k, len(got[k]))
		}
	}
}

// Duplicate counter rows are merged by shard, as Rows.merge merges them
// (CounterContext.merge): two replicas' shards of one counter add up.
func TestDuplicateCounterRows(t *testing.T) {
	v := format.MustVersion("oa")
	h := &stats.Header{MinTimestamp: stats.TimestampEpoch, MinLocalDeletionTime: stats.DeletionTimeEpoch,
		KeyType:        stats.TypeName{Class: marshal + "Int32Type"},
		RegularColumns: []stats.Column{{Name: []byte("n"), Type: stats.TypeName{Class: marshal + "CounterColumnType"}}}}
	sch := &rows.Schema{Version: v, Regular: []rows.Column{{Name: "n", Type: marshal + "CounterColumnType", Fixed: -1, Counter: true}},
		MinTimestamp: h.MinTimestamp, MinLocalDeletionTime: h.MinLocalDeletionTime}
	dir := filepath.Join(fastTemp(t), "ks", "c-00000000000000000000000000000000")
	w, err := writer.NewSSTableWriter(dir, writer.Config{Version: v, Header: h, Schema: sch, Partitioner: stats.Murmur3Partitioner})
	if err != nil {
		t.Fatal(err)
	}
	ts := stats.TimestampEpoch + 1000
	if err := w.StartPartition(i32(1), deletiontime.Live); err != nil {
		t.Fatal(err)
	}
	for i, shard := range []struct {
		id    byte
		count int64
	}{{1, 5}, {2, 7}} {
		var id [16]byte
		id[0] = shard.id
		u := &rows.Unfiltered{Kind: rows.KindRow, Liveness: rows.Liveness{HasTimestamp: true, Timestamp: ts + int64(i)},
			Cells: []rows.Cell{{Column: 0, Timestamp: ts + int64(i), Value: cqltype.AppendGlobalCounter(nil, id, 1, shard.count)}}}
		if err := w.Add(u); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.EndPartition(); err != nil {
		t.Fatal(err)
	}
	src, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Scrub(src, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Outputs) != 1 || len(rep.Rows) != 1 || rep.Rows[0].Action != "merged" {
		t.Fatalf("report: outputs %v rows %+v", rep.Outputs, rep.Rows)
	}
	s, err := sstable.Open(rep.Outputs[0], sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var totals []int64
	err = s.EachPartition(func(h *rows.PartitionHeader, dec *rows.Decoder) error {
		for {
			u, err := dec.Next(false)
			if err != nil || u == nil {
				return err
			}
			n, err := cqltype.CounterTotal(u.Cells[0].Value)
			if err != nil {
				return err
			}
			totals = append(totals, n)
		}
	})
	if err != nil || len(totals) != 1 || totals[0] != 12 {
		t.Fatalf("merged counter: %v %v, want one row of 12", totals, err)
	}
}
