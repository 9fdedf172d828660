//go:build !linux

package export

import "github.com/sstabletool/sstabletool/internal/vfs"

// startWriteback does nothing where the system has no sync_file_range:
// the fsync at the end writes the whole file.
func startWriteback(vfs.File, int64, int64) {}

// setDirect does nothing where direct I/O is not set with O_DIRECT: the
// file is written through the page cache.
func setDirect(vfs.File, bool) bool { return false }
