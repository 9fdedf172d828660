package export

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// createStaged creates the file a Parquet file is written to before its
// rename into place, through the project's one file-system seam. A run
// killed midway may have left it: it is removed first (the seam's Create
// refuses a name that exists), so the next export of the same sstable
// overwrites it.
func createStaged(fsys vfs.FS, tmp string) (vfs.File, error) {
	if err := fsys.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return fsys.Create(tmp, 0o644)
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
