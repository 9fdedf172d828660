package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// export --merge is held, file by file, to three things it shares no
// code with: dump --merge (the merged view's cells, entry for entry), the
// partitions --json of the sstable convert --merge writes of the same
// view (the partitions' counts, as partitions counts a real sstable), and
// each merged sstable's own export (every record's sstable column names
// an sstable that holds it). The merge engine itself is held to
// Cassandra's reconciliation rules, applied by hand to per-sstable dumps,
// in merge's tests.

// mergedTable is a table directory of several sstables and the times to
// merge it at.
type mergedTable struct {
	name string
	dir  string
	nows []mergeTime
	// counters: the merge combines counter shards from several sstables,
	// so some records come from no one sstable.
	counters bool
}

type mergeTime struct {
	now   int64
	purge bool
}

func (m mergeTime) flags() []string {
	f := []string{"--now", strconv.FormatInt(m.now, 10)}
	if m.purge {
		f = append(f, "--purge", "--gc-grace", "86400")
	}
	return f
}

// generatedHistory writes a flush history of n sstables of profile into
// a <keyspace>/<table>-<id> directory.
func generatedHistory(t *testing.T, profile string, n int, seed uint64, partitions int64) (string, int64) {
	p, err := workload.ParseProfile([]byte(profile), "history")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions, p.Seed = partitions, seed
	dir := filepath.Join(t.TempDir(), "ks", "hist-0123456789abcdef0123456789abcdef")
	res, err := generate.GenerateHistory(p, dir, generate.HistoryOptions{SSTables: n})
	if err != nil {
		t.Fatal(err)
	}
	return dir, res.Now
}

func TestExportMergeMatchesMergedView(t *testing.T) {
	hist, now := generatedHistory(t, generate.HistoryProfile, 4, 3, 60)
	prefix := strings.Replace(generate.HistoryProfile, "clustering: [{name: seq, type: int}]",
		"clustering: [{name: seq, type: int}, {name: tag, type: text}]", 1)
	prefix = strings.Replace(prefix, "delete_range: 0.03", "delete_range: 0.1", 1)
	ranges, rnow := generatedHistory(t, prefix, 3, 6, 40)
	counters, cnow := generatedHistory(t, generate.CounterHistoryProfile, 3, 2, 40)
	tables := []mergedTable{
		{name: "history", dir: hist, nows: []mergeTime{{now, false}, {now + 30*86400, true}}},
		{name: "ranges", dir: ranges, nows: []mergeTime{{rnow, false}, {rnow, true}}},
		{name: "counters", dir: counters, nows: []mergeTime{{cnow, false}}, counters: true},
		{name: "realworld", dir: filepath.Join(fixtures.Dir(t), "realworld", "cassandra", "node-3.11", "system_schema", "types-5a8b1ca866023f77a0459273d308917a"),
			nows: []mergeTime{{1703358890, false}}},
	}
	for _, tb := range tables {
		for _, at := range tb.nows {
			t.Run(fmt.Sprintf("%s/now=%d,purge=%v", tb.name, at.now, at.purge), func(t *testing.T) {
				checkMergedExport(t, tb, at)
			})
		}
	}
}

