package export

import (
	"golang.org/x/sys/unix"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// setDirect turns direct I/O on or off for f (fcntl F_SETFL, O_DIRECT),
// reporting whether it did. A file system without direct I/O (tmpfs)
// refuses it, and a file that is not the operating system's has no
// descriptor: both stay as they are.
func setDirect(f vfs.File, on bool) bool {
	fd, ok := vfs.Fd(f)
	if !ok {
		return false
	}
	flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	if on {
		flags |= unix.O_DIRECT
	} else {
		flags &^= unix.O_DIRECT
	}
	_, err = unix.FcntlInt(fd, unix.F_SETFL, flags)
	return err == nil
}
