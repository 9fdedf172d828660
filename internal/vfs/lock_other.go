//go:build !unix

package vfs

import (
	"errors"
	"io"
)

// lockDir: without flock a dead owner cannot be told from a live one.
func lockDir(string) (io.Closer, error) { return nil, errors.ErrUnsupported }
