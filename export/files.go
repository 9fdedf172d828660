package export

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// fileSystem is every file operation the export makes, in this one place,
// so that the project's file-system seam (staging, fsync, rename, remove,
// with fault injection for tests) can stand in for it.
type fileSystem interface {
	MkdirAll(dir string) error
	// Create creates (or truncates) a file for writing.
	Create(path string) (outFile, error)
	Rename(from, to string) error
	Remove(path string) error
	// SyncDir makes a directory's entries (a rename into it) durable.
	SyncDir(dir string) error
}

// outFile is a file being written.
type outFile interface {
	io.Writer
	Sync() error
	Close() error
}

// osFS is fileSystem on the real disk.
type osFS struct{}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) Create(path string) (outFile, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
}

func (osFS) Rename(from, to string) error { return os.Rename(from, to) }
func (osFS) Remove(path string) error     { return os.Remove(path) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// stagingName is where a file is written before it is renamed into
// place: in the same directory (one file system, so the rename is
// atomic), under a name that starts with a dot and does not end in
// .parquet, which Spark, Trino, Hive and DuckDB's *.parquet globs all
// pass over. A run killed midway leaves at most this hidden file, which
// the next export of the same sstable overwrites.
func stagingName(final string) string {
	return filepath.Join(filepath.Dir(final), "."+filepath.Base(final)+".inprogress")
}

// hivePathValue escapes a partition value for a key=value directory name
// as Hive does (FileUtils.escapePathName), so that a directory name
// holding a slash, an equals sign or a control character still names
// one partition.
func hivePathValue(v string) string {
	if v == "" {
		return "__HIVE_DEFAULT_PARTITION__"
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			b.WriteByte('%')
			b.WriteByte("0123456789ABCDEF"[c>>4])
			b.WriteByte("0123456789ABCDEF"[c&15])
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}
