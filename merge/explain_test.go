package merge_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/sstabletool/sstabletool/format/rows"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/merge"
)

// Explain agrees with the scan, position by position, and every part of
// what the merge writes is a version explain calls the winner, from the
// sstable provenance names. A generated history exercises every reason a
// version can lose for.
func TestExplainAgreesWithScan(t *testing.T) {
	paths, now := history(t, generate.HistoryProfile, 4, 3, 150)
	tbl, err := merge.Open(paths, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Close()
	seen := map[merge.Reason]int{}
	for _, o := range []merge.Options{{Now: now, GCGraceSeconds: merge.DefaultGCGraceSeconds}, {Now: now + 86400, Purge: true, GCGraceSeconds: 2 * 86400}} {
		type item struct {
			u    *rows.Unfiltered
			prov merge.Provenance
		}
		scanned := map[string][]item{}
		var keys [][]byte
		sc, err := tbl.Scan(o)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := sc.Next()
			if err != nil {
				t.Fatal(err)
			}
			if p == nil {
				break
			}
			k := string(p.Header.Key)
			keys = append(keys, bytes.Clone(p.Header.Key))
			for {
				u, err := p.Next()
				if err != nil {
					t.Fatal(err)
				}
				if u == nil {
					break
				}
				scanned[k] = append(scanned[k], item{u.Clone(), p.Provenance().Clone()})
			}
		}
		for _, k := range keys {
			e, err := tbl.Explain(k, o)
			if err != nil {
				t.Fatal(err)
			}
			var written []item
			for i := range e.Entries {
				en := &e.Entries[i]
				for _, v := range en.Versions {
					seen[v.Verdict]++
					if v.Verdict != merge.Won && v.Verdict != merge.CounterMerged && v.Verdict != merge.Expired && v.Verdict != merge.Purged && v.By == nil {
						t.Errorf("key %x: %s lost (%s) to nothing", k, v.What, v.Verdict)
					}
				}
				for _, v := range e.PartitionDeletion {
					seen[v.Verdict]++
				}
				if en.Output == nil {
					continue
				}
				written = append(written, item{en.Output, *en.Provenance})
				checkWinners(t, k, en)
			}
			got := scanned[string(k)]
			if len(got) != len(written) {
				t.Fatalf("key %x: the scan writes %d unfiltereds, explain %d", k, len(got), len(written))
			}
			for i := range got {
				if diff := cmp.Diff(got[i].u, written[i].u, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("key %x unfiltered %d: scan and explain differ:\n%s", k, i, diff)
				}
				if diff := cmp.Diff(got[i].prov, written[i].prov, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("key %x unfiltered %d: provenance differs:\n%s", k, i, diff)
				}
			}
		}
	}
	for _, r := range []merge.Reason{merge.Won, merge.OlderTimestamp, merge.TieTombstoneWins, merge.TieExpiringWins,
		merge.TieLaterDeletionTime, merge.TieGreaterValue, merge.ShadowedByPartitionDeletion, merge.ShadowedByRangeDeletion,
		merge.ShadowedByRowDeletion, merge.ShadowedByComplexDeletion, merge.Expired, merge.Purged} {
		if seen[r] == 0 {
			t.Errorf("no version of the history %s", r)
		}
	}
	t.Logf("verdicts: %v", seen)
}

// checkWinners: each cell, liveness and deletion written has a winning
// version in the sstable its provenance names.
func checkWinners(t *testing.T, key []byte, en *merge.Entry) {
	t.Helper()
	u, p := en.Output, en.Provenance
	find := func(src int, what merge.What, match func(v *merge.Version) bool) {
		for i := range en.Versions {
			v := &en.Versions[i]
			if v.What == what && (src == merge.Merged || v.SSTable == src) && (v.Verdict == merge.Won || v.Verdict == merge.Expired || v.Verdict == merge.CounterMerged) && match(v) {
				return
			}
		}
		t.Errorf("key %x %s: the output's %s from sstable %d is no winning version of it: %+v", key, en.Kind, what, src, en.Versions)
	}
	if u.Kind == rows.KindMarker {
		return
	}
	if u.Liveness.HasTimestamp {
		find(p.Liveness, merge.WhatLiveness, func(v *merge.Version) bool { return v.Liveness == u.Liveness })
	}
	if u.HasDeletion() {
		find(p.Deletion, merge.WhatRowDeletion, func(v *merge.Version) bool { return v.Deletion == u.Deletion })
	}
	for i := range u.Cells {
		c := &u.Cells[i]
		find(p.Cells[i], merge.WhatCell, func(v *merge.Version) bool {
			return v.Cell.Column == c.Column && bytes.Equal(v.Cell.Path, c.Path) && v.Cell.Timestamp == c.Timestamp
		})
	}
	for i, cd := range u.ComplexDeletions {
		find(p.ComplexDeletions[i], merge.WhatComplexDeletion, func(v *merge.Version) bool { return v.Column == cd.Column && v.Deletion == cd.Deletion })
	}
}
