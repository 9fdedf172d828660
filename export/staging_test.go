package export

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sstabletool/sstabletool/format/oa"
	"github.com/sstabletool/sstabletool/format/sstable"
	"github.com/sstabletool/sstabletool/internal/generate"
	"github.com/sstabletool/sstabletool/workload"
)

var errCrashed = errors.New("injected crash")

// faultFS is the disk with one fault injected once limit bytes have been
// written: every further write fails with ENOSPC (a full disk), or with
// crash the process is as good as killed: nothing more is written,
// renamed, synced or removed.
type faultFS struct {
	osFS
	mu           sync.Mutex
	limit, bytes int64
	crash        bool
	failRename   bool
	hit          bool
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (fs *faultFS) dead() bool { fs.mu.Lock(); defer fs.mu.Unlock(); return fs.crash && fs.hit }

func (fs *faultFS) Create(path string) (outFile, error) {
	if fs.dead() {
		return nil, errCrashed
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return &faultFile{f, fs}, nil
}

func (f *faultFile) Write(p []byte) (int, error) {
	fs := f.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.hit || fs.bytes+int64(len(p)) > fs.limit {
		fs.hit = true
		if fs.crash {
			return 0, errCrashed
		}
		return 0, syscall.ENOSPC
	}
	fs.bytes += int64(len(p))
	return f.File.Write(p)
}

func (f *faultFile) Sync() error {
	if f.fs.dead() {
		return errCrashed
	}
	return f.File.Sync()
}

func (fs *faultFS) Rename(from, to string) error {
	if fs.dead() {
		return errCrashed
	}
	if fs.failRename {
		return syscall.EIO
	}
	return os.Rename(from, to)
}

func (fs *faultFS) Remove(path string) error {
	if fs.dead() {
		return errCrashed
	}
	return os.Remove(path)
}

func (fs *faultFS) MkdirAll(dir string) error {
	if fs.dead() {
		return errCrashed
	}
	return os.MkdirAll(dir, 0o755)
}

// stagingTable generates an sstable with enough cells for several batches.
func stagingTable(t *testing.T) *sstable.SSTable {
	p, err := workload.ParseProfile([]byte(generate.DemoProfile), "demo")
	if err != nil {
		t.Fatal(err)
	}
	p.Partitions = 150
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
	files, err := e.SSTable(s, Names{"ks", "t"})
	if err != nil {
		t.Fatal(err)
	}
	total := files[0].Bytes + files[1].Bytes
	for _, limit := range []int64{0, 100, total / 3, files[0].Bytes, total - 10} {
		dir := t.TempDir()
		fs := &faultFS{limit: limit}
		e, err := New(dir, Options{Node: "n", Datasets: Partitions | Cells, fs: fs})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.SSTable(s, Names{"ks", "t"})
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
	files, err := e.SSTable(s, Names{"ks", "t"})
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
		fs := &faultFS{limit: limit, crash: true}
		e, err := New(dir, Options{Node: "n", fs: fs})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.SSTable(s, Names{"ks", "t"}); !errors.Is(err, errCrashed) {
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
		if _, err := e.SSTable(s, Names{"ks", "t"}); err != nil {
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
	e, err := New(dir, Options{Node: "n", fs: &faultFS{limit: 1 << 40, failRename: true}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.SSTable(s, Names{"ks", "t"}); !errors.Is(err, syscall.EIO) {
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
	fa, err := ea.SSTable(s, Names{"ks", "t"})
	if err != nil {
		t.Fatal(err)
	}
	eb, err := New(b, Options{Node: "n", Datasets: Partitions | Cells, Now: 1700000000})
	if err != nil {
		t.Fatal(err)
	}
	fb, err := eb.Source(SSTableSource(s), Names{"ks", "t"})
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
