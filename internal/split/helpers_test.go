package split

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// tempRoot is a temporary directory in memory (/dev/shm) where there is
// one: the crash tests are about the order of changes, which the page
// cache keeps just the same, and fsyncs on a disk would dominate them.
func tempRoot(t testing.TB) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if dir, err := os.MkdirTemp("/dev/shm", "sstabletool-split-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(dir) })
			return dir
		}
	}
	return t.TempDir()
}

// genTable writes the demo profile's first partitions as an nc sstable of
// the given generation into dir, and returns its Data.db.
func genTable(t testing.TB, dir string, partitions int64, gen string, seed uint64) string {
	t.Helper()
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = partitions
	res, err := generate.Generate(p, dir, generate.Options{Version: format.MustVersion("nc"), Generation: gen, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return res.DataPath
}

// node is a stopped node's data directory: one table directory holding a
// generated sstable to rewrite (nc-1) and a small one (nc-2, other keys).
type node struct {
	data, table string
	big, small  string
	// lines are the dump lines of each sstable before the run.
	lines map[string][]string
}

func newNode(t testing.TB, partitions int64) *node {
	root := tempRoot(t)
	n := &node{data: filepath.Join(root, "data")}
	n.table = filepath.Join(n.data, "ks", "events-5bc52802de2535edaeab188eecebb090")
	n.big = genTable(t, n.table, partitions, "1", 0)
	n.small = genTable(t, n.table, 5, "2", 99)
	n.lines = map[string][]string{n.big: partitionLines(t, n.big), n.small: partitionLines(t, n.small)}
	return n
}

// live lists the table's live sstables (snapshots aside) by Data.db.
func (n *node) live(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, f := range format.Find([]string{n.table}, format.FindOptions{}).SSTables {
		if f.Err != nil {
			t.Fatalf("%s: %v", f.Path, f.Err)
		}
		out = append(out, f.Path)
	}
	slices.Sort(out)
	return out
}

// checkOneCopy says whether the table holds each original sstable's
// content exactly once: the original itself, or (done) outputs that
// together hold its partitions in order, each at most size (or one
// partition); never both, never a part. keep says which lines of the big
// sstable a rewrite writes (nil: all).
func (n *node) checkOneCopy(t testing.TB, size int64, keep func(line string) bool) (rewritten bool, err error) {
	t.Helper()
	live := n.live(t)
	others := slices.DeleteFunc(slices.Clone(live), func(p string) bool { return p == n.small })
	if !slices.Contains(live, n.small) {
		return false, fmt.Errorf("the small sstable %s is gone: %v", n.small, live)
	}
	if got := partitionLines(t, n.small); !slices.Equal(got, n.lines[n.small]) {
		return false, fmt.Errorf("the small sstable changed")
	}
	if len(others) == 1 && others[0] == n.big {
		return false, nil
	}
	if slices.Contains(others, n.big) {
		return false, fmt.Errorf("the source is live beside %v", others)
	}
	var want []string
	for _, l := range n.lines[n.big] {
		if keep == nil || keep(l) {
			want = append(want, l)
		}
	}
	slices.SortFunc(others, func(a, b string) int {
		da, _, _ := format.ParseDescriptor(a)
		db, _, _ := format.ParseDescriptor(b)
		return format.CompareGenerations(da.Generation, db.Generation)
	})
	var got []string
	for _, p := range others {
		lines := partitionLines(t, p)
		if fi, err := os.Stat(p); err == nil && size > 0 && fi.Size() > size && len(lines) > 1 {
			return true, fmt.Errorf("%s: %d bytes, over the size %d", p, fi.Size(), size)
		}
		got = append(got, lines...)
	}
	if !slices.Equal(got, want) {
		return true, fmt.Errorf("the outputs %v hold %d partitions, the source %d (or others)", others, len(got), len(want))
	}
	for _, p := range others {
		mustVerify(t, p)
	}
	return true, nil
}

// noLogs fails when a transaction log is left in the table directory.
func (n *node) noLogs(t testing.TB, trial string) {
	t.Helper()
	if logs, _ := txnlog.FindLogs(n.table); len(logs) != 0 {
		t.Fatalf("%s: %s is left", trial, logs[0].Name)
	}
	ents, _ := os.ReadDir(n.table)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), format.StagingDirPrefix) {
			t.Fatalf("%s: %s is left", trial, e.Name())
		}
	}
}
