//go:build !unix

package vfs

import "io/fs"

// fileOwner: no uid and gid here (Windows), so new files keep the
// process's owner.
func fileOwner(fs.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }
