package reader

import "github.com/sstabletool/sstabletool/corrupt"

// CorruptError is corrupt.Error: every decoder reports the one type.
type CorruptError = corrupt.Error

// Corrupt is corrupt.New.
func Corrupt(file, component string, off int64, expected string, err error) *CorruptError {
	return corrupt.New(file, component, off, expected, err)
}

// ErrChecksum is corrupt.ErrChecksum.
var ErrChecksum = corrupt.ErrChecksum
