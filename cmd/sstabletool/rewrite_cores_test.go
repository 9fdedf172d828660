package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/sstabletool/sstabletool/format"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

// TestRewritesSameBytesWhateverTheCores: every rewrite (convert to oa and
// to da, verified or not, convert --merge, scrub --out, upgrade in place)
// writes the same bytes, every file of its output, on 1, 2 and 8 cores:
// the work spread over the cores (chunks compressed side by side, Data.db
// walked in segments, sstables rewritten at once) never shows in what is
// written. The tables are generated ones of several segments (a single
// sstable, and a history of three for the merge).
func TestRewritesSameBytesWhateverTheCores(t *testing.T) {
	if testing.Short() {
		t.Skip("rewrites a 4 MB table 18 times")
	}
	dir := t.TempDir()
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 900 // about 4 MB of Data.db: four segments
	table := filepath.Join(dir, "data", "ks", "t-0f3d9d20c67b11eeb4a4d93dc8a1f6a2")
	res, err := generate.Generate(p, table, generate.Options{Version: format.MustVersion("nc")})
	if err != nil {
		t.Fatal(err)
	}
	src := res.DataPath
	// A second table, for upgrade to rewrite two sstables at once.
	p.Partitions = 300
	if _, err := generate.Generate(p, filepath.Join(dir, "data", "ks", "u-2f3d9d20c67b11eeb4a4d93dc8a1f6a2"), generate.Options{Version: format.MustVersion("nb"), Seed: 7}); err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(src, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n := s.Data().Length()
	s.Close()
	if n < 3*sstable.DefaultSegmentSize {
		t.Fatalf("%d bytes of Data.db: too few for several segments", n)
	}
	hist, err := workload.ParseProfile([]byte(generate.HistoryProfile), "history")
	if err != nil {
		t.Fatal(err)
	}
	hist.Partitions = 600
	history := filepath.Join(dir, "history", "ks", "h-1f3d9d20c67b11eeb4a4d93dc8a1f6a2")
	if _, err := generate.GenerateHistory(hist, history, generate.HistoryOptions{Options: generate.Options{Version: format.MustVersion("nc")}, SSTables: 3}); err != nil {
		t.Fatal(err)
	}

	rewrites := []struct {
		name string
		// args writes into out (upgrade: rewrites out, a copy of the
		// table's data directory, in place).
		args    func(out string) []string
		inPlace bool
	}{
		{"convert-oa", func(out string) []string { return []string{"convert", "--to", "oa", "--out", out, src} }, false},
		{"convert-oa-unverified", func(out string) []string {
			return []string{"convert", "--to", "oa", "--verify=false", "--out", out, src}
		}, false},
		{"convert-da", func(out string) []string { return []string{"convert", "--to", "da", "--out", out, src} }, false},
		{"convert-merge", func(out string) []string {
			return []string{"convert", "--merge", "--to", "oa", "--now", "2024-05-01T00:00:00Z", "--out", out, history}
		}, false},
		{"scrub", func(out string) []string { return []string{"scrub", "--out", out, src} }, false},
		{"upgrade", func(out string) []string { return []string{"upgrade", "--force", out} }, true},
	}
	for _, rw := range rewrites {
		t.Run(rw.name, func(t *testing.T) {
			var want map[string][]byte
			for _, procs := range []int{1, 2, 8} {
				out := filepath.Join(dir, rw.name, strings.Repeat("x", procs))
				if rw.inPlace {
					copyTree(t, filepath.Join(dir, "data"), out)
				}
				args := rw.args(out)
				func() {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					var o, e bytes.Buffer
					savedOut, savedErr := stdout, stderr
					stdout, stderr = &o, &e
					defer func() { stdout, stderr = savedOut, savedErr }()
					if code := run(append([]string{"sstabletool"}, args...)); code != exitOK {
						t.Fatalf("GOMAXPROCS=%d sstabletool %v: exit %d: %s%s", procs, args, code, o.String(), e.String())
					}
				}()
				got := treeBytes(t, out)
				written := 0
				for name := range got {
					if strings.HasSuffix(name, "-Data.db") && (!rw.inPlace || strings.Contains(filepath.Base(name), "oa-")) {
						written++
					}
				}
				if written == 0 || rw.inPlace && written != 2 {
					t.Fatalf("sstabletool %v wrote %d sstables", args, written)
				}
				if want == nil {
					want = got
					continue
				}
				for name, b := range want {
					if g, ok := got[name]; !ok {
						t.Errorf("GOMAXPROCS=%d: %s missing", procs, name)
					} else if !bytes.Equal(g, b) {
						t.Errorf("GOMAXPROCS=%d: %s differs from one core's", procs, name)
					}
				}
				for name := range got {
					if _, ok := want[name]; !ok {
						t.Errorf("GOMAXPROCS=%d: %s written, not on one core", procs, name)
					}
				}
			}
		})
	}
}

// treeBytes is every file under root by its path below root.
func treeBytes(t *testing.T, root string) map[string][]byte {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies the directory tree src to dst.
func copyTree(t *testing.T, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
