package tablefiles

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/internal/fixtures"
	"github.com/sstabletool/sstabletool/internal/format/txnlog"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
)

// table is a table directory holding two copies of a real sstable: nb-1
// (the compaction's input) and nb-2 (its output), and the prefixes a log
// names them by.
type table struct {
	dir        string
	old, new   string // record paths: <dir>/nb-1-big-, <dir>/nb-2-big-
	oldN, newN int    // file counts
}

func newTable(t *testing.T) *table {
	src := fixtures.Table(t, "nb", "legacy_nb_simple")
	dir := filepath.Join(t.TempDir(), "ks", "t-0f3e4a70c67c11eeb4a4d93dc8a1f6a2")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, _ = filepath.EvalSymlinks(dir)
	tb := &table{dir: dir, old: filepath.Join(dir, "nb-1-big-"), new: filepath.Join(dir, "nb-2-big-")}
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		d, comp, err := format.ParseDescriptor(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		for _, gen := range []string{"1", "2"} {
			d.Dir, d.Generation = dir, gen
			if err := os.WriteFile(d.Path(comp), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		tb.oldN++
	}
	tb.newN = tb.oldN
	return tb
}

// removeRecord is the REMOVE record Cassandra writes for nb-1 as it is now.
func (tb *table) removeRecord(t *testing.T) txnlog.Record {
	var newest int64
	n := 0
	ents, _ := os.ReadDir(tb.dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "nb-1-big-") {
			fi, _ := e.Info()
			newest = max(newest, txnlog.JavaModTime(fi))
			n++
		}
	}
	return txnlog.NewRecord(txnlog.Remove, tb.old, newest, n)
}

func (tb *table) log(t *testing.T, recs ...txnlog.Record) string {
	var b strings.Builder
	for _, r := range recs {
		b.WriteString(r.Raw + "\n")
	}
	p := filepath.Join(tb.dir, "nb_txn_compaction_6bb5d6a0-c67c-11ee-b4a4-d93dc8a1f6a2.log")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// kinds is the listing as "name kind" lines.
func kinds(t *testing.T, files []File) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		out[filepath.Base(f.Path)] = f.Kind.String()
	}
	return out
}

func want(tb *table, old, new string, log bool) map[string]string {
	out := map[string]string{}
	ents, _ := os.ReadDir(tb.dir)
	for _, e := range ents {
		switch n := e.Name(); {
		case strings.HasPrefix(n, "nb-1-"):
			out[n] = old
		case strings.HasPrefix(n, "nb-2-"):
			out[n] = new
		case log:
			out[n] = "txn log"
		}
	}
	return out
}

func TestList(t *testing.T) {
	add := func(tb *table) txnlog.Record { return txnlog.NewRecord(txnlog.Add, tb.new, 0, tb.newN) }
	commit := txnlog.NewRecord(txnlog.Commit, "", 0, 0)
	abort := txnlog.NewRecord(txnlog.Abort, "", 0, 0)
	cases := []struct {
		name     string
		log      func(*table, *testing.T) []txnlog.Record
		old, new string
	}{
		{"no log", nil, "final", "final"},
		{"unfinished: the output is temporary", func(tb *table, t *testing.T) []txnlog.Record {
			return []txnlog.Record{add(tb), tb.removeRecord(t)}
		}, "final", "temporary"},
		{"committed: the input is temporary", func(tb *table, t *testing.T) []txnlog.Record {
			return []txnlog.Record{add(tb), tb.removeRecord(t), commit}
		}, "temporary", "final"},
		{"aborted: the output is temporary", func(tb *table, t *testing.T) []txnlog.Record {
			return []txnlog.Record{add(tb), tb.removeRecord(t), abort}
		}, "final", "temporary"},
		{"a COMMIT cut short: unfinished", func(tb *table, t *testing.T) []txnlog.Record {
			c := commit
			c.Raw = c.Raw[:len(c.Raw)-3]
			return []txnlog.Record{add(tb), tb.removeRecord(t), c}
		}, "final", "temporary"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := newTable(t)
			if c.log != nil {
				tb.log(t, c.log(tb, t)...)
			}
			files, err := List(tb.dir)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want(tb, c.old, c.new, c.log != nil), kinds(t, files)); d != "" {
				t.Fatalf("kinds (-want +got):\n%s", d)
			}
			for i, f := range files {
				if i > 0 && files[i-1].Path >= f.Path {
					t.Fatalf("not sorted: %s before %s", files[i-1].Path, f.Path)
				}
				if f.Kind == Temporary && (f.Log == "" || f.Why == "") {
					t.Fatalf("%s: temporary without its log", f.Path)
				}
			}
		})
	}
}

func TestListRefuses(t *testing.T) {
	t.Run("unfinished with an input file gone", func(t *testing.T) {
		tb := newTable(t)
		// The oldest file goes first, as Cassandra deletes them: the REMOVE
		// record still verifies.
		old := mtime(t, tb.old+"TOC.txt").AddDate(0, 0, -1)
		os.Chtimes(tb.old+"Data.db", old, old)
		tb.log(t, txnlog.NewRecord(txnlog.Add, tb.new, 0, tb.newN), tb.removeRecord(t))
		os.Remove(tb.old + "Data.db")
		_, err := List(tb.dir)
		var le *ListError
		if !errors.As(err, &le) || !strings.Contains(le.Problem, "inconsistent disk state") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("bad checksum before the last record", func(t *testing.T) {
		tb := newTable(t)
		a := txnlog.NewRecord(txnlog.Add, tb.new, 0, tb.newN)
		a.Raw = strings.Replace(a.Raw, "][", "][9", 1)
		tb.log(t, a, txnlog.NewRecord(txnlog.Commit, "", 0, 0))
		_, err := List(tb.dir)
		var le *ListError
		if !errors.As(err, &le) || !strings.Contains(le.Problem, "Invalid checksum") {
			t.Fatalf("err = %v", err)
		}
	})
}

func mtime(t *testing.T, p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// Cleanup deletes an unfinished compaction's output and its log, every
// deletion and directory fsync through the vfs, and leaves the input.
func TestCleanup(t *testing.T) {
	tb := newTable(t)
	logPath := tb.log(t, txnlog.NewRecord(txnlog.Add, tb.new, 0, tb.newN), tb.removeRecord(t))
	var ops []errorfs.Op
	efs := errorfs.New(vfs.Default).Trace(func(op errorfs.Op) { ops = append(ops, op) })
	out, err := Cleanup(efs, []string{tb.dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || len(out[0].Deleted) != tb.newN {
		t.Fatalf("outcome %+v", out)
	}
	files, err := List(tb.dir)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want(tb, "final", "final", false), kinds(t, files)); d != "" {
		t.Fatalf("after cleanup (-want +got):\n%s", d)
	}
	if _, err := os.Stat(logPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("log left")
	}
	removes, syncs := 0, 0
	for _, op := range ops {
		switch op.Kind {
		case errorfs.Remove:
			removes++
		case errorfs.SyncDir:
			syncs++
		}
	}
	if removes != tb.newN+1 || syncs != 3 {
		t.Fatalf("%d removes and %d directory fsyncs through the vfs, want %d and 3: %v", removes, syncs, tb.newN+1, ops)
	}
}
