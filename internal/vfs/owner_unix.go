//go:build unix

package vfs

import (
	"io/fs"
	"syscall"
)

// fileOwner is the owner of the file fi describes, where the system has
// one (ok false elsewhere).
func fileOwner(fi fs.FileInfo) (uid, gid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}
