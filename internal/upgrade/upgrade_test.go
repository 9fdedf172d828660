package upgrade

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
	"github.com/sstabletool/sstabletool/verify"
)

var oa = format.MustVersion("oa")

// The whole data directory: nb and nc tables become oa in place under
// the next free ids (integers after the largest of the directory, its
// backups and snapshots; time-UUIDs where the table uses them), every
// original's data is live exactly once, new files keep the old mode,
// snapshots and backups are untouched, no log is left, and a rerun finds
// nothing to do.
func TestUpgradeDataDir(t *testing.T) {
	n := newNode(t)
	snaps := hashTree(t, filepath.Join(n.simple, "snapshots"))
	backups := hashTree(t, filepath.Join(n.simple, "backups"))
	p, err := NewPlan([]string{n.data}, oa)
	if err != nil {
		t.Fatal(err)
	}
	if p.Count != 5 {
		t.Fatalf("plan: %d sstables to rewrite, want 5: %+v", p.Count, p.Tables)
	}
	rep, err := Run(p, Options{Verify: true, Jobs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rewritten) != 5 || len(rep.Failed) != 0 || len(rep.Problems) != 0 {
		t.Fatalf("report: %+v", rep)
	}
	var sum int64
	for _, rw := range rep.Rewritten {
		if !rw.Verified {
			t.Errorf("%s not verified", rw.Source)
		}
		sum += rw.Before - rw.After
		d, _, err := format.ParseDescriptor(rw.Output)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Dir(rw.Output) {
		case n.simple:
			if d.Generation != "8" && d.Generation != "9" {
				t.Errorf("%s: generation %s, want 8 or 9 (backups hold 7)", rw.Output, d.Generation)
			}
			fi, _ := os.Stat(rw.Output)
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("%s: mode %v, want the source's 0640", rw.Output, fi.Mode())
			}
		case n.clust:
			if !format.IsUUIDGeneration(d.Generation) {
				t.Errorf("%s: not a UUID id in a table that uses them", rw.Output)
			}
		case n.counter:
			if d.Generation != "6" {
				t.Errorf("%s: generation %s, want 6", rw.Output, d.Generation)
			}
		}
		if r := verify.SSTable(rw.Output, sstable.Options{}, nil); !r.OK() {
			t.Errorf("%s: %v", rw.Output, r.Problems)
		}
	}
	if rep.Saved != sum || rep.Saved <= 0 {
		t.Errorf("saved %d, the rewrites sum to %d", rep.Saved, sum)
	}
	for _, dir := range n.tables() {
		if err := n.checkOneCopy(t, dir, oa, true); err != nil {
			t.Error(err)
		}
		logs, _ := txnlog.FindLogs(dir)
		if len(logs) != 0 {
			t.Errorf("%s: logs left: %v", dir, logs[0].Name)
		}
	}
	if got := hashTree(t, filepath.Join(n.simple, "snapshots")); !sameHashes(got, snaps) {
		t.Error("snapshots changed")
	}
	if got := hashTree(t, filepath.Join(n.simple, "backups")); !sameHashes(got, backups) {
		t.Error("backups changed")
	}
	p, err = NewPlan([]string{n.data}, oa)
	if err != nil || p.Count != 0 {
		t.Fatalf("rerun plans %d rewrites: %v", p.Count, err)
	}
}

