package split

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
)

// TestSplitInPlace splits a stopped node's sstable through the
// transaction log: the source is replaced by outputs of at most the size
// holding its partitions, snapshotted first (pre-split-<ms>, hard links);
// the small sstable beside it is left alone (no transaction); a second run
// finds nothing to split.
func TestSplitInPlace(t *testing.T) {
	n := newNode(t, 60)
	const size = 8 << 10
	o := InPlaceOptions{Options: Options{MaxSize: size, ResetLevel: true}, Op: txnlog.OpUnknown, Snapshot: "pre-split", Force: true}
	rep, err := InPlace([]string{n.data}, o)
	if err != nil || len(rep.Failed) != 0 {
		t.Fatalf("%v %+v", err, rep.Failed)
	}
	if len(rep.SSTables) != 2 || rep.Snapshot == "" || !strings.HasPrefix(rep.Snapshot, "pre-split-") {
		for _, r := range rep.SSTables {
			t.Logf("%+v", r)
		}
		t.Fatalf("report: %+v", rep)
	}
	var split *Result
	for _, r := range rep.SSTables {
		switch r.Source {
		case n.small:
			if !r.Unchanged || !strings.Contains(r.Why, "less than the split size") {
				t.Fatalf("the small sstable: %+v", r)
			}
		case n.big:
			split = r
		}
	}
	if split == nil || len(split.Outputs) < 3 || !split.Verified {
		t.Fatalf("the split: %+v", split)
	}
	done, err := n.checkOneCopy(t, size, nil)
	if err != nil || !done {
		t.Fatalf("after the split: done %v: %v", done, err)
	}
	n.noLogs(t, "after the split")
	snap := filepath.Join(n.table, format.SnapshotsDir, rep.Snapshot)
	if got := partitionLines(t, filepath.Join(snap, "nc-1-big-Data.db")); strings.Join(got, "\n") != strings.Join(n.lines[n.big], "\n") {
		t.Fatal("the snapshot does not hold the source")
	}
	if ents, _ := os.ReadDir(snap); len(ents) != 8 {
		t.Fatalf("the snapshot holds %d files", len(ents))
	}
	for _, out := range split.Outputs {
		s, err := sstable.Open(out.Data, sstable.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s.Stats().Stats.Level != 0 {
			t.Fatalf("%s: level %d", out.Data, s.Stats().Stats.Level)
		}
		s.Close()
	}
	again, err := InPlace([]string{n.data}, o)
	if err != nil || again.Snapshot != "" {
		t.Fatalf("a second run: %v, snapshot %q", err, again.Snapshot)
	}
	for _, r := range again.SSTables {
		if !r.Unchanged {
			t.Fatalf("a second run rewrote %s", r.Source)
		}
	}
}

// TestFilterInPlace drops one partition of the node's big sstable: only
// that sstable gets a transaction (the small one holds no such key); a
// filter that drops every partition of it removes it (REMOVE and COMMIT
// alone), its files kept in the snapshot.
func TestFilterInPlace(t *testing.T) {
	n := newNode(t, 40)
	keys, _, text := keysOf(t, n.big)
	victim := keys[7]
	o := InPlaceOptions{Options: Options{Filter: dropKeys(victim)}, Op: txnlog.OpCleanup, Snapshot: "pre-filter", Force: true}
	rep, err := InPlace([]string{n.big, n.small}, o)
	if err != nil || len(rep.Failed) != 0 || len(rep.SSTables) != 2 {
		t.Fatalf("%v %+v", err, rep)
	}
	for _, r := range rep.SSTables {
		if r.Source == n.small && (!r.Unchanged || !strings.Contains(r.Why, "drops none")) {
			t.Fatalf("the small sstable: %+v", r)
		}
		if r.Source == n.big && (r.Dropped != 1 || r.DroppedKeys[0].Key != text[7] || len(r.Outputs) != 1) {
			t.Fatalf("the filter: %+v", r)
		}
	}
	victimLine := n.lines[n.big][7]
	done, err := n.checkOneCopy(t, 0, func(l string) bool { return l != victimLine })
	if err != nil || !done {
		t.Fatalf("after the filter: done %v: %v", done, err)
	}
	n.noLogs(t, "after the filter")

	// Everything dropped: the sstable goes.
	live := n.live(t)
	var out string
	for _, p := range live {
		if p != n.small {
			out = p
		}
	}
	all := func(*sstable.SSTable) (*Filter, error) {
		return &Filter{Keep: &Selection{Keys: map[string]bool{"no such key": true}}}, nil
	}
	rep, err = InPlace([]string{out}, InPlaceOptions{Options: Options{Filter: all}, Op: txnlog.OpCleanup, Force: true})
	if err != nil || len(rep.SSTables) != 1 || len(rep.SSTables[0].Outputs) != 0 || rep.SSTables[0].Dropped != 39 {
		t.Fatalf("%v %+v", err, rep)
	}
	if live := n.live(t); len(live) != 1 || live[0] != n.small {
		t.Fatalf("live after dropping everything: %v", live)
	}
	n.noLogs(t, "after dropping everything")
}
