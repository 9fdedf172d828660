//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
)

// lockDir takes an exclusive flock on dir for as long as the returned file
// stays open; the kernel drops it when the owner dies, however it dies.
func lockDir(dir string) (io.Closer, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w", dir, ErrLocked)
		}
		return nil, err
	}
	return f, nil
}