func sameHashes(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A dry run changes nothing and predicts the bytes the real run saves.
func TestDryRunPredictsSavings(t *testing.T) {
	n := newNode(t)
	before := hashTree(t, n.data)
	p, _ := NewPlan([]string{n.data}, oa)
	dry, err := Run(p, Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := hashTree(t, n.data); !sameHashes(got, before) {
		t.Fatal("dry run changed the data directory")
	}
	p, _ = NewPlan([]string{n.data}, oa)
	real, err := Run(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if dry.Saved != real.Saved || dry.Before != real.Before || dry.After != real.After || len(dry.Rewritten) != 5 {
		t.Fatalf("dry run: %d -> %d (saves %d), real: %d -> %d (saves %d)", dry.Before, dry.After, dry.Saved, real.Before, real.After, real.Saved)
	}
}

// -k keeps the old sstables: both copies are live.
func TestKeepSource(t *testing.T) {
	n := newNode(t)
	p, _ := NewPlan([]string{n.counter}, oa)
	if _, err := Run(p, Options{KeepSource: true}); err != nil {
		t.Fatal(err)
	}
	if live := liveSSTables(t, n.counter); len(live) != 2 {
		t.Fatalf("live: %v", live)
	}
}

// Ownership follows the old sstable (only root can give files away).
func TestOwnership(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown")
	}
	n := newNode(t)
	ents, _ := os.ReadDir(n.counter)
	for _, e := range ents {
		os.Chown(filepath.Join(n.counter, e.Name()), 4321, 4322)
	}
	p, _ := NewPlan([]string{n.counter}, oa)
	rep, err := Run(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ = os.ReadDir(n.counter)
	for _, e := range ents {
		fi, _ := e.Info()
		st := fi.Sys().(*syscall.Stat_t)
		if !e.IsDir() && (st.Uid != 4321 || st.Gid != 4322) {
			t.Errorf("%s: owner %d:%d, want 4321:4322", e.Name(), st.Uid, st.Gid)
		}
	}
	if len(rep.Rewritten) != 1 {
		t.Fatal(rep)
	}
}

// A file changing in the directory while the upgrade runs stops it before
// the commit, with the old sstable untouched and no leftover.
func TestModifiedDuringRunRefuses(t *testing.T) {
	n := newNode(t)
	p, _ := NewPlan([]string{n.counter}, oa)
	once := false
	efs := errorfs.New(vfs.Default).Trace(func(op errorfs.Op) {
		if op.Kind == errorfs.Create && !once {
			once = true
			os.WriteFile(filepath.Join(n.counter, "nb-99-big-Data.db"), []byte("x"), 0o644)
		}
	})
	_, err := RunOn(efs, p, Options{})
	if !isLive(err) || !strings.Contains(err.Error(), "nb-99-big-Data.db appeared") {
		t.Fatalf("err = %v", err)
	}
	os.Remove(filepath.Join(n.counter, "nb-99-big-Data.db"))
	if err := n.checkOneCopy(t, n.counter, oa, false); err != nil {
		t.Fatal(err)
	}
	if logs, _ := txnlog.FindLogs(n.counter); len(logs) != 0 {
		t.Fatalf("log left: %s", logs[0].Name)
	}
}

// A commit log written well after the newest sstable means a live (or
// undrained) node: refused unless forced.
func TestCommitLogNewerRefuses(t *testing.T) {
	n := newNode(t)
	cl := filepath.Join(n.root, "commitlog")
	os.MkdirAll(cl, 0o755)
	seg := filepath.Join(cl, "CommitLog-7-1700000000000.log")
	os.WriteFile(seg, []byte("x"), 0o644)
	old := mustMtime(t, n.counter)
	os.Chtimes(seg, old.Add(10*time.Minute), old.Add(10*time.Minute))
	p, _ := NewPlan([]string{n.counter}, oa)
	if _, err := Run(p, Options{}); !isLive(err) || !strings.Contains(err.Error(), "CommitLog-7") {
		t.Fatalf("err = %v", err)
	}
	if _, err := Run(p, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
}

func mustMtime(t *testing.T, dir string) (newest time.Time) {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest
}

// With several jobs the rewrites start with the most work (Data.db's bytes
// and four times Index.db's, for a table of small partitions); with one,
// in the plan's order.
func TestStartOrder(t *testing.T) {
	dir := t.TempDir()
	var tasks []task
	var sizes []int64
	for i, sz := range []struct{ data, index int }{{100, 1}, {300, 10}, {200, 80}, {50, 0}} {
		data := filepath.Join(dir, fmt.Sprintf("nc-%d-big-Data.db", i+1))
		if err := os.WriteFile(data, make([]byte, sz.data), 0o644); err != nil {
			t.Fatal(err)
		}
		if sz.index > 0 {
			if err := os.WriteFile(strings.TrimSuffix(data, "Data.db")+"Index.db", make([]byte, sz.index), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tasks = append(tasks, task{src: data})
		sizes = append(sizes, int64(sz.data))
	}
	if got, want := startOrder(tasks, sizes, 1), []int{0, 1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("one job: %v, want %v", got, want)
	}
	// work: 104, 340, 520, 50
	if got, want := startOrder(tasks, sizes, 2), []int{2, 1, 0, 3}; !slices.Equal(got, want) {
		t.Errorf("two jobs: %v, want %v", got, want)
	}
}
