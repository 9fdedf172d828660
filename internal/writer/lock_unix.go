//go:build unix

package writer

import (
	"errors"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on dir for as long as the returned file
// stays open: while the owner runs, Recover leaves the directory alone; the
// kernel drops the lock when the owner dies, however it dies.
func lockDir(dir string) (*os.File, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// tryLockDir returns the locked directory, or nil when a live process
// holds its lock.
func tryLockDir(dir string) (*os.File, error) {
	f, err := lockDir(dir)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return nil, nil
	}
	return f, err
}
