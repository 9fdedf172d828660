package export

import (
	"golang.org/x/sys/unix"

	"github.com/sstabletool/sstabletool/internal/vfs"
)

// startWriteback asks the kernel to start writing bytes [off, off+n) of
// f to the disk without waiting for it (sync_file_range, WRITE only):
// the disk writes the file while the export goes on, and the fsync at
// the commit has little left to wait for (copying a 0.6 GB cells file
// with dd took 0.24 s, and 0.33 s with its fsync). It changes nothing
// of what is written, nor of the commit's fsync, which stays what makes
// the file durable; so its error is of no use and dropped. A file that is
// not the operating system's (a test's fault-injecting one) is left alone.
func startWriteback(f vfs.File, off, n int64) {
	if fd, ok := fdOf(f); ok {
		_ = unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}
}

// fdOf is f's descriptor, if it is the operating system's file.
func fdOf(f vfs.File) (uintptr, bool) {
	if fd, ok := f.(interface{ Fd() uintptr }); ok {
		return fd.Fd(), true
	}
	return 0, false
}

// setDirect turns direct I/O on or off for f (fcntl F_SETFL, O_DIRECT),
// reporting whether it did. A file system without direct I/O (tmpfs)
// refuses it, and a file that is not the operating system's has no
// descriptor: both stay as they are.
func setDirect(f vfs.File, on bool) bool {
	fd, ok := fdOf(f)
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
