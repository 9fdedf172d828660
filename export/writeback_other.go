//go:build !linux

package export

import "github.com/sstabletool/sstabletool/internal/vfs"

// setDirect does nothing where direct I/O is not set with O_DIRECT: the
// file is written through the page cache.
func setDirect(vfs.File, bool) bool { return false }