func checkMergedExport(t *testing.T, tb mergedTable, at mergeTime) {
	sstables, err := filepath.Glob(filepath.Join(tb.dir, "*-Data.db"))
	if err != nil || len(sstables) < 2 {
		t.Fatalf("%s: want several sstables, found %v (%v)", tb.dir, sstables, err)
	}
	out := t.TempDir()
	code, _, errOut := runCommand(append([]string{"export", "--merge", "--out", out, "--node", "n1"}, append(at.flags(), tb.dir)...)...)
	if code != 0 {
		t.Fatalf("export --merge: exit %d: %s", code, errOut)
	}
	ks, table := exportTableNames(t, sstables[0])
	var parts []pqPartition
	var cells []pqCell
	var metas []pqSSTable
	var names []string
	for _, f := range listParquet(t, out) {
		rel, _ := filepath.Rel(out, f)
		dataset, _, _ := strings.Cut(rel, string(filepath.Separator))
		dir := filepath.Join(dataset, "keyspace="+ks, "table="+table)
		switch dataset {
		case "partitions", "cells":
			if want := filepath.Join(dir, "part-n1-merged.parquet"); rel != want {
				t.Errorf("file %s, want %s", rel, want)
			}
			if dataset == "partitions" {
				parts = readParquet[pqPartition](t, f, dataset)
			} else {
				cells = readParquet[pqCell](t, f, dataset)
			}
		case "sstables":
			rows := readParquet[pqSSTable](t, f, dataset)
			if len(rows) != 1 || rel != filepath.Join(dir, "part-n1-"+rows[0].SSTable+".parquet") {
				t.Fatalf("%s: %d rows", rel, len(rows))
			}
			metas = append(metas, rows[0])
			names = append(names, rows[0].SSTable)
		default:
			t.Fatalf("file %s outside the datasets", rel)
		}
	}
	var want []string
	for _, p := range sstables {
		want = append(want, sstableName(p))
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("sstables/ rows %v, want one per sstable merged %v", names, want)
	}
	for _, m := range metas {
		if m.Partitions != nil || m.Rows != nil || m.Cells != nil || m.Tombstones != nil {
			t.Errorf("%s: sstables/ totals %v %v %v %v: a merged export scans no one sstable", m.SSTable, m.Partitions, m.Rows, m.Cells, m.Tombstones)
		}
	}
	if len(parts) == 0 || len(cells) == 0 {
		t.Fatalf("%d partitions and %d cells exported", len(parts), len(cells))
	}

	code, dumpOut, errOut := runCommand(append(append([]string{"dump", "--merge", "-t", "-l"}, at.flags()...), tb.dir)...)
	if code != 0 {
		t.Fatalf("dump --merge: exit %d: %s", code, errOut)
	}
	checkCells(t, dumpOut, parts, cells, true)
	checkMergedPartitions(t, tb, at, parts, cells)
	checkProvenance(t, tb, at, sstables, cells)
}

// sstableName is the sstable column's name of p: nc-1-big.
func sstableName(p string) string {
	return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(p), "Data.db"), "-")
}

// checkMergedPartitions holds partitions/ to partitions --json of the
// sstable convert --merge writes of the same merged view, and its sums to
// the cells/ records.
func checkMergedPartitions(t *testing.T, tb mergedTable, at mergeTime, parts []pqPartition, cells []pqCell) {
	conv := t.TempDir()
	code, _, errOut := runCommand(append(append([]string{"convert", "--merge", "--to", "oa", "--out", conv}, at.flags()...), tb.dir)...)
	if code != 0 {
		t.Fatalf("convert --merge: exit %d: %s", code, errOut)
	}
	compacted, err := filepath.Glob(filepath.Join(conv, "*-Data.db"))
	if err != nil || len(compacted) != 1 {
		t.Fatalf("convert --merge wrote %v (%v)", compacted, err)
	}
	code, out, errOut := runCommand("partitions", "--json", "-u", strconv.FormatInt(at.now, 10), compacted[0])
	if code != 0 {
		t.Fatalf("partitions: exit %d: %s", code, errOut)
	}
	var want []partitionRow
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatal(err)
	}
	if len(parts) != len(want) {
		t.Fatalf("%d partitions exported, the compacted sstable holds %d", len(parts), len(want))
	}
	cellsOf := map[string]int64{}
	for _, c := range cells {
		if c.Entry == "cell" && c.Kind == "row" {
			cellsOf[c.Key]++
		}
	}
	for i, w := range want {
		g := parts[i]
		if g.Node != "n1" || g.SSTable != "merged" || g.Version != "merged" || g.Offset != nil || g.Size != nil {
			t.Fatalf("partition %d: node %q sstable %q version %q offset %v size %v", i, g.Node, g.SSTable, g.Version, g.Offset, g.Size)
		}
		w.SSTable, w.Offset, w.Size = "", 0, 0
		got := partitionRow{Key: g.Key, Token: g.TokenText, Rows: g.Rows, Cells: g.Cells,
			Tombstones: g.Tombstones, Deletion: g.Deletion, RowTombstones: g.RowTombstones, RangeTombstones: g.RangeTombstones,
			ComplexTombstones: g.ComplexTombstones, CellTombstones: g.CellTombstones, RowTTLExpired: g.RowTTLExpired, CellTTLExpired: g.CellTTLExpired}
		if d := cmp.Diff(w, got, cmp.AllowUnexported(partitionRow{}), cmp.FilterPath(func(p cmp.Path) bool {
			return p.Last().String() == ".tok" || p.Last().String() == ".partitioner"
		}, cmp.Ignore())); d != "" {
			t.Fatalf("partition %d (-partitions --json of convert --merge +export --merge):\n%s", i, d)
		}
		if g.Cells != cellsOf[g.Key] {
			// The static row's cells are not the partition's (as
			// partitions counts them).
			t.Fatalf("partition %d: %d cells, cells/ holds %d of its rows", i, g.Cells, cellsOf[g.Key])
		}
	}
}

