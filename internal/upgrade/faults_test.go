package upgrade

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

// An fsync of a new sstable's file that fails (EIO) fails that rewrite
// alone: it is rolled back through Cassandra's transaction log (ABORT,
// its files deleted, the log deleted), every original stays live exactly
// once, and nothing of the new sstables is left.
func TestFsyncFailureRollsBack(t *testing.T) {
	n := newSmallNode(t)
	efs := errorfs.New(vfs.Default).FailSync(func(p string) bool {
		return strings.HasPrefix(filepath.Base(p), "oa-") && strings.HasSuffix(p, "-Data.db")
	})
	p, err := NewPlan([]string{n.data}, oa)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := RunOn(efs, p, Options{Jobs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rewritten) != 0 || len(rep.Failed) == 0 {
		t.Fatalf("rewritten %d, failed %d: every rewrite's Data.db fsync fails", len(rep.Rewritten), len(rep.Failed))
	}
	for _, f := range rep.Failed {
		if !strings.Contains(f.Reason, "fsync") || !strings.Contains(f.Reason, "input/output error") {
			t.Fatalf("%s failed with %q, want the fsync's error", f.Path, f.Reason)
		}
	}
	for _, dir := range n.tables() {
		if logs, _ := txnlog.FindLogs(dir); len(logs) != 0 {
			t.Fatalf("%s: the rollback left %s", dir, logs[0].Name)
		}
		if err := n.checkOneCopy(t, dir, oa, false); err != nil {
			t.Fatal(err)
		}
	}
}

// A failing fsync of the table directory, or a disk that fills at any
// point, may leave a transaction log the rollback could not finish: both
// ways out (Cassandra's startup cleanup, the next run of the tool) must
// still end with every original sstable live exactly once.
func TestDiskFaultsLeaveRecoverableState(t *testing.T) {
	_, total := opsOfFullRun(t)
	type fault struct {
		name string
		fs   func(n *node) *errorfs.FS
		want string
	}
	faults := []fault{{"fsync of the table directories", func(n *node) *errorfs.FS {
		return errorfs.New(vfs.Default).FailSync(func(p string) bool { return slices.Contains(n.tables(), p) })
	}, "input/output error"}}
	for _, at := range []int64{0, 100, total / 4, total / 2, total - 200} {
		faults = append(faults, fault{fmt.Sprintf("disk full after %d of %d bytes", at, total), func(*node) *errorfs.FS {
			return errorfs.New(vfs.Default).NoSpaceAfterBytes(at)
		}, "no space left on device"})
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			n := newSmallNode(t)
			p, _ := NewPlan([]string{n.data}, oa)
			rep, err := RunOn(f.fs(n), p, Options{Jobs: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Failed) == 0 {
				t.Fatalf("nothing failed: rewrote %d", len(rep.Rewritten))
			}
			for _, fl := range rep.Failed {
				if !strings.Contains(fl.Reason, f.want) {
					t.Fatalf("%s failed with %q, want %q", fl.Path, fl.Reason, f.want)
				}
			}
			checkAfterCrash(t, n, f.name)
		})
	}
}
