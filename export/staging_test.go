package export

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/internal/vfs"
	"github.com/sstabletool/sstabletool/internal/vfs/errorfs"
	"github.com/sstabletool/sstabletool/workload"
)

// failingRename is the disk with every rename failing with EIO: the last
// step of an export's file (errorfs has no such fault of its own).
type failingRename struct{ vfs.FS }

func (failingRename) Rename(from, to string) error { return syscall.EIO }

// stagingTable generates an sstable with enough cells for several batches.
func stagingTable(t *testing.T) *sstable.SSTable { return demoTable(t, 150) }

// demoTable generates the demo profile's sstable of the given partitions
// (80 records each in the cells dataset, on average).
func demoTable(t *testing.T, partitions int64) *sstable.SSTable {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = partitions
	res, err := generate.Generate(p, filepath.Join(t.TempDir(), "ks", "t-0123456789abcdef0123456789abcdef"), generate.Options{Version: oa.Version})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sstable.Open(res.DataPath, sstable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// visible lists what an engine would read under dir (every *.parquet
// file whose name does not start with a dot or an underscore), and what
// else is there.
func visible(t *testing.T, dir string) (parquet, other []string) {
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		n := info.Name()
		if strings.HasSuffix(n, ".parquet") && n[0] != '.' && n[0] != '_' {
			parquet = append(parquet, p)
		} else {
			other = append(other, p)
		}
		return nil
	})
	return parquet, other
}

// TestFullDiskLeavesNothing fills the disk at points all through an
// export: each fails with the error, and leaves no file at all (what it
// had committed before the fault stays, whole).
func TestFullDiskLeavesNothing(t *testing.T) {
	s := stagingTable(t)
	clean := t.TempDir()
	e, err := New(clean, Options{Node: "n", Datasets: Partitions | Cells})
	if err != nil {
		t.Fatal(err)
	}
	files, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	total := files[0].Bytes + files[1].Bytes
	for _, limit := range []int64{0, 100, total / 3, files[0].Bytes, total - 10} {
		dir := t.TempDir()
		fs := errorfs.New(vfs.Default).NoSpaceAfterBytes(limit)
		e, err := New(dir, Options{Node: "n", Datasets: Partitions | Cells, fs: fs})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.SSTable(s, Names{Keyspace: "ks", Table: "t"})
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("limit %d: error %v, want ENOSPC", limit, err)
		}
		parquet, other := visible(t, dir)
		if len(other) != 0 {
			t.Errorf("limit %d: left %v", limit, other)
		}
		for _, p := range parquet {
			if !strings.Contains(p, "/partitions/") {
				t.Errorf("limit %d: %s visible after the export failed", limit, p)
			}
		}
	}
}

// TestKilledExportLeavesOnlyHiddenFiles kills the export (the fault file
// system stops doing anything, as a SIGKILL would) at points all through
// it: what is left is hidden from engines but for the files it had
// committed, which are whole (parquet-go reads every row), and the next
// export of the same sstable replaces the leftovers.
func TestKilledExportLeavesOnlyHiddenFiles(t *testing.T) {
	s := stagingTable(t)
	e, err := New(t.TempDir(), Options{Node: "n"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	var total int64
	for _, f := range files {
		rows[f.Dataset] = f.Rows
		total += f.Bytes
	}
	for _, limit := range []int64{0, 5000, files[0].Bytes + 100, total / 2, total - 100} {
		dir := t.TempDir()
		fs := errorfs.New(vfs.Default).CrashAfterBytes(limit)
		e, err := New(dir, Options{Node: "n", fs: fs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"}); !errors.Is(err, errorfs.ErrCrashed) {
			t.Fatalf("limit %d: error %v, want the crash", limit, err)
		}
		parquet, other := visible(t, dir)
		for _, p := range parquet {
			dataset := strings.Split(strings.TrimPrefix(p, dir+"/"), "/")[0]
			if n := parquetRows(t, p); n != rows[dataset] {
				t.Errorf("limit %d: %s visible after the kill with %d rows of %d", limit, p, n, rows[dataset])
			}
		}
		for _, p := range other {
			if filepath.Base(p)[0] != '.' {
				t.Errorf("limit %d: leftover %s is not hidden", limit, p)
			}
		}
		e, err = New(dir, Options{Node: "n"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"}); err != nil {
			t.Fatal(err)
		}
		parquet, other = visible(t, dir)
		if len(parquet) != 3 || len(other) != 0 {
			t.Errorf("limit %d: after a clean export: %v, and %v", limit, parquet, other)
		}
	}
}

// TestFailedRenameLeavesNothing: the last step failing leaves no file.
func TestFailedRenameLeavesNothing(t *testing.T) {
	s := stagingTable(t)
	dir := t.TempDir()
	e, err := New(dir, Options{Node: "n", fs: failingRename{vfs.Default}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SSTable(s, Names{Keyspace: "ks", Table: "t"}); !errors.Is(err, syscall.EIO) {
		t.Fatalf("error %v, want EIO", err)
	}
	if parquet, other := visible(t, dir); len(parquet)+len(other) != 0 {
		t.Errorf("left %v %v", parquet, other)
	}
}

// parquetRows reads a file with parquet-go, the reader independent of
// the writer, and returns its row count, checking every row reads.
func parquetRows(t *testing.T, path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(f, fi.Size())
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := pq.NewReader(pf)
	defer r.Close()
	var n int64
	buf := make([]pq.Row, 256)
	for {
		k, err := r.ReadRows(buf)
		n += int64(k)
		if err == io.EOF {
			return n
		}
		if err != nil {
			t.Fatalf("%s: row %d: %v", path, n, err)
		}
	}
}

// TestSourceWritesWhatSSTableWrites: the seam a merged view will use,
// Exporter.Source, given an sstable as a Source, writes the very files
// Exporter.SSTable writes for its partitions and cells.
func TestSourceWritesWhatSSTableWrites(t *testing.T) {
	s := stagingTable(t)
	a, b := t.TempDir(), t.TempDir()
	ea, err := New(a, Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
	if err != nil {
		t.Fatal(err)
	}
	fa, err := ea.SSTable(s, Names{Keyspace: "ks", Table: "t"})
	if err != nil {
		t.Fatal(err)
	}
	eb, err := New(b, Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := eb.Source(SSTableSource(s), Names{Keyspace: "ks", Table: "t"}, s.Path("Data.db"))
	if err != nil {
		t.Fatal(err)
	}
	if len(fa) != 2 || len(fb) != 2 {
		t.Fatalf("files %v and %v", fa, fb)
	}
	for i := range fa {
		x, y := parquetRowsOf(t, fa[i].Path), parquetRowsOf(t, fb[i].Path)
		if len(x) == 0 || len(x) != len(y) {
			t.Fatalf("%s: %d rows through SSTable, %d through Source", fa[i].Dataset, len(x), len(y))
		}
		for j := range x {
			if !x[j].Equal(y[j]) {
				t.Fatalf("%s: row %d: %v through SSTable, %v through Source", fa[i].Dataset, j, x[j], y[j])
			}
		}
	}
}

// parquetRowsOf reads every row of a file with parquet-go, as values.
func parquetRowsOf(t *testing.T, path string) []pq.Row {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := pq.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	r := pq.NewReader(pf)
	defer r.Close()
	var out []pq.Row
	for {
		buf := make([]pq.Row, 64)
		k, err := r.ReadRows(buf)
		for _, row := range buf[:k] {
			out = append(out, row.Clone())
		}
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}