// recordID is what a record is in its own sstable, whatever the merge did
// to it: its place and timestamp, and (withValue) a live cell's value. A
// merge changes no record, except that a cell whose TTL has run out by
// --now becomes a tombstone (of the same timestamp: its TTL and expiry
// are then compared with its value) and that the merge
// cuts and joins range tombstones (whose deletions are the sstables').
func recordID(c *pqCell, withValue bool) string {
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return strconv.Quote(*p)
	}
	var clust []string
	for _, v := range c.Clustering {
		clust = append(clust, s(v))
	}
	switch c.Kind {
	case "range_tombstone_bound", "range_tombstone_boundary":
		return fmt.Sprintf("%s marker deleted at %d, %d", c.Key, c.Timestamp, *c.LocalDeletionTime)
	}
	id := fmt.Sprintf("%s %s [%s] %s %s %s", c.Key, c.Kind, strings.Join(clust, ","), c.Entry, s(c.Column), s(c.Path))
	if c.Entry == "liveness" {
		return id // the row holds a record of the same liveness
	}
	id += " @" + strconv.FormatInt(c.Timestamp, 10)
	if withValue {
		id += " = " + s(c.Value)
		if c.TTL != nil {
			id += fmt.Sprintf(" ttl %d expiring at %d", *c.TTL, *c.ExpiresAt)
		}
	}
	return id
}

// checkProvenance holds each merged record's sstable column to the
// sstable's own export: the sstable it names holds the record.
func checkProvenance(t *testing.T, tb mergedTable, at mergeTime, sstables []string, cells []pqCell) {
	held := map[string]map[string]bool{}
	for _, p := range sstables {
		out := t.TempDir()
		code, _, errOut := runCommand("export", "--out", out, "--node", "n1", "--datasets", "cells", "-u", strconv.FormatInt(at.now, 10), p)
		if code != 0 {
			t.Fatalf("export %s: exit %d: %s", p, code, errOut)
		}
		files := listParquet(t, out)
		if len(files) != 1 {
			t.Fatalf("export %s --datasets cells: %v", p, files)
		}
		ids := map[string]bool{}
		for _, c := range readParquet[pqCell](t, files[0], "cells") {
			ids[recordID(&c, false)] = true
			ids[recordID(&c, true)] = true
			if c.Kind == "row" || c.Kind == "static" {
				// Any record of a row is the row's liveness's too.
				liveness := c
				liveness.Entry, liveness.Column, liveness.Path = "liveness", nil, nil
				ids[recordID(&liveness, false)] = true
			}
		}
		held[sstableName(p)] = ids
	}
	var combined int
	for i := range cells {
		c := &cells[i]
		ids, ok := held[c.SSTable]
		if !ok {
			if c.SSTable == "merged" && tb.counters && c.Entry == "cell" {
				combined++ // shards of several sstables: no one holds it
				continue
			}
			t.Fatalf("cell %d: sstable %q, not one of those merged (%v)", i, c.SSTable, sstables)
		}
		live := c.Value != nil && !tb.counters
		if !ids[recordID(c, live)] {
			t.Fatalf("cell %d: %s, which sstable %s does not hold", i, recordID(c, live), c.SSTable)
		}
	}
	if tb.counters && combined == 0 {
		t.Errorf("no counter combined from several sstables: the history should update counters in several")
	}
}
