//go:build !linux

package export

import "github.com/sstabletool/sstabletool/internal/vfs"

// startWriteback does nothing where the system has no sync_file_range:
// the fsync at the end writes the whole file.
func startWriteback(vfs.File, int64, int64) {}
